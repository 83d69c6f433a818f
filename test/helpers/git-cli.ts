import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The git CLI as an engineer with a clean setup runs it (no user or system config), for tests that clone the
 * service's bare repository, commit and push. Only local paths are ever used.
 */
export function git(cwd: string, ...args: string[]): string {
  return gitWith(cwd, {}, ...args);
}

/** `git` with extra environment (a fixed date, another author) or standard input. */
export function gitWith(cwd: string, options: { env?: Record<string, string>; input?: string }, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    input: options.input,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Erin Engineer',
      GIT_AUTHOR_EMAIL: 'erin@example.com',
      GIT_COMMITTER_NAME: 'Erin Engineer',
      GIT_COMMITTER_EMAIL: 'erin@example.com',
      ...options.env,
    },
  }).trim();
}

/**
 * Clones `gitdir` into a temp checkout, lets `edit` change files in it, commits everything and pushes to main.
 * Returns the pushed commit id. The checkout is deleted afterwards.
 */
export function pushEdit(gitdir: string, edit: (checkout: string) => void, message = 'edit from a checkout'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flagops-checkout-'));
  try {
    const checkout = path.join(dir, 'repo');
    // No gc --auto in the checkout: a local clone takes the repository's many packs, so the commit set off a gc
    // in the background that went on writing in the checkout while it was being deleted (ENOTEMPTY, left in /tmp).
    git(dir, 'clone', '--quiet', '--config', 'gc.auto=0', '--config', 'maintenance.auto=false', gitdir, checkout);
    edit(checkout);
    git(checkout, 'add', '-A');
    git(checkout, 'commit', '--quiet', '-m', message);
    git(checkout, 'push', '--quiet', 'origin', 'HEAD:main');
    return git(checkout, 'rev-parse', 'HEAD');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
