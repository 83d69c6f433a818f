import { randomBytes } from 'node:crypto';
import type { Logger } from '../../../foundations/log/logger.js';
import type { ControlState, SessionRecord, SessionStore } from '../../../foundations/state/index.js';
import { hashSessionToken, isSessionToken, newSessionToken } from './session-cookie.js';

export type { SessionRecord } from '../../../foundations/state/index.js';

export const DEFAULT_IDLE_MS = 2 * 60 * 60 * 1000;
export const DEFAULT_ABSOLUTE_MS = 12 * 60 * 60 * 1000;
/** How stale the saved lastSeenAt may get: saving on every request would write every second. */
const TOUCH_SAVE_MS = 60 * 1000;

export interface SessionServiceOptions {
  /** Where sessions are kept. */
  state: Pick<ControlState, 'sessions'>;
  logger: Logger;
  /** Signed out after this long without a request (default 2 h). */
  idleMs?: number;
  /** Signed out this long after signing in, however active (default 12 h). */
  absoluteMs?: number;
  now?: () => Date;
  random?: (size: number) => Buffer;
}

export interface SessionUser {
  id: string;
  org: string;
  /** Copied to the session: what the person may do while it lasts (absent: admin). */
  role?: string;
  email?: string;
}

/** What a session record keeps of who signed in beyond the user's id (OpenID Connect sign-ins). */
export type SessionIdentity = Pick<SessionRecord, 'role' | 'email' | 'username'>;

/**
 * Server-side sessions, kept in the control plane's state (SessionStore). Known sessions are looked up in memory;
 * creating and revoking a session are durable before they answer, so a restart keeps people signed in and never
 * revives a signed-out session. Sessions changed elsewhere (another instance sharing the state) are read again
 * when the store announces them, and a token not known here is read from the store before it is refused, since
 * that announcement may not have arrived yet.
 */
export class SessionService {
  private byHash = new Map<string, SessionRecord>();
  /** Per session, the lastSeenAt last handed to the store. */
  private readonly saved = new Map<string, string>();
  /** Writes nobody waits for (activity, lazy expiry), awaited by close(). */
  private readonly lazyWrites = new Set<Promise<void>>();
  /** Raised by every install, so a session read from the store meanwhile is not kept over a newer list. */
  private installs = 0;
  readonly idleMs: number;
  readonly absoluteMs: number;
  private readonly now: () => Date;
  private readonly random: (size: number) => Buffer;

  private constructor(
    private readonly store: SessionStore,
    private readonly logger: Logger,
    records: SessionRecord[],
    options: SessionServiceOptions,
  ) {
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.absoluteMs = options.absoluteMs ?? DEFAULT_ABSOLUTE_MS;
    this.now = options.now ?? (() => new Date());
    this.random = options.random ?? randomBytes;
    this.install(records);
    store.onChange(() => {
      this.store.list().then(
        (sessions) => this.install(sessions),
        (err) => this.logger.warn('could not read dashboard sessions changed elsewhere', { err }),
      );
    });
  }

  static async open(options: SessionServiceOptions): Promise<SessionService> {
    return new SessionService(options.state.sessions, options.logger, await options.state.sessions.list(), options);
  }

  /** Signs a user in: the returned token goes into the cookie and is never seen again by the server. */
  async create(user: SessionUser, identity: SessionIdentity = {}): Promise<{ token: string; session: SessionRecord }> {
    const token = newSessionToken(this.random);
    const now = this.now();
    const session: SessionRecord = {
      id: `ses_${this.random(8).toString('hex')}`,
      tokenHash: hashSessionToken(token),
      org: user.org,
      userId: user.id,
      createdAt: now.toISOString(),
      lastSeenAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + this.absoluteMs).toISOString(),
      // A password user's role is theirs (flagops user add --role); a single sign-on's comes from its groups.
      ...((identity.role ?? user.role) === undefined ? {} : { role: identity.role ?? user.role }),
      ...((identity.email ?? user.email) === undefined ? {} : { email: identity.email ?? user.email }),
      ...(identity.username === undefined ? {} : { username: identity.username }),
    };
    this.byHash.set(session.tokenHash, session);
    this.saved.set(session.id, session.lastSeenAt);
    const expired = this.dropExpired(now);
    if (expired.length > 0) this.lazily(this.store.remove(expired)); // shares the write of the new session
    try {
      await this.store.create({ ...session });
    } catch (err) {
      // Nobody gets its token: a session that is not stored is not kept here either.
      this.byHash.delete(session.tokenHash);
      this.saved.delete(session.id);
      throw err;
    }
    return { token, session: { ...session } };
  }

  /**
   * The live session of a cookie's token, or null; an expired one is dropped. Counts as activity. A token not
   * known here is read from the store, so a session signed in through another control plane a moment ago is
   * taken at once. With `confirm` (a request that changes something), a known session is checked against the
   * store too, so a sign-out through another control plane stops it at once rather than at its announcement.
   */
  async resolve(token: string, options: { confirm?: boolean } = {}): Promise<SessionRecord | null> {
    if (!isSessionToken(token)) return null;
    const hash = hashSessionToken(token);
    let session = this.byHash.get(hash);
    if (!session || options.confirm) {
      const installs = this.installs;
      const known = session;
      // A store that cannot be read (the database down) cannot confirm a sign-out elsewhere either: a session
      // known here goes on as it did before that check, so a kill with it still works as with a key.
      const stored = await this.store.find(hash).catch((err) => {
        if (known) return known;
        throw err;
      });
      if (stored === null) {
        this.byHash.delete(hash);
        return null;
      }
      session = this.byHash.get(hash);
      if (!session) {
        session = stored;
        // A list installed meanwhile may have been read after a sign-out this read missed: it decides.
        if (this.installs === installs) {
          this.byHash.set(hash, session);
          if (!this.saved.has(session.id)) this.saved.set(session.id, session.lastSeenAt);
        }
      }
    }
    const now = this.now();
    if (this.expired(session, now)) {
      this.byHash.delete(hash);
      this.lazily(this.store.remove([session.id]));
      return null;
    }
    session.lastSeenAt = now.toISOString();
    const { id, lastSeenAt } = session;
    const savedAt = Date.parse(this.saved.get(id) ?? session.createdAt);
    if (now.getTime() - savedAt >= TOUCH_SAVE_MS) {
      this.saved.set(id, lastSeenAt);
      this.lazily(this.store.touch([{ id, lastSeenAt }]), () => this.saved.delete(id));
    }
    return { ...session };
  }

  /**
   * Signs out the session of `token`. Resolves once the store no longer holds it, and only then stops taking it:
   * a sign-out the store refuses rejects with the session still signed in, here as after a restart.
   */
  async revoke(token: string): Promise<void> {
    if (!isSessionToken(token)) return;
    const hash = hashSessionToken(token);
    // One signed in elsewhere and not announced here yet is signed out too.
    const stored = this.byHash.has(hash) ? null : await this.store.find(hash);
    if (!this.byHash.has(hash) && stored === null) return;
    const now = this.now();
    // Sessions that expired unseen share the write, and are forgotten with it.
    const gone = [...this.byHash].filter(([h, session]) => h === hash || this.expired(session, now));
    await this.store.remove([...(stored ? [stored.id] : []), ...gone.map(([, session]) => session.id)]);
    for (const [h] of gone) this.byHash.delete(h);
  }

  /**
   * Signs out every session of a user who was removed. Removing the user ended them already (a password
   * session's user is looked up at each request), so the store forgetting them only tidies: a write that fails
   * is logged, not thrown, and leaves records that sign nobody in.
   */
  async revokeUser(userId: string): Promise<number> {
    const ids: string[] = [];
    for (const [hash, session] of this.byHash) {
      if (session.userId === userId) {
        this.byHash.delete(hash);
        ids.push(session.id);
      }
    }
    if (ids.length > 0) {
      const write = this.store.remove([...ids, ...this.dropExpired(this.now())]);
      this.lazily(write);
      await write.catch(() => undefined);
    }
    return ids.length;
  }

  /** Waits for writes in flight; called when the service stops. */
  async close(): Promise<void> {
    while (this.lazyWrites.size > 0) await Promise.all(this.lazyWrites);
  }

  private expired(session: SessionRecord, now: Date): boolean {
    return now.getTime() >= Date.parse(session.expiresAt) || now.getTime() - Date.parse(session.lastSeenAt) >= this.idleMs;
  }

  /** Forgets the sessions that expired unseen; the caller removes them from the store with its own write, so they do not pile up there. */
  private dropExpired(now: Date): string[] {
    const ids: string[] = [];
    for (const [hash, session] of this.byHash) {
      if (this.expired(session, now)) {
        this.byHash.delete(hash);
        ids.push(session.id);
      }
    }
    return ids;
  }

  /** A write for a touch or a lazy expiry: nobody waits for it, and a failure is logged, not thrown. */
  private lazily(write: Promise<void>, onFailure?: () => void): void {
    const tracked = write.catch((err) => {
      onFailure?.();
      this.logger.warn('could not save dashboard sessions', { err });
    });
    this.lazyWrites.add(tracked);
    void tracked.finally(() => this.lazyWrites.delete(tracked));
  }

  /** Makes `records` the sessions, keeping the newer activity seen here of those it already had. */
  private install(records: SessionRecord[]): void {
    this.installs++;
    const known = new Map([...this.byHash.values()].map((s) => [s.id, s]));
    this.byHash = new Map();
    for (const record of records) {
      const mine = known.get(record.id);
      if (mine && mine.lastSeenAt > record.lastSeenAt) record.lastSeenAt = mine.lastSeenAt;
      this.byHash.set(record.tokenHash, record);
      if (!this.saved.has(record.id)) this.saved.set(record.id, record.lastSeenAt);
    }
  }
}
