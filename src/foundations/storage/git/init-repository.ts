import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { gitRun } from './git-cli.js';

/**
 * What keeps git from packing the repository on its own: the service's housekeeping does (housekeeping.ts). A
 * push's `git gc --auto` (receive.autogc), or a fetch's, would race the service's repack, each removing packs
 * the other is reading, and once one failed every later push would print its `remote: fatal:` lines.
 */
const PACKED_BY_THE_SERVICE: Readonly<Record<string, string>> = { 'receive.autogc': 'false', 'gc.auto': '0', 'maintenance.auto': 'false' };

/**
 * The config of a new organisation repository. The git log is the audit trail, which is append-only
 * so pushes may neither rewrite nor delete branches.
 */
const CONFIG = `[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = true
[receive]
\tdenyNonFastForwards = true
\tdenyDeletes = true
\tautogc = false
[gc]
\tauto = 0
[maintenance]
\tauto = false
`;

/**
 * Sets PACKED_BY_THE_SERVICE in the config of a repository made before it was in CONFIG (or changed since);
 * returns the keys it set. Throws with git's message when the config cannot be read or written.
 */
export async function leavePackingToTheService(gitdir: string): Promise<string[]> {
  const keys = Object.keys(PACKED_BY_THE_SERVICE);
  const pattern = `^(${keys.map((key) => key.replace('.', '\\.')).join('|')})$`;
  const current = await gitRun(gitdir, ['config', '--get-regexp', pattern]);
  // 1: none of them is set.
  if (current.code !== 0 && current.code !== 1) throw new Error(current.stderr.trim() || `git config exited with ${current.code}`);
  const set = new Map(current.stdout.split('\n').map((line) => line.split(' ') as [string, string]));
  const changed: string[] = [];
  for (const key of keys) {
    if (set.get(key.toLowerCase()) === PACKED_BY_THE_SERVICE[key]) continue;
    const result = await gitRun(gitdir, ['config', key, PACKED_BY_THE_SERVICE[key]]);
    if (result.code !== 0) throw new Error(result.stderr.trim() || `git config exited with ${result.code}`);
    changed.push(key);
  }
  return changed;
}

export async function isRepository(gitdir: string): Promise<boolean> {
  try {
    await stat(join(gitdir, 'HEAD'));
    await stat(join(gitdir, 'objects'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Creates a bare repository whose HEAD is `refs/heads/main`. It is built in a sibling temp directory and
 * renamed into place, so a crash never leaves a half-made repository and two processes creating the same
 * one at once both end up using the one that won.
 */
export async function initBareRepository(gitdir: string): Promise<void> {
  if (await isRepository(gitdir)) return;
  const parent = dirname(gitdir);
  await mkdir(parent, { recursive: true });
  const tmp = join(parent, `.${basename(gitdir)}.tmp-${randomBytes(6).toString('hex')}`);
  try {
    for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'info', 'hooks']) {
      await mkdir(join(tmp, dir), { recursive: true });
    }
    await writeFile(join(tmp, 'config'), CONFIG);
    await writeFile(join(tmp, 'description'), 'flagops flags repository\n');
    await writeFile(join(tmp, 'HEAD'), 'ref: refs/heads/main\n');
    await rename(tmp, gitdir);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException).code;
    // Someone else's rename won the race (or an empty directory was there): use what is there.
    if ((code === 'ENOTEMPTY' || code === 'EEXIST') && (await isRepository(gitdir))) return;
    throw err;
  }
}
