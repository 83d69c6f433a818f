import path from 'node:path';
import { isOrgName } from '../../auth/key-format.js';
import { isPasswordHash } from '../password-hash-format.js';
import type { Unsubscribe } from '../unsubscribe.js';
import { isUsername, type UserRecord, type UserStore, usernameKey } from '../user-store.js';
import { JsonStateFile } from './json-state-file.js';

/** `<dataDir>/state/users.json`: runtime state beside keys.json, never in the flags repository. */
interface UserFileContent {
  version: 1;
  users: UserRecord[];
}

export const USER_FILE = 'users.json';

const USER_FILE_HINT =
  '; it holds the dashboard users: restore it from a backup, or remove it and add the users again with flagops user add';

/**
 * Users in `<stateDir>/users.json`. `flagops user add` writes the file while the service runs, so a read first
 * looks whether the file changed on disk, and a write holds the file's lock against the other process.
 */
export class FileUserStore implements UserStore {
  private readonly file: JsonStateFile<UserFileContent>;

  constructor(stateDir: string) {
    this.file = new JsonStateFile(path.join(stateDir, USER_FILE), { parse: checkContent, otherProcesses: true, hint: USER_FILE_HINT });
  }

  async list(): Promise<UserRecord[]> {
    return structuredClone((await this.file.read()).users);
  }

  create(record: UserRecord): Promise<boolean> {
    return this.file.change((next) => {
      if (next.users.some((u) => usernameKey(u.username) === usernameKey(record.username))) return false;
      next.users.push({ ...record });
      return true;
    });
  }

  remove(org: string, id: string): Promise<UserRecord | undefined> {
    return this.file.change((next) => {
      const index = next.users.findIndex((u) => u.id === id && u.org === org);
      return index < 0 ? undefined : next.users.splice(index, 1)[0];
    });
  }

  onChange(listener: () => void): Unsubscribe {
    return this.file.onChange(listener);
  }
}

function checkContent(data: unknown, file: string): UserFileContent {
  if (data === undefined) return { version: 1, users: [] };
  const content = data as Partial<UserFileContent> | null;
  if (content === null || typeof content !== 'object' || content.version !== 1 || !Array.isArray(content.users)) {
    throw new Error(`${file}: expected { "version": 1, "users": [...] }`);
  }
  content.users.forEach((user, i) => {
    const problem = recordProblem(user);
    if (problem) throw new Error(`${file}: users[${i}]: ${problem}`);
  });
  return content as UserFileContent;
}

function recordProblem(value: unknown): string | null {
  if (value === null || typeof value !== 'object') return 'expected an object';
  const user = value as Record<string, unknown>;
  for (const field of ['id', 'name', 'createdAt'] as const) {
    if (typeof user[field] !== 'string' || user[field] === '') return `${field} must be a non-empty string`;
  }
  if (!isOrgName(user.org)) return 'org is not a valid organisation name';
  if (!isUsername(user.username)) return 'username is not valid';
  if (!isPasswordHash(user.passwordHash)) return 'passwordHash is not an scrypt hash flagops can check';
  if (user.role !== undefined && typeof user.role !== 'string') return 'role must be a string';
  return null;
}
