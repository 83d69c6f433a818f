import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The git runner's folder in the data directory: its socket, or the note of where the socket is. */
const RUNNER_DIR = 'git-runner';
const SOCKET = 'runner.sock';
/** In RUNNER_DIR when the socket is in the temp directory: that directory's path, for a later start to remove. */
const ELSEWHERE = 'socket-dir';
const TEMP_PREFIX = 'flagops-git-';
/** The longest socket path that binds everywhere: `sun_path` holds 108 bytes on Linux, 104 on macOS, the NUL included. */
const MAX_SOCKET_PATH = 103;

/** Where the git runner listens, and how to remove it. */
export interface RunnerSocket {
  path: string;
  /** Removes the socket and its directory (and the note of it). */
  remove(): Promise<void>;
}

/**
 * A new place for the git runner's socket, in a directory only this user can enter (so only the service can
 * ask the runner to run git). With a data directory, `<dataDir>/git-runner/runner.sock`, so that a service
 * killed with SIGKILL leaves nothing outside its data directory; a socket path that long cannot bind, though,
 * so for a long data directory path the socket goes to a directory in the system temp directory whose path is
 * noted in `<dataDir>/git-runner/socket-dir` first. Either way, what a dead service left there is removed
 * first: the data directory's lock says no other service runs on it. Without a data directory (tests, tools),
 * a temp directory that only `remove` removes.
 */
export async function makeRunnerSocket(dataDir: string | undefined): Promise<RunnerSocket> {
  if (dataDir === undefined) {
    const dir = await mkdtemp(path.join(tmpdir(), TEMP_PREFIX));
    return { path: path.join(dir, SOCKET), remove: () => rm(dir, { recursive: true, force: true }) };
  }
  const home = path.resolve(dataDir, RUNNER_DIR);
  await removeRunnerSocket(home);
  await mkdir(home, { mode: 0o700 });
  const beside = path.join(home, SOCKET);
  if (Buffer.byteLength(beside) <= MAX_SOCKET_PATH) return { path: beside, remove: () => removeRunnerSocket(home) };
  // Noted before it exists, so that no crash can leave it unnoted.
  const elsewhere = path.join(tmpdir(), `${TEMP_PREFIX}${randomBytes(6).toString('hex')}`);
  await writeFile(path.join(home, ELSEWHERE), `${elsewhere}\n`, { mode: 0o600 });
  await mkdir(elsewhere, { mode: 0o700 });
  return { path: path.join(elsewhere, SOCKET), remove: () => removeRunnerSocket(home) };
}

/** Removes `home` and the temp directory it notes, if any. */
async function removeRunnerSocket(home: string): Promise<void> {
  const noted = await readFile(path.join(home, ELSEWHERE), 'utf8').catch(() => '');
  const elsewhere = noted.trim();
  // Only what this module makes: an absolute path to a directory named as ours.
  if (path.isAbsolute(elsewhere) && path.basename(elsewhere).startsWith(TEMP_PREFIX)) {
    await rm(elsewhere, { recursive: true, force: true });
  }
  await rm(home, { recursive: true, force: true });
}
