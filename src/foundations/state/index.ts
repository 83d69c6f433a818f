/**
 * The control plane's own state: everything it keeps outside the flags repository, behind one interface per
 * kind of state, grouped in a ControlState that the composition root opens and hands to the services. Other
 * modules import this file only; the implementations (src/foundations/state/files) stay behind it.
 */

export type { CommitTrustStore } from './commit-trust-store.js';
export type { ControlState } from './control-state.js';
export type { CountEntry, CountStore } from './count-store.js';
export { failuresAfter, type GuardCheck, type GuardCheckOutcome, type GuardStore } from './guard-store.js';
export type { HeldKill, HeldKillStore } from './held-kill-store.js';
export type { KeyAdditions, KeyRecord, KeySet, KeyStore, Organisation } from './key-store.js';
export type { Notices } from './notices.js';
export { appendHookPushRecords, type ControlStateOptions, openControlState } from './open-control-state.js';
export {
  formatPasswordHash,
  isPasswordHash,
  PASSWORD_KEY_BYTES,
  type ParsedPasswordHash,
  parsePasswordHash,
  type ScryptCost,
} from './password-hash-format.js';
export type { PepperStore } from './pepper-store.js';
export type { PushLog, PushReader, PushRecord } from './push-log.js';
export type { ReplicaBatchLedger } from './replica-batch-ledger.js';
export type { SessionRecord, SessionStore } from './session-store.js';
export type { TriggerRecord, TriggerStore } from './trigger-store.js';
export type { Turn } from './turn.js';
export type { Unsubscribe } from './unsubscribe.js';
export { isUsername, type UserRecord, type UserStore, usernameKey } from './user-store.js';
export type {
  AttemptClaim,
  DeliveryChanges,
  DeliveryRecord,
  DeliveryStatus,
  WebhookRecord,
  WebhookState,
  WebhookStore,
} from './webhook-store.js';
export { FLAG_HEALTH_ACTIONS, type FlagHealthAction } from './webhook-store.js';
