import type { EnvironmentName } from '@flagops/core';
import type { KeyKind } from '../auth/key-format.js';
import type { Unsubscribe } from './unsubscribe.js';

/** A stored key. `hash` is the keyed hash of the key; the key itself is never stored. */
export interface KeyRecord {
  id: string;
  org: string;
  kind: KeyKind;
  name: string;
  prefix: string;
  hash: string;
  projectId?: string;
  environment?: EnvironmentName;
  createdAt: string;
  revokedAt?: string;
}

export interface Organisation {
  name: string;
  createdAt: string;
}

/** Every organisation and every key (revoked ones included), each oldest first. */
export interface KeySet {
  organisations: Organisation[];
  keys: KeyRecord[];
}

/** What a plan of KeyStore.add adds, and what the call resolves to. */
export interface KeyAdditions<T> {
  /** Organisations to add; one that exists already is kept as it is. */
  organisations?: Organisation[];
  keys?: KeyRecord[];
  result: T;
}

/** Credentials and the organisations they belong to. */
export interface KeyStore {
  /** Every organisation and key: a copy the caller may keep. */
  list(): Promise<KeySet>;
  /**
   * Runs `plan` on the current organisations and keys and adds what it returns, all of it or (when `plan` or
   * the write fails) none; one plan at a time, so nothing is added between what `plan` read and what it adds.
   * `plan` runs once and must not change what it is given. Resolves once the additions are durable.
   */
  add<T>(plan: (current: Readonly<KeySet>) => KeyAdditions<T>): Promise<T>;
  /**
   * Marks the key `id` of `org` revoked at `at` (a key revoked before keeps its first `revokedAt`); resolves
   * to the key once that is durable, or to undefined when `org` has no such key.
   */
  revoke(org: string, id: string, at: string): Promise<KeyRecord | undefined>;
  /** Calls `listener` when keys may have changed elsewhere (another instance sharing the state); see Unsubscribe. */
  onChange(listener: () => void): Unsubscribe;
}
