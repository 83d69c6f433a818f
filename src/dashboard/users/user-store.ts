import { randomBytes } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { isOrgName } from '../../auth/key-format.js';
import { ConflictError, NotFoundError } from '../../errors/kinds.js';
import { readJsonStateFile, withStateFileLock, writeJsonStateFile } from '../../state-files/state-files.js';
import { DEFAULT_COST, hashPassword, isPasswordHash, type ScryptCost, verifyPassword } from './password-hash.js';
import { checkNewUser, isUsername, usernameKey } from './user-routes.js';

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

export interface UserStoreOptions {
  dataDir: string;
  now?: () => Date;
  newId?: () => string;
  /** scrypt cost of new hashes; tests lower it, production keeps the default. */
  cost?: ScryptCost;
}

/**
 * Dashboard users in `<dataDir>/state/users.json`. The file may also be written by `flagops user add` while
 * the service runs, so every operation that reads users by name first re-reads the file when it changed on
 * disk; writes are serialized in this process, hold the file's lock against other processes, and land atomically.
 */
export class UserStore {
  private content: UserFileContent = { version: 1, users: [] };
  private stamp: FileStamp | null = null;
  private writes: Promise<unknown> = Promise.resolve();
  private readonly now: () => Date;
  private readonly newId: () => string;
  private readonly cost: ScryptCost;
  /** Checked against when the username is unknown, so a wrong name takes as long as a wrong password. */
  private decoy: Promise<string> | undefined;

  private constructor(
    private readonly file: string,
    options: UserStoreOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.newId = options.newId ?? (() => `usr_${randomBytes(8).toString('hex')}`);
    this.cost = options.cost ?? DEFAULT_COST;
  }

  static async open(options: UserStoreOptions): Promise<UserStore> {
    const stateDir = path.join(options.dataDir, 'state');
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    const store = new UserStore(path.join(stateDir, USER_FILE), options);
    await store.refresh();
    return store;
  }

  /** Re-reads the file if another process changed it since we last read or wrote it. */
  async refresh(): Promise<void> {
    const stamp = await stampOf(this.file);
    if (sameStamp(stamp, this.stamp)) return;
    this.content = await readUserFile(this.file);
    this.stamp = stamp;
  }

  /** The user of a session, from memory: the hot path of every dashboard request. */
  byId(id: string): UserView | undefined {
    const record = this.content.users.find((u) => u.id === id);
    return record && toView(record);
  }

  async list(org: string): Promise<UserView[]> {
    await this.refresh();
    return this.content.users.filter((u) => u.org === org).map(toView);
  }

  /** Creates a user of `org`. Usernames are unique in the whole installation, since sign-in asks only for one. */
  async create(org: string, input: unknown): Promise<UserView> {
    const user = checkNewUser(input);
    const passwordHash = await hashPassword(user.password, this.cost);
    return this.mutate((next) => {
      if (next.users.some((u) => usernameKey(u.username) === usernameKey(user.username))) {
        throw new ConflictError(`username ${JSON.stringify(user.username)} is taken; choose another`);
      }
      const record: UserRecord = {
        id: this.newId(),
        org,
        username: user.username,
        name: user.name,
        passwordHash,
        createdAt: this.now().toISOString(),
      };
      next.users.push(record);
      return toView(record);
    });
  }

  /** Removes a user of `org`; another organisation's user is not found, like an unknown one. */
  async remove(org: string, id: string): Promise<UserView> {
    return this.mutate((next) => {
      const index = next.users.findIndex((u) => u.id === id && u.org === org);
      if (index < 0) throw new NotFoundError(`user ${JSON.stringify(id)}`);
      const [removed] = next.users.splice(index, 1);
      return toView(removed);
    });
  }

  /** Whether an account has this username (as of the last read of the file). */
  hasUsername(username: string): boolean {
    return this.content.users.some((u) => usernameKey(u.username) === usernameKey(username));
  }

  /** The user whose username and password these are, or null. Takes one scrypt either way. */
  async verify(username: string, password: string): Promise<UserView | null> {
    await this.refresh();
    const record = this.content.users.find((u) => usernameKey(u.username) === usernameKey(username));
    if (!record) {
      this.decoy ??= hashPassword('decoy password', this.cost);
      await verifyPassword(password, await this.decoy);
      return null;
    }
    return (await verifyPassword(password, record.passwordHash)) ? toView(record) : null;
  }

  private mutate<T>(change: (next: UserFileContent) => T): Promise<T> {
    const run = (): Promise<T> =>
      withStateFileLock(this.file, async () => {
        await this.refresh();
        const next = structuredClone(this.content);
        const result = change(next);
        await writeUserFile(this.file, next);
        this.content = next;
        this.stamp = await stampOf(this.file);
        return result;
      });
    const result = this.writes.then(run, run);
    this.writes = result.catch(() => undefined);
    return result;
  }
}

function toView(record: UserRecord): UserView {
  const { passwordHash: _hash, ...view } = record;
  return view;
}
