import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { FileControlState } from '../../src/foundations/state/files/file-control-state.js';
import { describeCommitTrustStoreContract } from './contract/commit-trust-store-contract.js';
import { describeCountStoreContract } from './contract/count-store-contract.js';
import { describeHeldKillStoreContract } from './contract/held-kill-store-contract.js';
import { describeKeyStoreContract } from './contract/key-store-contract.js';
import { describePepperStoreContract } from './contract/pepper-store-contract.js';
import { describePushLogContract } from './contract/push-log-contract.js';
import { describeReplicaBatchLedgerContract } from './contract/replica-batch-ledger-contract.js';
import { describeSessionStoreContract } from './contract/session-store-contract.js';
import type { StateSubject } from './contract/state-subject.js';
import { describeTriggerStoreContract } from './contract/trigger-store-contract.js';
import { describeUserStoreContract } from './contract/user-store-contract.js';
import { describeWebhookStoreContract } from './contract/webhook-store-contract.js';

// The contract every implementation of the control plane's state keeps, run against the files of a data directory.
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const files: StateSubject = {
  async fresh() {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-state-'));
    dirs.push(dataDir);
    return { state: await FileControlState.open(dataDir), another: () => FileControlState.open(dataDir) };
  },
};

describeKeyStoreContract(files);
describePepperStoreContract(files);
describeUserStoreContract(files);
describeSessionStoreContract(files);
describeTriggerStoreContract(files);
describeHeldKillStoreContract(files);
describeWebhookStoreContract(files);
describeCountStoreContract(files);
describeReplicaBatchLedgerContract(files);
describePushLogContract(files);
describeCommitTrustStoreContract(files);
