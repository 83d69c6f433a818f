import type { ValidationIssue } from '../validation/issue.js';
import { classifyPath, layout } from './layout.js';

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

/** Why a file's text is too big for the repository (over 1 MiB as UTF-8), or undefined. */
export function fileSizeRefusal(text: string): string | undefined {
  // Each UTF-16 unit is at most three bytes of UTF-8: a text that short is under the limit without counting.
  if (text.length * 3 <= MAX_FILE_BYTES) return undefined;
  const size = Buffer.byteLength(text, 'utf8');
  return size > MAX_FILE_BYTES ? `${mebibytes(size)} is over the limit of 1 MiB per file` : undefined;
}

/** An issue per entry of the tree the rules refuse (entryRefusal); files outside projects/ are allowed. */
export function treeRefusals(entries: readonly TreeEntry[]): ValidationIssue[] {
  return entries.flatMap((entry) => {
    const why = entryRefusal(entry, { onlyProjects: false });
    return why === undefined ? [] : [{ file: entry.path, message: why }];
  });
}

function mebibytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** Which of two spellings keeps a name: the one with lower case first where they differ (the layout's own names are lower case). */
const keeps = (a: string, b: string) => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] !== a[i].toUpperCase() ? a : b;
  return a;
};

/**
 * Paths under projects/ (files or folders) that differ from another only in letter case: on a case-insensitive
 * checkout (macOS, Windows) the two are one file, and the next `git commit -a` can carry one's content onto
 * the other. One issue per path that loses to its twin, at the shallowest folder where they part. Two flag
 * keys differing only in case are left to the check across flags, which says which flag keeps its key.
 */
export function caseCollisionIssues(paths: Iterable<string>): ValidationIssue[] {
  const spellings = new Map<string, Set<string>>();
  for (const path of paths) {
    if (!path.startsWith(`${layout.projectsDir}/`)) continue;
    let end = path.indexOf('/', layout.projectsDir.length + 1);
    for (; end !== -1; end = path.indexOf('/', end + 1)) add(spellings, path.slice(0, end));
    add(spellings, path);
  }
  const losers = new Map<string, string>();
  for (const group of spellings.values()) {
    if (group.size < 2) continue;
    const [first, ...rest] = group;
    const keeper = rest.reduce(keeps, first);
    for (const path of group) if (path !== keeper && !flagUnitFiles(path, keeper)) losers.set(path, keeper);
  }
  const issues: ValidationIssue[] = [];
  for (const [path, keeper] of [...losers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    // Everything under a folder that collides collides too; the folder says it once.
    if ([...ancestors(path)].some((folder) => losers.has(folder))) continue;
    issues.push({
      file: path,
      message: `differs from ${keeper} only in letter case; the two collide on case-insensitive file systems (macOS and Windows checkouts): rename one`,
    });
  }
  return issues;
}

function add(spellings: Map<string, Set<string>>, path: string): void {
  const folded = path.toLowerCase();
  const group = spellings.get(folded);
  if (group) group.add(path);
  else spellings.set(folded, new Set([path]));
}

function* ancestors(path: string): Generator<string> {
  for (let end = path.lastIndexOf('/'); end > 0; end = path.lastIndexOf('/', end - 1)) yield path.slice(0, end);
}

function flagUnitFiles(a: string, b: string): boolean {
  const [kindA, kindB] = [classifyPath(a).kind, classifyPath(b).kind];
  return (kindA === 'flag' || kindA === 'config') && kindA === kindB;
}
