import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fsync } from './fsync.js';

/**
 * Reading and compare-and-swap updating of a branch ref with git's own lock protocol, so that the git CLI
 * (`git push` into the bare repository, `git pack-refs`) and other processes interoperate with us.
 */

export const MAIN_REF = 'refs/heads/main';

const OID = /^[0-9a-f]{40}$/;

/** The oid a ref points at: the loose file wins over `packed-refs`, as in git. Null when the ref does not exist. */
export async function readRef(gitdir: string, ref: string, depth = 0): Promise<string | null> {
  const loose = await readIfExists(join(gitdir, ref));
  if (loose !== null) {
    const value = loose.trim();
    if (value.startsWith('ref: ')) {
      // git gives up on symbolic refs nested deeper than 5; so does this, rather than loop on a cycle.
      if (depth >= 5) throw new Error(`symbolic ref ${ref} nests too deep`);
      return readRef(gitdir, value.slice(5).trim(), depth + 1);
    }
    if (!OID.test(value)) throw new Error(`ref ${ref} holds ${JSON.stringify(value)}, not an object id`);
    return value;
  }
  return readPackedRef(gitdir, ref);
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
  /** How long to wait for another writer's `<ref>.lock` to go away. */
  lockTimeoutMs?: number;
  /** A lock older than this (default 10 s; git holds one for milliseconds) was left by a crashed process: removed. */
  staleLockMs?: number;
  /** fsync the new ref value before renaming it into place (default true). */
  durable?: boolean;
}

export class RefLockedError extends Error {
  constructor(readonly lockPath: string) {
    super(`${lockPath} is held by another writer; if no git process is running, remove it`);
  }
}

export type CasResult = { ok: true } | { ok: false; current: string | null };

/**
 * Points `ref` at `next` if it still points at `expected` (null: the ref must not exist yet).
 * Protocol as in git: create `<ref>.lock` exclusively, compare, write, fsync, rename over the ref.
 */
export async function compareAndSwapRef(gitdir: string, ref: string, expected: string | null, next: string, options: RefLockOptions = {}): Promise<CasResult> {
  const refPath = join(gitdir, ref);
  const lockPath = `${refPath}.lock`;
  mkdirSync(dirname(refPath), { recursive: true });
  const fd = await acquireLock(lockPath, options);
  let closed = false;
  let renamed = false;
  try {
    const current = await readRef(gitdir, ref);
    if (current !== expected) return { ok: false, current };
    writeSync(fd, `${next}\n`);
    if (options.durable ?? true) await fsync(fd);
    closeSync(fd);
    closed = true;
    renameSync(lockPath, refPath);
    renamed = true;
    return { ok: true };
  } finally {
    if (!closed) closeSync(fd);
    if (!renamed) rmSync(lockPath, { force: true });
  }
}

async function acquireLock(lockPath: string, options: RefLockOptions): Promise<number> {
  const timeout = options.lockTimeoutMs ?? 5_000;
  const stale = options.staleLockMs ?? 10_000;
  const deadline = Date.now() + timeout;
  let delay = 1;
  for (;;) {
    try {
      return openSync(lockPath, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const age = lockAge(lockPath);
    if (age !== null && age > stale) {
      rmSync(lockPath, { force: true });
      continue;
    }
    if (Date.now() >= deadline) throw new RefLockedError(lockPath);
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 50);
  }
}

function lockAge(lockPath: string): number | null {
  try {
    return Date.now() - statSync(lockPath).mtimeMs;
  } catch {
    return null;
  }
}
