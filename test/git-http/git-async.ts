import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * git as an engineer runs it (no user or system config), asynchronously: against a server in this same
 * process a synchronous call would block the event loop the server needs to answer it.
 */
export function gitAsync(cwd: string, ...args: string[]): Promise<{ ok: boolean; stderr: string; stdout: string }> {
  return gitAsyncWith(cwd, {}, ...args);
}

/** gitAsync with extra environment (GIT_TRACE_CURL, to see the HTTP exchange). */
export async function gitAsyncWith(
  cwd: string,
  extraEnv: Record<string, string>,
  ...args: string[]
): Promise<{ ok: boolean; stderr: string; stdout: string }> {
  try {
    const { stdout, stderr } = await run('git', args, {
      cwd,
      env: {
        PATH: process.env.PATH,
        HOME: cwd,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_TERMINAL_PROMPT: '0',
        GIT_AUTHOR_NAME: 'Erin Engineer',
        GIT_AUTHOR_EMAIL: 'erin@example.com',
        GIT_COMMITTER_NAME: 'Erin Engineer',
        GIT_COMMITTER_EMAIL: 'erin@example.com',
        ...extraEnv,
      },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { ok: true, stdout: stdout.trim(), stderr };
  } catch (err) {
    const e = err as { stdout: string; stderr: string };
    return { ok: false, stdout: e.stdout, stderr: e.stderr };
  }
}
