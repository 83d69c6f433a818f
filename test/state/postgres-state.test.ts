import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import type { ControlState } from '../../src/foundations/state/index.js';
import { openControlState } from '../../src/foundations/state/index.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
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

// The contract every implementation of the control plane's state keeps, run against PostgreSQL: a database per
// test, and `another()` a second control plane on it.
describe.skipIf(POSTGRES_MISSING !== null)('the control plane state in PostgreSQL', () => {
  let cluster: PostgresCluster;
  const opened: ControlState[] = [];
  beforeAll(async () => {
    cluster = await PostgresCluster.start();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((state) => state.close()));
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  const postgres: StateSubject = {
    async fresh() {
      const databaseUrl = await cluster.createDatabase();
      const open = async () => {
        const state = await openControlState({ dataDir: '/nonexistent', databaseUrl });
        opened.push(state);
        return state;
      };
      return { state: await open(), another: open };
    },
  };

  describeKeyStoreContract(postgres);
  describePepperStoreContract(postgres);
  describeUserStoreContract(postgres);
  describeSessionStoreContract(postgres);
  describeTriggerStoreContract(postgres);
  describeHeldKillStoreContract(postgres);
  describeWebhookStoreContract(postgres);
  describeCountStoreContract(postgres);
  describeReplicaBatchLedgerContract(postgres);
  describePushLogContract(postgres);
  describeCommitTrustStoreContract(postgres);
});
