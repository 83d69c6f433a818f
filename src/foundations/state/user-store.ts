import type { Unsubscribe } from './unsubscribe.js';

/** A dashboard user. The password is kept only as its scrypt hash (password-hash-format.ts). */
export interface UserRecord {
  id: string;
  org: string;
  username: string;
  name: string;
  passwordHash: string;
  createdAt: string;
  /** What the person may do, copied to their sessions: `<viewer|editor|admin>[@<slug>,...]`; absent: admin. */
  role?: string;
}

/** What people sign in with: letters, digits and `._@+-`, so an email address works as a username. */
const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}$/;

export function isUsername(value: unknown): value is string {
  return typeof value === 'string' && USERNAME.test(value);
}

/** Usernames are unique regardless of letter case: Alice and alice are one person. */
export function usernameKey(username: string): string {
  return username.toLowerCase();
}

/** Dashboard users of every organisation. Usernames are unique in the whole installation (by usernameKey). */
export interface UserStore {
  /** Every user, oldest first, as stored now (what another process added included): a copy the caller may keep. */
  list(): Promise<UserRecord[]>;
  /** Adds the user once that is durable; false, and nothing added, when another user has its username. */
  create(record: UserRecord): Promise<boolean>;
  /** Removes the user `id` of `org`; resolves to it once that is durable, or to undefined when `org` has no such user. */
  remove(org: string, id: string): Promise<UserRecord | undefined>;
  /** Calls `listener` when users may have changed elsewhere; see Unsubscribe. */
  onChange(listener: () => void): Unsubscribe;
}
