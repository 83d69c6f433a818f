import { type Dirent, readdirSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { layout } from '../../foundations/repository/layout.js';

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
 * Resolves to undefined when `dir` has no projects/ folder. Reads synchronously: for a command line, thousands of
 * small files read with a fifth of the CPU time without a promise and a thread-pool hop each (4,000 files: 65 ms).
 */
export async function readRepositoryDirectory(dir: string): Promise<DirectoryFile[] | undefined> {
  const files: DirectoryFile[] = [];
  const walk = (relative: string): boolean => {
    let entries: Dirent[];
    try {
      entries = readdirSync(join(dir, relative), { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && relative === layout.projectsDir) return false;
      throw err;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && /\.ya?ml$/.test(entry.name)) files.push({ path, text: readFileSync(join(dir, path), 'utf8') });
    }
    return true;
  };
  if (!walk(layout.projectsDir)) return undefined;
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
