import { type Dirent, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * How long a temporary file must have been left unchanged before it is taken for a leftover. A writer that
 * outlived the service that started it (a `git repack` of its housekeeping, a push's git) keeps writing to its
 * files, so an hour untouched means nobody is writing them; git's own `git prune` waits two weeks.
 */
export const LEFTOVER_AGE_MS = 60 * 60_000;

/**
 * Removes the temporary object files a writer that died left in `gitdir`: in `objects/pack/`, `tmp_pack_*`,
 * `tmp_idx_*` (and git's other `tmp_*` files: `tmp_rev_*`, `tmp_mtimes_*`) and the `.tmp-<pid>-pack*` files
 * of a `git repack`; in `objects/<xx>/`, `tmp_obj_*`. Git reads none of them, but `git count-objects -v`
 * reports them as garbage and nothing else removes them before `git prune`. Only files not modified for
 * `maxAgeMs`: one being written by a process still running is left alone. Half of a pack too: a `pack-*.pack`
 * without its `.idx` (git reads a pack only through its index, put in place last), and a `pack-*.idx` without
 * its `.pack`, which a repack killed while removing the packs it replaced leaves (`git fsck` warns of it, and
 * every reader looks for its pack in vain); as no writer puts an index in place before its pack, the latter at
 * any age. Returns their paths relative to `gitdir`.
 */
export function removeLeftoverTempFiles(gitdir: string, now = Date.now(), maxAgeMs = LEFTOVER_AGE_MS): string[] {
  const objects = join(gitdir, 'objects');
  const packFiles = new Set(entriesOf(join(objects, 'pack')).map((entry) => entry.name));
  const without = (name: string, ext: string, other: string) =>
    name.startsWith('pack-') && name.endsWith(ext) && !packFiles.has(name.slice(0, -ext.length) + other);
  const candidates = [
    ...filesIn(objects, 'pack', (name) => name.startsWith('tmp_') || name.startsWith('.tmp-') || without(name, '.pack', '.idx')),
    ...entriesOf(objects)
      .filter((entry) => entry.isDirectory() && /^[0-9a-f]{2}$/.test(entry.name))
      .flatMap((entry) => filesIn(objects, entry.name, (name) => name.startsWith('tmp_obj_'))),
  ];
  const indexesWithoutPack = filesIn(objects, 'pack', (name) => without(name, '.idx', '.pack'));
  const removed: string[] = [];
  for (const rel of [...candidates, ...indexesWithoutPack]) {
    const file = join(objects, rel);
    try {
      if (!indexesWithoutPack.includes(rel) && now - statSync(file).mtimeMs < maxAgeMs) continue;
      rmSync(file, { force: true });
      removed.push(`objects/${rel}`);
    } catch {
      // gone meanwhile (its writer renamed it): not a leftover
    }
  }
  return removed;
}

function filesIn(objects: string, dir: string, leftover: (name: string) => boolean): string[] {
  return entriesOf(join(objects, dir))
    .filter((entry) => entry.isFile() && leftover(entry.name))
    .map((entry) => `${dir}/${entry.name}`);
}

function entriesOf(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}
