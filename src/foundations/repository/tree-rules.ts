import { layout } from './layout.js';

/**
 * What the flags repository's tree may hold, whatever its files say: the rules a push is checked by and
 * `flagops validate` checks a checkout by, spelled here once.
 */

export const MAX_FILE_BYTES = 1024 * 1024;
const ROOT_FILES = new Set(['README.md', 'README']);

/** An entry of the tree as git holds it: a file and its size, a symbolic link, or a submodule (gitlink). */
export interface TreeEntry {
  path: string;
  kind: 'file' | 'symlink' | 'submodule';
  /** In bytes; files only. */
  size?: number;
}

/**
 * Why `entry` may not be in the repository, or undefined. `onlyProjects`: files outside `projects/` (but a
 * README at the root) are refused too, as on pushes through the service; a git host's repository (remote
 * mode) may hold CI files beside projects/.
 */
export function entryRefusal(entry: TreeEntry, options: { onlyProjects: boolean }): string | undefined {
  if (options.onlyProjects && !entry.path.startsWith(`${layout.projectsDir}/`) && !ROOT_FILES.has(entry.path))
    return `only files under ${layout.projectsDir}/ (and a README.md at the root) may be pushed`;
  if (entry.kind === 'symlink') return 'symbolic links are not allowed; commit the file itself';
  if (entry.kind === 'submodule') return 'submodules are not allowed in the flags repository';
  if ((entry.size ?? 0) > MAX_FILE_BYTES) return `${mebibytes(entry.size!)} is over the limit of 1 MiB per file`;
  return undefined;
}

function mebibytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
