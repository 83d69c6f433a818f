import { readJsonStateFile, writeJsonStateFile } from '../../state-files/state-files.js';

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
