import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../log/logger.js';
import { readJsonStateFile, writeJsonStateFile } from '../../state-files/state-files.js';
import { hashSessionToken, isSessionToken, newSessionToken } from './session-cookie.js';

/**
 * One signed-in browser. The cookie's token is never stored: only its SHA-256, so a copy of the file cannot
 * be replayed as a cookie. A fast hash is enough because the token is 256 random bits, not a password.
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
}

export interface SessionFileContent {
  version: 1;
  sessions: SessionRecord[];
}

/** `<dataDir>/state/sessions.json`: runtime state, never in the flags repository. */
export const SESSION_FILE = 'sessions.json';

export async function readSessionFile(file: string): Promise<SessionFileContent> {
  const data = await readJsonStateFile(file, '; remove it to sign everybody out');
  if (data === undefined) return { version: 1, sessions: [] };
  const content = data as Partial<SessionFileContent> | null;
  if (content === null || typeof content !== 'object' || content.version !== 1 || !Array.isArray(content.sessions)) {
    throw new Error(`${file}: expected { "version": 1, "sessions": [...] }; remove it to sign everybody out`);
  }
  const fields = ['id', 'tokenHash', 'org', 'userId', 'createdAt', 'lastSeenAt', 'expiresAt'] as const;
  content.sessions.forEach((session, i) => {
    const record = session as unknown as Record<string, unknown>;
    const bad = fields.find((f) => typeof record?.[f] !== 'string');
    if (bad) throw new Error(`${file}: sessions[${i}].${bad} must be a string; remove the file to sign everybody out`);
  });
  return content as SessionFileContent;
}

export async function writeSessionFile(file: string, content: SessionFileContent): Promise<void> {
  await writeJsonStateFile(file, content);
}

export const DEFAULT_IDLE_MS = 2 * 60 * 60 * 1000;
export const DEFAULT_ABSOLUTE_MS = 12 * 60 * 60 * 1000;
/** How stale the saved lastSeenAt may get: saving on every request would write the file every second. */
const TOUCH_SAVE_MS = 60 * 1000;

export interface SessionStoreOptions {
  dataDir: string;
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
}

/**
 * Server-side sessions. Lookups are in memory; creating and revoking a session reach the disk before they
 * answer, so a restart keeps people signed in and never revives a signed-out session.
 */
export class SessionStore {
  private readonly byHash = new Map<string, SessionRecord>();
  private saved = new Map<string, string>();
  private writes: Promise<void> = Promise.resolve();
  private savePending = false;
  readonly idleMs: number;
  readonly absoluteMs: number;
  private readonly now: () => Date;
  private readonly random: (size: number) => Buffer;

  private constructor(
    private readonly file: string,
    private readonly logger: Logger,
    records: SessionRecord[],
    options: SessionStoreOptions,
  ) {
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.absoluteMs = options.absoluteMs ?? DEFAULT_ABSOLUTE_MS;
    this.now = options.now ?? (() => new Date());
    this.random = options.random ?? randomBytes;
    for (const record of records) {
      this.byHash.set(record.tokenHash, record);
      this.saved.set(record.id, record.lastSeenAt);
    }
  }

  static async open(options: SessionStoreOptions): Promise<SessionStore> {
    const stateDir = path.join(options.dataDir, 'state');
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    const file = path.join(stateDir, SESSION_FILE);
    const { sessions } = await readSessionFile(file);
    return new SessionStore(file, options.logger, sessions, options);
  }

  /** Signs a user in: the returned token goes into the cookie and is never seen again by the server. */
  async create(user: SessionUser): Promise<{ token: string; session: SessionRecord }> {
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
    };
    this.byHash.set(session.tokenHash, session);
    await this.save();
    return { token, session: { ...session } };
  }

  /** The live session of a cookie's token, or null; an expired one is dropped. Counts as activity. */
  resolve(token: string): SessionRecord | null {
    if (!isSessionToken(token)) return null;
    const hash = hashSessionToken(token);
    const session = this.byHash.get(hash);
    if (!session) return null;
    const now = this.now();
    if (this.expired(session, now)) {
      this.byHash.delete(hash);
      this.saveSoon();
      return null;
    }
    session.lastSeenAt = now.toISOString();
    const savedAt = Date.parse(this.saved.get(session.id) ?? session.createdAt);
    if (now.getTime() - savedAt >= TOUCH_SAVE_MS) this.saveSoon();
    return { ...session };
  }

  /** Signs out the session of `token`. Resolves once the file no longer holds it. */
  async revoke(token: string): Promise<void> {
    if (!isSessionToken(token) || !this.byHash.delete(hashSessionToken(token))) return;
    await this.save();
  }

  /** Signs out every session of a user (the user was removed). */
  async revokeUser(userId: string): Promise<number> {
    let count = 0;
    for (const [hash, session] of this.byHash) {
      if (session.userId === userId) {
        this.byHash.delete(hash);
        count++;
      }
    }
    if (count > 0) await this.save();
    return count;
  }

  /** Waits for writes in flight; called when the service stops. */
  async close(): Promise<void> {
    await this.writes;
  }

  private expired(session: SessionRecord, now: Date): boolean {
    return now.getTime() >= Date.parse(session.expiresAt) || now.getTime() - Date.parse(session.lastSeenAt) >= this.idleMs;
  }

  /** A save for a touch or a lazy expiry: nobody waits for it, and a failure is logged, not thrown. */
  private saveSoon(): void {
    if (this.savePending) return;
    this.save().catch((err) => this.logger.warn('could not save dashboard sessions', { err, file: this.file }));
  }

  /** Writes the live sessions; saves run one at a time and a queued one covers every change before it starts. */
  private save(): Promise<void> {
    this.savePending = true;
    const run = async () => {
      this.savePending = false;
      const now = this.now();
      for (const [hash, session] of this.byHash) if (this.expired(session, now)) this.byHash.delete(hash);
      const sessions = [...this.byHash.values()].map((s) => ({ ...s }));
      await writeSessionFile(this.file, { version: 1, sessions });
      this.saved = new Map(sessions.map((s) => [s.id, s.lastSeenAt]));
    };
    const result = this.writes.then(run, run);
    this.writes = result.catch(() => undefined);
    return result;
  }
}
