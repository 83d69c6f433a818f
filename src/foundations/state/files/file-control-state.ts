import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../log/logger.js';
import { removeLeftoverStateTempFiles } from '../../state-files/state-files.js';
import type { ControlState } from '../control-state.js';
import type { Turn } from '../turn.js';
import { FileCommitTrustStore } from './file-commit-trust-store.js';
import { FileCountStore } from './file-count-store.js';
import { FileHeldKillStore } from './file-held-kill-store.js';
import { FileKeyStore } from './file-key-store.js';
import { FilePepperStore } from './file-pepper-store.js';
import { FilePushLog } from './file-push-log.js';
import { FileReplicaBatchLedger, REPLICA_BATCH_FILE } from './file-replica-batch-ledger.js';
import { FileSessionStore } from './file-session-store.js';
import { FileTriggerStore } from './file-trigger-store.js';
import { FileUserStore } from './file-user-store.js';
import { FileWebhookStore } from './file-webhook-store.js';
import { MemoryGuardStore } from './memory-guard-store.js';
import { NoOtherInstances } from './no-other-instances.js';

/**
 * The control plane's state as files of the data directory (docs/architecture.md, "On disk"), which one service
 * per data directory owns. Each file is read when its store is first used.
 */
export class FileControlState implements ControlState {
  readonly keys: FileKeyStore;
  readonly pepper: FilePepperStore;
  readonly users: FileUserStore;
  readonly sessions: FileSessionStore;
  readonly triggers: FileTriggerStore;
  readonly heldKills: FileHeldKillStore;
  readonly webhooks: FileWebhookStore;
  readonly counts: FileCountStore;
  readonly guards = new MemoryGuardStore();
  readonly pushes: FilePushLog;
  readonly commitTrust: FileCommitTrustStore;
  readonly notices = new NoOtherInstances();
  private readonly stateDir: string;
  private batchLedger: FileReplicaBatchLedger | undefined;
  private readonly turnNotes = new Map<string, string>();

  /**
   * The state of `dataDir`, its state directory created (mode 0700) when missing, unless `create` is false.
   * Creating, it also removes the temporary files of state writes a killed process left in `state/` and
   * `stats/` (only those: removeLeftoverStateTempFiles).
   */
  static async open(dataDir: string, options: { logger?: Logger; create?: boolean } = {}): Promise<FileControlState> {
    if (options.create ?? true) {
      await mkdir(path.join(dataDir, 'state'), { recursive: true, mode: 0o700 });
      for (const dir of ['state', 'stats']) {
        const removed = await removeLeftoverStateTempFiles(path.join(dataDir, dir));
        if (removed.length > 0) options.logger?.warn('removed temporary state files left by a crash', { dir, files: removed });
      }
    }
    return new FileControlState(dataDir, options.logger);
  }

  private constructor(dataDir: string, logger?: Logger) {
    const stateDir = path.join(dataDir, 'state');
    this.stateDir = stateDir;
    this.keys = new FileKeyStore(stateDir);
    this.pepper = new FilePepperStore(stateDir);
    this.users = new FileUserStore(stateDir);
    this.sessions = new FileSessionStore(stateDir);
    this.triggers = new FileTriggerStore(stateDir);
    this.heldKills = new FileHeldKillStore(stateDir);
    this.webhooks = new FileWebhookStore(stateDir);
    this.counts = new FileCountStore(path.join(dataDir, 'stats'), { logger });
    this.pushes = new FilePushLog(path.join(stateDir, 'pushes'));
    this.commitTrust = new FileCommitTrustStore(stateDir);
  }

  /** Made when first used (by the service, at start), since making it reads and rewrites its file. */
  get replicaBatches(): FileReplicaBatchLedger {
    this.batchLedger ??= new FileReplicaBatchLedger(path.join(this.stateDir, REPLICA_BATCH_FILE));
    return this.batchLedger;
  }

  /** Files in the data directory are there while the service runs (a disk fault is the repository's to report). */
  writesRefused(): undefined {
    return undefined;
  }

  /** One service per data directory: nothing else takes a turn, so each is had at once, with the last one's note. */
  async takeTurn(name: string, _waitMs: number): Promise<Turn> {
    return {
      note: this.turnNotes.get(name) ?? null,
      end: async (note) => {
        if (note !== undefined) this.turnNotes.set(name, note);
      },
    };
  }

  /** Every write has landed once the services are stopped (they wait for theirs); only the stats log is open. */
  async close(): Promise<void> {
    await this.counts.close();
  }
}
