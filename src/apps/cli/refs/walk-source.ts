import { type Dirent, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type IgnoreFile, isIgnored, parseGitignore } from './gitignore.js';

/**
 * Directories never entered: version control, installed dependencies and vendored code. Code references are
 * about the code a team owns; a dependency that names a flag key is not a reference to clean up.
 */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set([
  '.git',
  '.hg',
  '.svn',
  'node_modules',
  'bower_components',
  'vendor',
  'third_party',
  '.venv',
  '__pycache__',
]);

export interface WalkOptions {
  /** Relative paths (`/`-separated) of directories not to enter, such as the flags repository's projects/. */
  exclude?: ReadonlySet<string>;
}

/**
 * Calls `visit` with the path relative to `root` (`/`-separated) of every regular file of the tree that is
 * not ignored: skipped directories, .gitignore files (nested ones too, and the root's .git/info/exclude) and
 * symbolic links (never followed, so a link cannot loop) are left out. Directories are visited in name order,
 * so output is stable. Synchronous: a CLI scan is faster without a promise per directory and file.
 */
export function walkSource(root: string, visit: (path: string) => void, options: WalkOptions = {}): void {
  const rootIgnores: IgnoreFile[] = [];
  const exclude = readText(join(root, '.git', 'info', 'exclude'));
  if (exclude !== undefined) rootIgnores.push(parseGitignore(exclude, ''));
  walk(root, '', rootIgnores, visit, options.exclude ?? new Set());
}

function walk(root: string, dir: string, inherited: IgnoreFile[], visit: (path: string) => void, exclude: ReadonlySet<string>): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir === '' ? root : join(root, dir), { withFileTypes: true });
  } catch (err) {
    // A directory that vanished or cannot be read during the scan holds no references we can report.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'ENOTDIR') return;
    throw err;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let ignores = inherited;
  if (entries.some((e) => e.name === '.gitignore' && e.isFile())) {
    const text = readText(join(root, dir, '.gitignore'));
    if (text !== undefined) ignores = [...inherited, parseGitignore(text, dir)];
  }
  for (const entry of entries) {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (SKIPPED_DIRECTORIES.has(entry.name) || exclude.has(path)) continue;
      if (ignores.length > 0 && isIgnored(ignores, path, true)) continue;
      walk(root, path, ignores, visit, exclude);
    } else if (entry.isFile()) {
      if (ignores.length > 0 && isIgnored(ignores, path, false)) continue;
      visit(path);
    }
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
