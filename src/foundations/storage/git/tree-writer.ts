import { InvalidInputError } from '../../errors/kinds.js';
import { compareTreeEntries, isTreeMode, MODE_FILE, MODE_TREE, serializeTree, type TreeEntry } from './git-objects.js';
import type { ObjectStore, WriteBatch } from './object-store.js';
import { TreeBytes } from './tree-bytes.js';

/** path → blob oid to write there, or null to delete the file. */
export type BlobChanges = ReadonlyMap<string, string | null>;

interface DirChanges {
  files: Map<string, string | null>;
  dirs: Map<string, DirChanges>;
}

/**
 * Writes the trees of `base` with `changes` applied, bottom-up, and returns the new root tree oid. Only the
 * trees on a changed path are rebuilt: the rest of the commit is shared by oid. Entries stay in git order by
 * binary-search insertion, so a one-file change in a directory of 10,000 files sorts nothing, and the
 * new tree's bytes are the base's with the changed entries spliced in (TreeBytes), not serialized again.
 */
export async function writeTreeChanges(
  objects: ObjectStore,
  batch: WriteBatch,
  base: string | null,
  changes: BlobChanges,
): Promise<string> {
  const root: DirChanges = { files: new Map(), dirs: new Map() };
  for (const [path, oid] of changes) {
    const parts = path.split('/');
    let dir = root;
    for (const part of parts.slice(0, -1)) {
      let next = dir.dirs.get(part);
      if (!next) {
        next = { files: new Map(), dirs: new Map() };
        dir.dirs.set(part, next);
      }
      dir = next;
    }
    dir.files.set(parts[parts.length - 1], oid);
  }
  return (await writeDir(objects, batch, '', base, root)) ?? batch.write('tree', serializeTree([]));
}

/** The new tree oid, or null when the directory ends up empty (git has no empty directories). */
async function writeDir(
  objects: ObjectStore,
  batch: WriteBatch,
  path: string,
  base: string | null,
  changes: DirChanges,
): Promise<string | null> {
  const baseTree = base ? await objects.readTreeObject(base) : undefined;
  const entries = baseTree ? [...baseTree.entries] : [];
  for (const [name, oid] of changes.files) {
    const at = find(entries, name);
    const existing = at >= 0 ? entries[at] : undefined;
    if (existing && isTreeMode(existing.mode))
      throw new InvalidInputError(`${join(path, name)} is a directory, not a file`, join(path, name));
    if (oid === null) {
      if (at >= 0) entries.splice(at, 1);
    } else if (existing) {
      entries[at] = { mode: existing.mode, name, oid };
    } else {
      insert(entries, { mode: MODE_FILE, name, oid });
    }
  }
  const subdirs = await Promise.all(
    [...changes.dirs].map(async ([name, sub]) => {
      const at = find(entries, name);
      const existing = at >= 0 ? entries[at] : undefined;
      if (existing && !isTreeMode(existing.mode))
        throw new InvalidInputError(`${join(path, name)} is a file, not a directory`, join(path, name));
      return { name, oid: await writeDir(objects, batch, join(path, name), existing?.oid ?? null, sub) };
    }),
  );
  for (const { name, oid } of subdirs) {
    const at = find(entries, name);
    if (oid === null) {
      if (at >= 0) entries.splice(at, 1);
    } else if (at >= 0) {
      entries[at] = { mode: MODE_TREE, name, oid };
    } else {
      insert(entries, { mode: MODE_TREE, name, oid });
    }
  }
  if (entries.length === 0) return null;
  const content = baseTree?.content ? baseTree.content.splice(entries) : TreeBytes.of(serializeTree(entries), entries);
  const oid = batch.write('tree', content);
  objects.rememberTree(oid, entries, content);
  return oid;
}

function join(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}

/** Index of the entry called `name` (file or directory), or -1. */
function find(entries: readonly TreeEntry[], name: string): number {
  // A name sorts as `name` when it is a file and as `name/` when it is a directory; look for both.
  for (const mode of [MODE_FILE, MODE_TREE]) {
    const at = lowerBound(entries, { mode, name, oid: '' });
    if (at < entries.length && entries[at].name === name) return at;
  }
  return -1;
}

function insert(entries: TreeEntry[], entry: TreeEntry): void {
  entries.splice(lowerBound(entries, entry), 0, entry);
}

function lowerBound(entries: readonly TreeEntry[], probe: TreeEntry): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareTreeEntries(entries[mid], probe) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
