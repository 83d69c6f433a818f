import { execFile } from 'node:child_process';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Stopped because it ran past `timeoutMs`. */
  timedOut?: boolean;
}

/**
 * Runs the git CLI on a bare repository. Prompts are off (a missing credential fails instead of hanging) and
 * no user or system config applies, so what runs is what the caller says. `signal` stops it early.
 */
export function gitRun(
  gitdir: string,
  args: readonly string[],
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['--git-dir', gitdir, ...args],
      {
        timeout: options.timeoutMs ?? 30_000,
        signal: options.signal,
        env: { PATH: process.env.PATH, HOME: gitdir, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' },
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        const timedOut = err !== null && (err as { killed?: boolean }).killed === true && !options.signal?.aborted;
        resolve({ code, stdout: stdout.trim(), stderr: stderr.trim(), ...(timedOut ? { timedOut } : {}) });
      },
    );
  });
}
