import type { EnvironmentName } from '@flagops/core';
import type { Unsubscribe } from './unsubscribe.js';

/** One trigger as stored: the secret of its URL only as an HMAC under the installation's pepper. */
export interface TriggerRecord {
  id: string;
  org: string;
  flagId: string;
  environment: EnvironmentName;
  name: string;
  action: 'kill';
  secretHash: string;
  createdAt: string;
}

/** Trigger URLs of every organisation: a URL is a credential (it kills a flag), kept as keys are. */
export interface TriggerStore {
  /** Every trigger, oldest first: a copy the caller may keep. */
  list(): Promise<TriggerRecord[]>;
  /** Adds the trigger once that is durable; false, and nothing added, when a trigger has its id already. */
  create(record: TriggerRecord): Promise<boolean>;
  /** Removes the trigger `id` of `org`; resolves to it once that is durable, or to undefined when `org` has no such trigger. */
  remove(org: string, id: string): Promise<TriggerRecord | undefined>;
  /** Calls `listener` when triggers may have changed elsewhere; see Unsubscribe. */
  onChange(listener: () => void): Unsubscribe;
}
