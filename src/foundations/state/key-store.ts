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
  /** Admin and agent keys: the project ids the key is limited to (absent: every project). */
  projects?: string[];
  /** Admin and agent keys: the environments the key may change (absent: every environment). */
  environments?: EnvironmentName[];
  /** When the key stops working (ISO-8601, UTC); an sdk key's only limit. */
  expiresAt?: string;
  createdAt: string;
  revokedAt?: string;
  /** Set on a key that was rotated: when, the key that replaced it, and when the old one stops working. */
  rotatedAt?: string;
  replacedBy?: string;
  graceEndsAt?: string;
  /** Set on a key made by a rotation: the key it replaced. */
  rotatedFrom?: string;
  /** Set on a key created or rotated with another key: that key's id (a rotation's new key names who rotated). */
  createdBy?: string;
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
  /**
   * Replaces the live key `id` of `org` in one durable step: `plan` is given the key as stored and returns the
   * new key to add and when the old one stops working; the old key is marked rotated (`rotatedAt`,
   * `replacedBy`, `graceEndsAt`). Resolves to both, or to undefined when `org` has no such key; `plan` may throw
   * (a revoked or already rotated key) and then nothing changes.
   */
  rotate(
    org: string,
    id: string,
    plan: (old: Readonly<KeyRecord>, current: Readonly<KeySet>) => { replacement: KeyRecord; rotatedAt: string; graceEndsAt: string },
  ): Promise<{ old: KeyRecord; replacement: KeyRecord } | undefined>;
  /**
   * Compares `check`, the fingerprint of the pepper read at start, with the one recorded with the keys, and
   * records it when none is (a new store, or one written before fingerprints were) or no key is stored. Rejects
   * with a StateFileError, changing nothing, when keys are stored under a pepper with another fingerprint.
   */
  matchPepper(check: string): Promise<void>;
  /** Calls `listener` when keys may have changed elsewhere (another instance sharing the state); see Unsubscribe. */
  onChange(listener: () => void): Unsubscribe;
}
