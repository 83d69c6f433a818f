import type { Unsubscribe } from './unsubscribe.js';

/**
 * One signed-in browser. The cookie's token is never stored: only its SHA-256, so a copy of the stored sessions
 * cannot be replayed as a cookie. A fast hash is enough because the token is 256 random bits, not a password.
 */
export interface SessionRecord {
  id: string;
  tokenHash: string;
  org: string;
  userId: string;
  createdAt: string;
  /** Last request seen; saved at most once a minute, so idle expiry may start up to a minute early after a restart. */
  lastSeenAt: string;
  /** Absolute end, however active the session is. */
  expiresAt: string;
  /**
   * The session's role, `<viewer|editor|admin>[@<project slug>[,<project slug>...]]`; absent: `admin`. An OpenID
   * Connect session's comes from its groups (FLAGOPS_OIDC_ROLES).
   */
  role?: string;
  /** OpenID Connect sessions: the person's `email` claim, when the provider gave one. */
  email?: string;
  /** OpenID Connect sessions: the person's `preferred_username` claim, when the provider gave one. */
  username?: string;
}

/** Dashboard sessions of every organisation. */
export interface SessionStore {
  /** Every session, oldest first: a copy the caller may keep. */
  list(): Promise<SessionRecord[]>;
  /** The session of this token hash as stored now (a copy), or null. */
  find(tokenHash: string): Promise<SessionRecord | null>;
  /** Adds a session; resolves once that is durable. */
  create(record: SessionRecord): Promise<void>;
  /** Removes the sessions of these ids (signed out, expired, their user removed); ids not stored are ignored. */
  remove(ids: readonly string[]): Promise<void>;
  /** Records when sessions last saw a request; a session removed meanwhile stays removed. */
  touch(seen: ReadonlyArray<{ id: string; lastSeenAt: string }>): Promise<void>;
  /** Calls `listener` when sessions may have changed elsewhere; see Unsubscribe. */
  onChange(listener: () => void): Unsubscribe;
}
