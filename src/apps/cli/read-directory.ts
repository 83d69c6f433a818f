import { type Dirent, existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { layout } from '../../foundations/repository/layout.js';
import type { TreeEntry } from '../../foundations/repository/tree-rules.js';

/** True when `path` is a directory; false when it is anything else or is not there. */
export function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

export interface DirectoryFile {
  /** Repository path, `/`-separated: `projects/shop/flags/checkout-v2.yaml`. */
  path: string;
  text: string;
}

/**
 * The YAML files of a checked-out flags repository's `projects/` tree (nothing else in it is a flag file).
 * Hidden entries (`.git`, editor files) and symbolic links are skipped; paths are sorted, so output is stable.
 * Resolves to undefined when `dir` has no projects/ folder.
 */
export async function readRepositoryDirectory(dir: string): Promise<DirectoryFile[] | undefined> {
  return (await readRepositoryTree(dir))?.files;
}

/**
 * readRepositoryDirectory's files, and every entry of the `projects/` tree as git would hold it (a file and its
 * size, a symbolic link, a submodule's checkout), for the tree's rules (tree-rules.ts). Reads synchronously:
 * for a command line, thousands of small files read with a fifth of the CPU time without a promise and a
 * thread-pool hop each (4,000 files: 65 ms).
 */
export async function readRepositoryTree(dir: string): Promise<{ files: DirectoryFile[]; entries: TreeEntry[] } | undefined> {
  const files: DirectoryFile[] = [];
  const entries: TreeEntry[] = [];
  const walk = (relative: string): boolean => {
    let dirents: Dirent[];
    try {
      dirents = readdirSync(join(dir, relative), { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && relative === layout.projectsDir) return false;
      throw err;
    }
    for (const entry of dirents) {
      if (entry.name.startsWith('.')) continue;
      const path = `${relative}/${entry.name}`;
      if (entry.isSymbolicLink()) entries.push({ path, kind: 'symlink' });
      else if (entry.isDirectory()) {
        // A submodule's checkout has its own .git (a file that points into the outer repository's).
        if (existsSync(join(dir, path, '.git'))) entries.push({ path, kind: 'submodule' });
        else walk(path);
      } else if (entry.isFile()) {
        entries.push({ path, kind: 'file', size: lstatSync(join(dir, path)).size });
        // Any case of the extension: a checkout.YAML is reported as out of place, never passed over.
        if (/\.ya?ml$/i.test(entry.name)) files.push({ path, text: readFileSync(join(dir, path), 'utf8') });
      }
    }
    return true;
  };
  if (!walk(layout.projectsDir)) return undefined;
  const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  return { files: files.sort(byPath), entries: entries.sort(byPath) };
}
