import { randomBytes } from 'node:crypto';
import { appendFile, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileSystemFault } from '../errors/file-system-fault.js';
import { FlagopsError, StateFaultError } from '../errors/kinds.js';

/** Appends `text` to `file` and fsyncs it: once this resolves, a crash cannot lose it. A refused write is a StateFaultError. */
export async function appendFileSynced(file: string, text: string): Promise<void> {
  try {
    await appendFile(file, text, { mode: 0o600 });
    const handle = await open(file, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw stateWriteFault(file, err);
  }
}

/**
 * Replaces `file` so that a crash at any moment leaves either the old or the new content, never a mix:
 * write a temp file beside it, fsync it, rename it over the target, then fsync the directory so the
 * rename itself is durable. A file system that refuses the write (full, read-only) is a StateFaultError.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const dir = path.dirname(file);
  // Named with the writer's pid, so a later start can tell one a killed writer left (TEMP_NAME).
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'w', mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw stateWriteFault(file, err);
  }
  await syncDirectory(dir);
}

/** The temporary files of writeFileAtomic: `.<file>.<pid of the writer>.<8 hex digits>.tmp`. */
const TEMP_NAME = /^\..+\.([1-9][0-9]*)\.[0-9a-f]{8}\.tmp$/;

/**
 * Removes from `dir` the temporary files writeFileAtomic left when its process was killed between writing and
 * renaming them (nothing reads them, and nothing else would ever remove them), and returns their names. Only
 * files of that name whose writer has ended: one of another process still running (`flagops user add` beside
 * the service) may be about to be renamed; one named with this process's pid is a leftover only when older than
 * this process (a pid is reused, as 1 in every container). Nothing else in `dir` is looked at.
 */
export async function removeLeftoverStateTempFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const startedAt = Date.now() - process.uptime() * 1000;
  const removed: string[] = [];
  for (const name of names) {
    const pid = Number(TEMP_NAME.exec(name)?.[1]);
    if (!pid) continue;
    const file = path.join(dir, name);
    try {
      const info = await stat(file);
      if (!info.isFile()) continue;
      if (pid === process.pid ? info.mtimeMs >= startedAt : isRunning(pid)) continue;
      await rm(file, { force: true });
      removed.push(name);
    } catch {
      // gone meanwhile (renamed by its writer, or removed): not ours to report
    }
  }
  return removed;
}

/**
 * The StateFaultError a failed write of the state file `file` is when the file system refused it (a full disk,
 * a read-only one: 503, saying so), or the error itself.
 */
export function stateWriteFault(file: string, err: unknown): unknown {
  if (err instanceof FlagopsError) return err;
  const fault = fileSystemFault(err);
  return fault === undefined ? err : new StateFaultError(path.basename(file), fault.message);
}

async function syncDirectory(dir: string): Promise<void> {
  // Some platforms cannot open a directory for fsync (Windows); the rename is still atomic there.
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // best effort: see above
  } finally {
    await handle?.close();
  }
}

/**
 * A state file that is not what flagops writes (edited by hand, or damaged on disk: flagops itself replaces
 * them whole, so a crash never leaves one half written), or state in the database that is not (a pepper
 * changed apart from the keys hashed with it). The message names the file and what is wrong, and the
 * hint says what the operator can do; the service does not start on it rather than guess.
 */
export class StateFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StateFileError';
  }
}

/**
 * A runtime state file under `<dataDir>/state/` (keys, users, sessions): its parsed JSON, or undefined when it
 * does not exist yet. Not JSON is a StateFileError naming the file; `hint` says what the operator can do about it.
 */
export async function readJsonStateFile(file: string, hint = ''): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadableStateFile(file, err, hint);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new StateFileError(`${file} is not valid JSON: ${(err as Error).message}${hint}`);
  }
}

/**
 * The StateFileError a failed read of the state file `file` is when the file system refused it (a directory in
 * its place, not readable by the service's user), or the error itself.
 */
export function unreadableStateFile(file: string, err: unknown, hint = ''): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string' || !code.startsWith('E')) return err;
  return new StateFileError(`${file} cannot be read (${code}): it must be a file the service's user can read${hint}`);
}

/** Writes a state file readable by its owner only, atomically: a crash leaves the old content or the new. */
export async function writeJsonStateFile(file: string, content: unknown): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(content, null, 2)}\n`, 0o600);
}

/** How long a writer waits for another process's lock on a state file before giving up. */
const LOCK_WAIT_MS = 10_000;

/**
 * Runs `change` holding `<file>.lock`, so that two processes writing one state file (the service and a
 * `flagops` command beside it) read, change and write it one after the other, and neither overwrites what
 * the other just wrote. The lock file holds the holder's pid; one left behind by a process that died is
 * removed.
 */
export async function withStateFileLock<T>(file: string, change: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      try {
        await handle.writeFile(String(process.pid));
      } catch (err) {
        await rm(lock, { force: true }).catch(() => undefined);
        throw err;
      } finally {
        await handle.close();
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw stateWriteFault(file, err);
    }
    const holder = Number.parseInt(await readFile(lock, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(holder) && !isRunning(holder)) {
      await rm(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${path.basename(file)} stayed locked by process ${holder} for ${LOCK_WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 15));
  }
  try {
    return await change();
  } finally {
    await rm(lock, { force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
