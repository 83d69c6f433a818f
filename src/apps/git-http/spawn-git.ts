import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** `nice`, to start a process at the lowest CPU priority (absent on some systems: then at the starter's). */
export const NICE = ['/usr/bin/nice', '/bin/nice'].find((file) => existsSync(file));

/**
 * Starts git for git over HTTP, its standard input, output and error piped, in the session of the process
 * that starts it: never in a session of its own (`detached`). On Linux a session is a scheduling group
 * (sched_autogroup) that shares the CPU with the service's group as an equal, whatever git's nice value: a
 * clone in its own session took CPU from the evaluation server as if it ran at normal priority. In the
 * starter's session, `nice 19` holds (`lowest`: set it here; the git runner is niced itself, and so is all it starts).
 */
export function spawnGit(args: string[], env: Record<string, string>, lowest: boolean): ChildProcessWithoutNullStreams {
  const [file, argv] = lowest && NICE ? [NICE, ['-n', '19', 'git', ...args]] : ['git', args];
  return spawn(file, argv, { env, stdio: ['pipe', 'pipe', 'pipe'] });
}

/**
 * Stops a git started by spawnGit, and what it started: `git http-backend` stops the git it runs
 * (upload-pack, receive-pack) when it is stopped, and pack-objects ends at its next write to the upload-pack
 * that is gone.
 */
export function stopGit(git: ChildProcess): void {
  if (git.exitCode !== null || git.signalCode !== null) return;
  git.kill('SIGTERM');
}
