import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Stopped because it ran past `timeoutMs`. */
  timedOut?: boolean;
}

export interface GitRunOptions {
  timeoutMs?: number;
  /** Stops git early. */
  signal?: AbortSignal;
  /**
   * Configuration given to git in its environment (GIT_CONFIG_COUNT): what must not be on its command line,
   * which every user of the machine can read (a remote's URL with its credentials).
   */
  config?: Readonly<Record<string, string>>;
  /** More environment for git (GIT_AUTHOR_NAME…). */
  env?: Readonly<Record<string, string>>;
}

/**
 * Starts git with these arguments and environment and resolves with how it ended (never rejects): by default
 * from this process (execGit); the service passes one that starts it from its small git runner process, since
 * forking the service itself stalls its event loop in proportion to the memory it holds.
 */
export type GitLauncher = (args: readonly string[], env: Record<string, string>, options: GitRunOptions) => Promise<GitResult>;

/**
 * Runs the git CLI on a bare repository. Prompts are off (a missing credential fails instead of hanging) and
 * no user or system config applies, so what runs is what the caller says. `launch` starts it (default: execGit).
 */
export function gitRun(
  gitdir: string,
  args: readonly string[],
  options: GitRunOptions & { launch?: GitLauncher } = {},
): Promise<GitResult> {
  const env: Record<string, string> = { HOME: gitdir, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };
  if (process.env.PATH !== undefined) env.PATH = process.env.PATH;
  const config = Object.entries(options.config ?? {});
  if (config.length > 0) {
    env.GIT_CONFIG_COUNT = String(config.length);
    config.forEach(([key, value], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = key;
      env[`GIT_CONFIG_VALUE_${i}`] = value;
    });
  }
  Object.assign(env, options.env);
  return (options.launch ?? execGit)(['--git-dir', gitdir, ...args], env, options);
}

/** Starts git from this process, at this process's priority. */
export const execGit: GitLauncher = (args, env, options) => execCommand(['git', ...args], env, options);

const NICE = ['/usr/bin/nice', '/bin/nice'].find((file) => existsSync(file));
const IONICE = ['/usr/bin/ionice', '/bin/ionice'].find((file) => existsSync(file));

/**
 * The command that runs `command` at the lowest CPU priority (`nice -n 19`) and in the idle I/O class
 * (`ionice -c 3`, `-t`: run anyway where the I/O scheduler or the kernel refuses it), with whichever of the two
 * this system has: what background work that must not slow serving (packing) runs as.
 */
export function atLowestPriority(command: readonly string[]): string[] {
  return [...(NICE ? [NICE, '-n', '19'] : []), ...(IONICE ? [IONICE, '-c', '3', '-t'] : []), ...command];
}

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((file) => existsSync(file));
/** Whether this system's setpriv knows --pdeathsig (util-linux 2.33 and later); asked once, when first needed. */
let pdeathsig: boolean | undefined;

/**
 * The command that runs `command` and gets SIGTERM when this process dies, even by SIGKILL (`setpriv
 * --pdeathsig`, Linux), where the system has it. A `git repack -d` started by a service that was killed then
 * ends (removing its own temporary files), instead of removing packs beside the next service's start.
 */
export function endingWithThisProcess(command: readonly string[]): string[] {
  if (!SETPRIV) return [...command];
  pdeathsig ??= spawnSync(SETPRIV, ['--pdeathsig', 'TERM', 'true'], { stdio: 'ignore' }).status === 0;
  return pdeathsig ? [SETPRIV, '--pdeathsig', 'TERM', ...command] : [...command];
}

/**
 * Starts git from this process at the lowest CPU and I/O priority (atLowestPriority), ending when this process
 * dies (endingWithThisProcess): what housekeeping runs as.
 */
export const execGitAtLowestPriority: GitLauncher = (args, env, options) =>
  execCommand(endingWithThisProcess(atLowestPriority(['git', ...args])), env, options);

/**
 * Runs a command to its end. `signal` stops it (SIGTERM) and the result still comes once it has exited:
 * execFile's own `signal` answers at once, while git may still be writing into the repository.
 */
function execCommand(command: readonly string[], env: Record<string, string>, options: GitRunOptions): Promise<GitResult> {
  const [file, ...args] = command;
  return new Promise((resolve) => {
    if (options.signal?.aborted) {
      resolve({ code: 1, stdout: '', stderr: 'stopped before it started' });
      return;
    }
    const child = execFile(
      file,
      args,
      { timeout: options.timeoutMs ?? 30_000, env, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        options.signal?.removeEventListener('abort', stop);
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        const timedOut = err !== null && (err as { killed?: boolean }).killed === true && !options.signal?.aborted;
        resolve({ code, stdout: stdout.trim(), stderr: stderr.trim(), ...(timedOut ? { timedOut } : {}) });
      },
    );
    const stop = () => child.kill('SIGTERM');
    options.signal?.addEventListener('abort', stop, { once: true });
  });
}
