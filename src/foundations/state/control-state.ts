import type { CommitTrustStore } from './commit-trust-store.js';
import type { CountStore } from './count-store.js';
import type { GuardStore } from './guard-store.js';
import type { HeldKillStore } from './held-kill-store.js';
import type { KeyStore } from './key-store.js';
import type { Notices } from './notices.js';
import type { PepperStore } from './pepper-store.js';
import type { PushLog } from './push-log.js';
import type { ReplicaBatchLedger } from './replica-batch-ledger.js';
import type { SessionStore } from './session-store.js';
import type { TriggerStore } from './trigger-store.js';
import type { Turn } from './turn.js';
import type { UserStore } from './user-store.js';
import type { WebhookStore } from './webhook-store.js';

/**
 * Everything the control plane keeps outside the flags repository, one store per kind of state. The
 * composition root opens it once (openControlState) and hands each service the stores it needs; nothing else
 * knows where the state lives.
 */
export interface ControlState {
  readonly keys: KeyStore;
  readonly pepper: PepperStore;
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly triggers: TriggerStore;
  readonly heldKills: HeldKillStore;
  readonly webhooks: WebhookStore;
  readonly counts: CountStore;
  readonly guards: GuardStore;
  readonly replicaBatches: ReplicaBatchLedger;
  readonly pushes: PushLog;
  readonly commitTrust: CommitTrustStore;
  /** Word for the other instances sharing the state (none where the state is files). */
  readonly notices: Notices;
  /**
   * Why the control plane must refuse changes now (the database cannot be reached: a change made then would not
   * reach the other control planes), as the error to answer with; undefined while it can take them.
   */
  writesRefused(): Error | undefined;
  /**
   * Takes the turn `name`, alone among the instances sharing the state (one instance alone: at once), with the
   * note the last holder left. Waits at most `waitMs`, then rejects with WriteConflictError (409). A turn whose
   * instance dies or stops answering (4 s) ends with it, and one held past `holdMs` (default 30 s) is ended for it.
   */
  takeTurn(name: string, waitMs: number, holdMs?: number): Promise<Turn>;
  /** Ends this instance's use of the state, once the services writing through it have stopped. */
  close(): Promise<void>;
}
