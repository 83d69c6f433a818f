import { stat } from 'node:fs/promises';
import { isOrgName } from '../../auth/key-format.js';
import { readJsonStateFile, writeJsonStateFile } from '../../state-files/state-files.js';
import { isPasswordHash } from './password-hash.js';
import { isUsername } from './user-input.js';

/** A dashboard user. The password is kept only as its scrypt hash. */
export interface UserRecord {
  id: string;
  org: string;
  username: string;
  name: string;
  passwordHash: string;
  createdAt: string;
}

/** A user as the API shows it: never the hash. */
export type UserView = Omit<UserRecord, 'passwordHash'>;

/** `<dataDir>/state/users.json`: runtime state beside keys.json, never in the flags repository. */
export interface UserFileContent {
  version: 1;
  users: UserRecord[];
}

export const USER_FILE = 'users.json';

/** Identifies one version of the file on disk, so a change made by another process (the CLI) is noticed. */
export interface FileStamp {
  mtimeMs: number;
  size: number;
  ino: number;
}

export async function stampOf(file: string): Promise<FileStamp | null> {
  try {
    const s = await stat(file);
    return { mtimeMs: s.mtimeMs, size: s.size, ino: s.ino };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export function sameStamp(a: FileStamp | null, b: FileStamp | null): boolean {
  return a === b || (a !== null && b !== null && a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino);
}

export async function readUserFile(file: string): Promise<UserFileContent> {
  const data = await readJsonStateFile(file);
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

export async function writeUserFile(file: string, content: UserFileContent): Promise<void> {
  await writeJsonStateFile(file, content);
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
  return null;
}
