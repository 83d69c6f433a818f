import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { redact } from './redact.js';

/**
 * A file in an organisation's repository saying it follows a git remote (remote mode), so that a `flagops import`
 * run beside the service, or while it is stopped, knows its commit must reach the remote before main moves.
 * It holds the remote's URL with any password removed: the credentials stay in the service's environment.
 */
const FILE = 'flagops-remote';

/** Records that the repository at `gitdir` follows `url` (the service starts in remote mode). */
export async function recordFollowedRemote(gitdir: string, url: string): Promise<void> {
  await writeFile(join(gitdir, FILE), `${redact(url)}\n`);
}

/** The repository no longer follows a remote (the service starts without one for it). */
export async function forgetFollowedRemote(gitdir: string): Promise<void> {
  await rm(join(gitdir, FILE), { force: true });
}

/** The URL (password removed) of the remote the repository at `gitdir` follows; null when it follows none. */
export async function followedRemote(gitdir: string): Promise<string | null> {
  const text = await readFile(join(gitdir, FILE), 'utf8').catch(() => null);
  return text?.trim() || null;
}
