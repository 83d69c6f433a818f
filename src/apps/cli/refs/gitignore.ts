/** One pattern line of a .gitignore file, compiled. */
interface IgnoreRule {
  regex: RegExp;
  negate: boolean;
  /** A pattern ending in `/` matches directories only. */
  dirOnly: boolean;
  /** A pattern without a `/` but at its end matches the last path segment at any depth. */
  basename: boolean;
}

/** The rules of one .gitignore, with the directory (relative to the scanned root, '' for the root) it sits in. */
export interface IgnoreFile {
  base: string;
  rules: IgnoreRule[];
}

/**
 * Parses a .gitignore the way git does, for what a source tree holds: comments, blank lines, trailing spaces,
 * `\` escapes, `!` negation, directory-only patterns (`build/`), anchored patterns (a `/` at the start or in
 * the middle: relative to the file's directory), `*`, `?`, `[…]` and `**` (leading `**\/`, trailing `/**`,
 * inner `/**\/`). `base` is the file's directory relative to the scanned root, `/`-separated.
 */
export function parseGitignore(text: string, base: string): IgnoreFile {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split('\n')) {
    const rule = compileLine(raw.endsWith('\r') ? raw.slice(0, -1) : raw);
    if (rule) rules.push(rule);
  }
  return { base, rules };
}

function compileLine(line: string): IgnoreRule | undefined {
  if (line === '' || line.startsWith('#')) return undefined;
  // Trailing spaces are dropped unless escaped with a backslash.
  let end = line.length;
  while (end > 0 && line[end - 1] === ' ' && line[end - 2] !== '\\') end--;
  let pattern = line.slice(0, end);
  let negate = false;
  if (pattern.startsWith('!')) {
    negate = true;
    pattern = pattern.slice(1);
  }
  let dirOnly = false;
  if (pattern.endsWith('/') && !pattern.endsWith('\\/')) {
    dirOnly = true;
    pattern = pattern.replace(/\/+$/, '');
  }
  if (pattern === '') return undefined;
  const anchored = pattern.includes('/');
  if (pattern.startsWith('/')) pattern = pattern.slice(1);
  return { regex: new RegExp(`^${globToRegex(pattern)}$`), negate, dirOnly, basename: !anchored };
}

/** A glob in gitignore syntax as a regular-expression source; `*`, `?` and classes never match `/`. */
function globToRegex(glob: string): string {
  let out = '';
  let i = 0;
  while (i < glob.length) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      const atStart = i === 0 || glob[i - 1] === '/';
      const atEnd = i + 2 === glob.length || glob[i + 2] === '/';
      if (atStart && atEnd) {
        if (i + 2 === glob.length)
          out += '.*'; // `dir/**`: everything inside
        else out += '(?:.*/)?'; // `**/x`, `a/**/b`: zero or more directories
        i += i + 2 === glob.length ? 2 : 3;
        continue;
      }
      // Other runs of asterisks are ordinary asterisks.
      while (glob[i] === '*') i++;
      out += '[^/]*';
      continue;
    }
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '\\' && i + 1 < glob.length) {
      i++;
      out += escapeChar(glob[i]);
    } else if (c === '[') {
      const close = classEnd(glob, i);
      if (close < 0) out += '\\[';
      else {
        let body = glob.slice(i + 1, close);
        let negated = false;
        if (body.startsWith('!') || body.startsWith('^')) {
          negated = true;
          body = body.slice(1);
        }
        const escaped = body.replace(/\\(.)/g, '$1').replace(/[\\\]^]/g, '\\$&');
        out += negated ? `[^/${escaped}]` : `(?!/)[${escaped}]`;
        i = close;
      }
    } else out += escapeChar(c);
    i++;
  }
  return out;
}

/** The index of the `]` closing the class opened at `open`, or -1 (then `[` is literal). */
function classEnd(glob: string, open: number): number {
  let i = open + 1;
  if (glob[i] === '!' || glob[i] === '^') i++;
  if (glob[i] === ']') i++; // a leading `]` belongs to the class
  for (; i < glob.length; i++) {
    if (glob[i] === '\\') i++;
    else if (glob[i] === ']') return i;
  }
  return -1;
}

function escapeChar(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}

/**
 * Whether `path` (relative to the scanned root, `/`-separated) is ignored by the .gitignore files that apply to
 * it, outermost first. As in git, a deeper file's rules win over an outer one's and, within a file, the last
 * matching line wins; a directory that is ignored is not entered, so nothing below it can be re-included.
 */
export function isIgnored(files: readonly IgnoreFile[], path: string, isDir: boolean): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  for (let f = files.length - 1; f >= 0; f--) {
    const { base, rules } = files[f];
    if (base !== '' && !path.startsWith(`${base}/`)) continue; // a .gitignore applies below its directory only
    const relative = base === '' ? path : path.slice(base.length + 1);
    for (let r = rules.length - 1; r >= 0; r--) {
      const rule = rules[r];
      if (rule.dirOnly && !isDir) continue;
      if (rule.regex.test(rule.basename ? name : relative)) return !rule.negate;
    }
  }
  return false;
}
