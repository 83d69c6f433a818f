import { randomBytes } from 'node:crypto';
import {
  closeSync,
  type Dirent,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { StorageFaultError } from '../../errors/kinds.js';
import { fsync } from './fsync.js';

/**
 * Reading and compare-and-swap updating of a branch ref with git's own lock protocol, so that the git CLI
 * (`git push` into the bare repository, `git pack-refs`) and other processes interoperate with us.
 */

export const MAIN_REF = 'refs/heads/main';

const OID = /^[0-9a-f]{40}$/;

/**
 * A ref file that holds no object id (damaged by hand, or by a disk): nothing of the branch can be read or
 * written until it is repaired. The message names the ref, never where the repository is (it reaches API
 * callers); `file` is the path, for the operator.
 */
export class CorruptRefError extends StorageFaultError {
  constructor(
    readonly ref: string,
    readonly file: string,
    /** What is wrong with it, in words: `holds "…", not an object id`. */
    readonly problem: string,
  ) {
    super('read', `ref ${ref} ${problem}`);
  }
}

/** The oid a ref points at: the loose file wins over `packed-refs`, as in git. Null when the ref does not exist. */
export async function readRef(gitdir: string, ref: string, depth = 0): Promise<string | null> {
  const file = join(gitdir, ref);
  const loose = await readIfExists(file);
  if (loose !== null) {
    const value = loose.trim();
    if (value.startsWith('ref: ')) {
      // git gives up on symbolic refs nested deeper than 5; so does this, rather than loop on a cycle.
      if (depth >= 5) throw new CorruptRefError(ref, file, 'is a symbolic ref nested too deep');
      return readRef(gitdir, value.slice(5).trim(), depth + 1);
    }
    if (!OID.test(value)) throw new CorruptRefError(ref, file, `holds ${JSON.stringify(value.slice(0, 60))}, not an object id`);
    return value;
  }
  return readPackedRef(gitdir, ref);
}

/**
 * Every branch under `prefix` (`refs/heads/proposals/`) with the commit it points at, loose refs winning over
 * `packed-refs` as in git; sorted by name.
 */
export async function listRefs(gitdir: string, prefix: string): Promise<Array<{ ref: string; oid: string }>> {
  const found = new Map<string, string>();
  const packed = await readIfExists(join(gitdir, 'packed-refs'));
  for (const line of packed?.split('\n') ?? []) {
    if (line.startsWith('#') || line.startsWith('^') || line.indexOf(' ') !== 40) continue;
    const ref = line.slice(41).trim();
    if (ref.startsWith(prefix)) found.set(ref, line.slice(0, 40));
  }
  const walk = (dir: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(join(gitdir, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.isFile() && !entry.name.endsWith('.lock')) {
        const value = readFileSync(join(gitdir, rel), 'utf8').trim();
        if (OID.test(value)) found.set(rel, value);
      }
    }
  };
  walk(prefix.replace(/\/$/, ''));
  return [...found].map(([ref, oid]) => ({ ref, oid })).sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
}

async function readPackedRef(gitdir: string, ref: string): Promise<string | null> {
  const packed = await readIfExists(join(gitdir, 'packed-refs'));
  if (packed === null) return null;
  for (const line of packed.split('\n')) {
    // `# pack-refs with: ...` is the header; `^<oid>` peels the annotated tag on the line above.
    if (line.startsWith('#') || line.startsWith('^')) continue;
    const space = line.indexOf(' ');
    if (space === 40 && line.slice(41).trim() === ref) return line.slice(0, 40);
  }
  return null;
}

/** Ref files are a few bytes: read synchronously, which is cheaper than a thread-pool round trip. */
async function readIfExists(path: string): Promise<string | null> {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return null;
    throw err;
  }
}

export interface RefLockOptions {
  /**
   * How long to wait for another writer's `<ref>.lock` to go away (default 5 s); Infinity waits as long as it
   * takes. A lock is never taken from its holder: git holds one for milliseconds, so a lock that stays is a
   * slow writer's, or a crashed one's, which only the process that owns the repository may remove
   * (`removeLeftoverRefLocks`, at start).
   */
  lockTimeoutMs?: number;
  /** Called when the lock is first found held (`waitedMs` 0), then every `waitingEveryMs` (default 5 s) of waiting. */
  onWaiting?: (waitedMs: number) => void;
  waitingEveryMs?: number;
  /** fsync the new ref value before renaming it into place (default true). */
  durable?: boolean;
}

export class RefLockedError extends Error {
  constructor(
    readonly ref: string,
    readonly lockPath: string,
  ) {
    // The message names the ref, not where the repository is: it may reach API callers.
    super(`${ref}.lock is held by another writer`);
  }
}

export type CasResult = { ok: true } | { ok: false; current: string | null };

/**
 * A ref's next value, written (and fsynced) to a file of its own before the ref's lock is taken: the fsync then
 * runs beside the fsyncs of the commit's objects instead of after them, one wait on the disk instead of two.
 * compareAndSwapRef takes the lock by hard-linking this file as `<ref>.lock`, which is as exclusive as git's
 * create-if-absent and leaves the lock holding the fsynced value. The file is `refs/next-<random>.lock`: git
 * never reads a `.lock` file under refs/ as a ref, one left by a crash goes with the other leftover locks, and
 * it is outside `refs/heads`, whose every change the ref watcher looks at.
 */
export interface StagedRef {
  readonly next: string;
  readonly path: string;
  /** Resolves once the value is written (and fsynced when durable); rejects when it could not be. */
  readonly ready: Promise<void>;
}

export function stageRef(gitdir: string, next: string, durable = true): StagedRef {
  const path = join(gitdir, 'refs', `next-${randomBytes(6).toString('hex')}.lock`);
  const ready = (async () => {
    const fd = openCreatingDir(path, 'wx');
    try {
      writeSync(fd, `${next}\n`);
      if (durable) await fsync(fd);
    } finally {
      closeSync(fd);
    }
  })();
  // Awaited by whoever uses it; this only keeps a failure from being reported as unhandled before then.
  ready.catch(() => {});
  return { next, path, ready };
}

/** Removes a staged value once its swap is over, whatever became of it (the ref, if it moved, has its own link). */
export async function discardStagedRef(staged: StagedRef): Promise<void> {
  await staged.ready.catch(() => {});
  rmSync(staged.path, { force: true });
}

/**
 * Points `ref` at `next` if it still points at `expected` (null: the ref must not exist yet).
 * Protocol as in git: create `<ref>.lock` exclusively, compare, write, fsync, rename over the ref. With
 * `staged` (stageRef, for `next`, ready), the lock is created already holding the value, written and fsynced.
 */
export async function compareAndSwapRef(
  gitdir: string,
  ref: string,
  expected: string | null,
  next: string,
  options: RefLockOptions & { staged?: StagedRef } = {},
): Promise<CasResult> {
  const refPath = join(gitdir, ref);
  const lockPath = `${refPath}.lock`;
  const staged = options.staged?.next === next ? options.staged : undefined;
  const fd = await acquireLock(ref, lockPath, options, staged?.path);
  let closed = fd === null;
  let renamed = false;
  try {
    const current = await readRef(gitdir, ref);
    if (current !== expected) return { ok: false, current };
    if (fd !== null) {
      writeSync(fd, `${next}\n`);
      if (options.durable ?? true) await fsync(fd);
      closeSync(fd);
      closed = true;
    }
    renameSync(lockPath, refPath);
    renamed = true;
    return { ok: true };
  } finally {
    if (!closed && fd !== null) closeSync(fd);
    if (!renamed) rmSync(lockPath, { force: true });
  }
}

/**
 * Creates `lockPath`: as a hard link to `staged` when given (null returned: the lock holds its value), else
 * as a new empty file (its descriptor returned). A file system without hard links gets the empty file.
 */
async function acquireLock(ref: string, lockPath: string, options: RefLockOptions, staged?: string): Promise<number | null> {
  const started = Date.now();
  const deadline = started + (options.lockTimeoutMs ?? 5_000);
  const waitingEvery = options.waitingEveryMs ?? 5_000;
  let nextWaitingCall = started;
  let delay = 1;
  let linking = staged !== undefined;
  let madeDir = false;
  for (;;) {
    try {
      if (!linking) return openCreatingDir(lockPath, 'wx');
      linkSync(staged!, lockPath);
      return null;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A new branch's directory (refs/heads/proposals): made on the first miss rather than checked every time.
      if (code === 'ENOENT' && linking && !madeDir) {
        mkdirSync(dirname(lockPath), { recursive: true });
        madeDir = true;
        continue;
      }
      if (linking && (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'EXDEV' || code === 'EMLINK')) {
        linking = false;
        continue;
      }
      if (code !== 'EEXIST') throw err;
    }
    const now = Date.now();
    if (now >= deadline) throw new RefLockedError(ref, lockPath);
    if (options.onWaiting && now >= nextWaitingCall) {
      options.onWaiting(now - started);
      nextWaitingCall = now + waitingEvery;
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 50);
  }
}

/** openSync, creating the file's directory when it is missing: one call where the directory exists, as it nearly always does. */
function openCreatingDir(path: string, flags: string): number {
  try {
    return openSync(path, flags);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(dirname(path), { recursive: true });
    return openSync(path, flags);
  }
}

export interface LeftoverLock {
  /** Relative to the repository: `refs/heads/main.lock`, `packed-refs.lock`. */
  file: string;
}

/**
 * Removes the ref locks a crashed writer left in `gitdir` (`refs/**\/*.lock`, `packed-refs.lock`,
 * `HEAD.lock`), for the one process that owns the repository, at its start, when none of its own writes can
 * be in flight. Git holds a ref lock for milliseconds, so a lock still there, unchanged, after `graceMs`
 * belongs to no running writer (a `flagops import` or an on-disk `git push` that happened to be mid-write
 * gets that long to finish). Returns what was removed.
 */
export async function removeLeftoverRefLocks(gitdir: string, graceMs = 1_000): Promise<LeftoverLock[]> {
  const found = findRefLocks(gitdir);
  if (found.length === 0) return [];
  const deadline = Date.now() + graceMs;
  let waiting = found;
  while (waiting.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    waiting = waiting.filter((lock) => sameFile(statOrNull(join(gitdir, lock.file)), lock.stat));
  }
  const removed: LeftoverLock[] = [];
  for (const lock of waiting) {
    const path = join(gitdir, lock.file);
    if (!sameFile(statOrNull(path), lock.stat)) continue;
    rmSync(path, { force: true });
    removed.push({ file: lock.file });
  }
  return removed;
}

function findRefLocks(gitdir: string): Array<{ file: string; stat: Stats }> {
  const files = ['HEAD.lock', 'packed-refs.lock', ...listLocks(gitdir, 'refs')];
  return files.flatMap((file) => {
    const stat = statOrNull(join(gitdir, file));
    return stat?.isFile() ? [{ file, stat }] : [];
  });
}

function listLocks(gitdir: string, dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(join(gitdir, dir), { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return listLocks(gitdir, rel);
    return entry.isFile() && entry.name.endsWith('.lock') ? [rel] : [];
  });
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function sameFile(a: Stats | null | undefined, b: Stats): boolean {
  return a != null && a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.size === b.size;
}
