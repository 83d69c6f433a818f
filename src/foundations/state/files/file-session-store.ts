import path from 'node:path';
import type { SessionRecord, SessionStore } from '../session-store.js';
import type { Unsubscribe } from '../unsubscribe.js';
import { JsonStateFile } from './json-state-file.js';

interface SessionFileContent {
  version: 1;
  sessions: SessionRecord[];
}

/** `<dataDir>/state/sessions.json`: runtime state, never in the flags repository. */
export const SESSION_FILE = 'sessions.json';

/** Added to what is wrong with the file: what the operator can do about it. */
const RECOVER = '; remove it to sign everybody out';

/** Sessions in `<stateDir>/sessions.json`; changes made while a write waits for its turn share the next write. */
export class FileSessionStore implements SessionStore {
  private readonly file: JsonStateFile<SessionFileContent>;

  constructor(stateDir: string) {
    this.file = new JsonStateFile(path.join(stateDir, SESSION_FILE), { parse: checkContent, hint: RECOVER });
  }

  async list(): Promise<SessionRecord[]> {
    return structuredClone((await this.file.read()).sessions);
  }

  async find(tokenHash: string): Promise<SessionRecord | null> {
    const found = (await this.file.read()).sessions.find((s) => s.tokenHash === tokenHash);
    return found ? structuredClone(found) : null;
  }

  create(record: SessionRecord): Promise<void> {
    return this.file.change((next) => {
      next.sessions.push({ ...record });
    });
  }

  remove(ids: readonly string[]): Promise<void> {
    const gone = new Set(ids);
    return this.file.change((next) => {
      next.sessions = next.sessions.filter((s) => !gone.has(s.id));
    });
  }

  touch(seen: ReadonlyArray<{ id: string; lastSeenAt: string }>): Promise<void> {
    const at = new Map(seen.map((s) => [s.id, s.lastSeenAt]));
    return this.file.change((next) => {
      for (const session of next.sessions) session.lastSeenAt = at.get(session.id) ?? session.lastSeenAt;
    });
  }

  onChange(listener: () => void): Unsubscribe {
    return this.file.onChange(listener);
  }
}

const OPTIONAL = ['role', 'email', 'username'] as const;

function checkContent(data: unknown, file: string): SessionFileContent {
  if (data === undefined) return { version: 1, sessions: [] };
  const content = data as Partial<SessionFileContent> | null;
  if (content === null || typeof content !== 'object' || content.version !== 1 || !Array.isArray(content.sessions)) {
    throw new Error(`${file}: expected { "version": 1, "sessions": [...] }`);
  }
  const fields = ['id', 'tokenHash', 'org', 'userId', 'createdAt', 'lastSeenAt', 'expiresAt'] as const;
  content.sessions.forEach((session, i) => {
    const record = session as unknown as Record<string, unknown>;
    const bad = fields.find((f) => typeof record?.[f] !== 'string');
    if (bad) throw new Error(`${file}: sessions[${i}].${bad} must be a string`);
    const badOptional = OPTIONAL.find((f) => record[f] !== undefined && typeof record[f] !== 'string');
    if (badOptional) throw new Error(`${file}: sessions[${i}].${badOptional} must be a string when present`);
  });
  return content as SessionFileContent;
}
