import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { fileSystemFault } from '../errors/file-system-fault.js';
import type { Logger } from '../log/logger.js';
import { StartupError } from './startup-error.js';

/** The lock file at the top of a data directory: who runs on it. */
export const LOCK_FILE = 'flagops.lock';

/** What the lock file holds: enough to tell a running holder from a dead one whose pid was handed on. */
export interface LockHolder {
  pid: number;
  /** What holds it: `flagops service`, `flagops eval replica`. */
  what?: string;
  /** The holder's start time in clock ticks since boot (Linux `/proc/<pid>/stat`), when known. */
  processStart?: number;
  /** The kernel's boot id (Linux), when known: a lock from before a reboot is always stale. */
  bootId?: string;
  /** Tells this process's own lock from an equal one written by an earlier process with the same pid. */
  token: string;
  startedAt: string;
}

export interface DataDirLockOptions {
  /** Names the program in messages: `service` or `replica`. */
  what: string;
  /** The setting that chooses the directory, for the message that says how to choose another. */
  setting: string;
  logger: Logger;
}

/** Lock files this process holds, so that a second start in the same process is refused too. */
const heldHere = new Set<string>();

/**
 * One process per data directory. The lock is a file created exclusively (`flagops.lock`, mode 0600) that
 * names the holder's pid and, on Linux, its start time and the boot id. A crash (even SIGKILL) cannot
 * leave it in force: the next start sees that no process with that pid and start time runs (one that has
 * exited but is not reaped by its parent yet, a zombie, does not run), and takes the directory over. A clean
 * stop removes it. On a full disk, where the file's content finds no room, the lock is a symbolic link whose
 * target names the holder in short: the file system keeps a short target in the link itself, so a service
 * restarted on a full disk still starts (and reports the disk full) without giving up the lock.
 */
export class DataDirLock {
  private released = false;

  private constructor(
    readonly file: string,
    private readonly holder: LockHolder,
  ) {}

  /**
   * Throws StartupError naming the running holder of `dataDir`'s lock, if there is one. Reads only, so a
   * refused start changes nothing in the directory; `acquire` takes it.
   */
  static assertFree(dataDir: string, options: DataDirLockOptions): void {
    const file = path.join(dataDir, LOCK_FILE);
    const holder = readHolder(file);
    if (holder !== null && isRunning(holder, file)) throw inUse(dataDir, holder, options);
  }

  /**
   * Takes `dataDir` (created, owner-only, if missing) or throws StartupError naming the running holder, or the
   * lock file and the fault when the file system refuses it.
   */
  static acquire(dataDir: string, options: DataDirLockOptions): DataDirLock {
    const file = path.join(dataDir, LOCK_FILE);
    try {
      return DataDirLock.take(dataDir, file, options);
    } catch (err) {
      const fault = fileSystemFault(err);
      if (fault === undefined) throw err;
      throw new StartupError(`the lock file ${file} cannot be written: ${fault.message}`);
    }
  }

  private static take(dataDir: string, file: string, options: DataDirLockOptions): DataDirLock {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const mine = ownHolder(options.what);
    for (let attempt = 0; attempt < 10; attempt++) {
      if (createExclusive(file, mine)) {
        heldHere.add(file);
        return new DataDirLock(file, mine);
      }
      const seen = readLockFile(file);
      if (seen === null) continue; // removed meanwhile: try again
      const holder = parseHolder(seen);
      if (holder === null && attempt < 3) {
        // Created but not written yet: another start is a step ahead, and its write follows at once.
        waitMs(50);
        continue;
      }
      if (holder !== null && isRunning(holder, file)) throw inUse(dataDir, holder, options);
      // Left by a process that is gone (or cut short by a crash between create and write). Removed only
      // while it still holds what was judged, so that a start that took over a moment ago keeps its lock.
      if (readLockFile(file) === seen) {
        unlinkSync(file);
        options.logger.warn(`removed the lock of a ${options.what} that is no longer running`, { pid: holder?.pid });
      }
    }
    throw new StartupError(
      `could not take the lock of the data directory ${dataDir}: it keeps changing; is another ${options.what} starting?`,
    );
  }

  /** Throws when the lock file no longer names this process (someone removed or replaced it). */
  verify(): void {
    if (readHolder(this.file)?.token !== this.holder.token) {
      throw new StartupError(`the lock ${this.file} was removed or replaced while starting; another process is using the data directory`);
    }
  }

  /** Removes the lock if it is still this process's. Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    heldHere.delete(this.file);
    if (readHolder(this.file)?.token === this.holder.token) unlinkSync(this.file);
  }
}

function inUse(dataDir: string, holder: LockHolder, options: DataDirLockOptions): StartupError {
  return new StartupError(
    `the data directory ${dataDir} is in use by another ${holder.what ?? options.what} (pid ${holder.pid}); stop that one first, or set ${options.setting} to another directory`,
  );
}

function createExclusive(file: string, holder: LockHolder): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, `${JSON.stringify(holder)}\n`);
    fsyncSync(fd);
  } catch (err) {
    if (!noRoom(err)) throw err;
    // A full disk: the empty file would read as a lock cut short by a crash. A link's short target needs no room.
    closeSync(fd);
    fd = -1;
    unlinkSync(file);
    return linkExclusive(file, holder);
  } finally {
    if (fd >= 0) closeSync(fd);
  }
  return true;
}

function noRoom(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** The prefix of a lock that is a symbolic link: `flagops-lock:<pid>:<process start>:<boot id, 8 digits>:<token>`. */
const LINKED = 'flagops-lock:';

/** Takes the lock as a symbolic link naming the holder in short (under 60 bytes, which ext4 keeps in the inode). */
function linkExclusive(file: string, holder: LockHolder): boolean {
  const target = `${LINKED}${holder.pid}:${holder.processStart ?? ''}:${holder.bootId?.slice(0, 8) ?? ''}:${holder.token}`;
  try {
    symlinkSync(target, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  return true;
}

/** The lock file's text (a link's target); null when there is none. */
function readLockFile(file: string): string | null {
  try {
    return lstatSync(file).isSymbolicLink() ? readlinkSync(file, 'utf8') : readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The holder a lock file names; null when it is empty or cut short. */
function parseHolder(text: string): LockHolder | null {
  if (text.startsWith(LINKED)) {
    const [pid, processStart, bootId, token] = text.slice(LINKED.length).split(':');
    const holder: LockHolder = { pid: Number(pid), token: token ?? '', startedAt: '' };
    if (processStart) holder.processStart = Number(processStart);
    if (bootId) holder.bootId = bootId;
    return Number.isInteger(holder.pid) && holder.pid > 0 && holder.token !== '' ? holder : null;
  }
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (Number.isInteger(value.pid) && (value.pid as number) > 0 && typeof value.token === 'string') return value as LockHolder;
  } catch {
    // not JSON: cut short
  }
  return null;
}

/** The holder named in `file`, or null when there is none that can be read. */
function readHolder(file: string): LockHolder | null {
  const text = readLockFile(file);
  return text === null ? null : parseHolder(text);
}

/**
 * True while the process the lock names runs: same pid, not exited (a zombie its parent has not reaped yet
 * still answers signal 0, but has exited), and (where the system says) same boot and start time.
 */
function isRunning(holder: LockHolder, file: string): boolean {
  // This process's pid in a lock it does not hold: an earlier process that had the same pid (a container restart).
  if (holder.pid === process.pid) return heldHere.has(file);
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    // EPERM: it runs, as another user.
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const bootId = readBootId();
  // A linked lock holds the boot id's first digits.
  if (holder.bootId !== undefined && bootId !== undefined && !bootId.startsWith(holder.bootId)) return false;
  const stat = processStat(holder.pid);
  if (stat?.exited) return false;
  if (holder.processStart !== undefined && stat?.start !== undefined && holder.processStart !== stat.start) return false;
  return true;
}

function ownHolder(what: string): LockHolder {
  const holder: LockHolder = { pid: process.pid, what, token: randomBytes(8).toString('hex'), startedAt: new Date().toISOString() };
  const start = procStat(process.pid)?.start;
  const bootId = readBootId();
  if (start !== undefined) holder.processStart = start;
  if (bootId !== undefined) holder.bootId = bootId;
  return holder;
}

interface ProcessStat {
  /** Exited, its exit status not yet collected by its parent (state Z, or X while being removed). */
  exited: boolean;
  /** The start time in clock ticks since boot (Linux), which a later process with the same pid cannot share. */
  start?: number;
}

/** What the system says of a process: Linux's `/proc`, else `ps`; undefined when neither tells. */
function processStat(pid: number): ProcessStat | undefined {
  const stat = procStat(pid);
  if (stat !== undefined || existsSync('/proc/self/stat')) return stat;
  const ps = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8', timeout: 5000 });
  const state = ps.status === 0 ? ps.stdout.trim() : '';
  return state === '' ? undefined : { exited: state.startsWith('Z') };
}

/** `/proc/<pid>/stat` (Linux); undefined when it cannot be read (no such process, or no /proc). */
function procStat(pid: number): ProcessStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces or parentheses itself; field 3 is the state.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[19]);
    return { exited: fields[0] === 'Z' || fields[0] === 'X', start: Number.isSafeInteger(start) ? start : undefined };
  } catch {
    return undefined;
  }
}

function readBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function waitMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
