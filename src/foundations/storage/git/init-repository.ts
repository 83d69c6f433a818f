import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

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
`;

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
