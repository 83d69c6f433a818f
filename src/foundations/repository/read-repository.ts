import type { FlagFile, ProjectFile, RepositoryState } from '@flagops/core';
import { parseDocument } from 'yaml';
import type { ValidationIssue } from '../validation/issue.js';
import { assembleState, type RepositoryEntry } from './assemble-state.js';
import { parseRepositoryFile } from './parse-file.js';
import { type Clash, claimsClash, clashesOf } from './project-checks.js';
import { offsetOfPointer, SourcePositions } from './yaml-position.js';

/**
 * Line and column for the issues of the checks across files (a variant's weight, an unknown segment, a
 * prerequisite cycle), which name a field of a file but were found without its text: found in `texts`.
 */
export function locateIssues(issues: readonly ValidationIssue[], texts: ReadonlyMap<string, string>): ValidationIssue[] {
  const docs = new Map<string, { doc: ReturnType<typeof parseDocument>; positions: SourcePositions }>();
  return issues.map((issue) => {
    if (issue.line !== undefined || issue.file === undefined || issue.path === undefined) return issue;
    const text = texts.get(issue.file);
    if (text === undefined) return issue;
    let parsed = docs.get(issue.file);
    if (!parsed) {
      parsed = { doc: parseDocument(text, { prettyErrors: false }), positions: new SourcePositions(text) };
      docs.set(issue.file, parsed);
    }
    const offset = offsetOfPointer(parsed.doc, issue.path);
    return offset === undefined ? issue : { ...issue, ...parsed.positions.at(offset) };
  });
}

/**
 * Parse every file of a commit and assemble them: all issues, then the state of what is valid. With `locate`,
 * the issues of the checks across files get line and column too (what `flagops validate` and the push check
 * print), as the parser's own issues always do. `incumbents`: see assembleState; `clashes` are the flags
 * found clashing over an id or a key (and projects over an id), the information a caller needs to choose them.
 */
export function readRepositoryFiles(
  files: Iterable<{ path: string; text: string }>,
  commit: string | null,
  options: { locate?: boolean; incumbents?: ReadonlySet<string> } = {},
): { state: RepositoryState; issues: ValidationIssue[]; clashes: Clash[] } {
  const issues: ValidationIssue[] = [];
  const entries: RepositoryEntry[] = [];
  const texts = new Map<string, string>();
  for (const { path, text } of files) {
    if (options.locate) texts.set(path, text);
    const parsed = parseRepositoryFile(path, text);
    if (parsed.issues.length > 0) issues.push(...parsed.issues);
    entries.push(parsed.file ? { path, file: parsed.file } : { path });
  }
  const assembled = assembleState(entries, commit, options.incumbents);
  issues.push(...(options.locate ? locateIssues(assembled.issues, texts) : assembled.issues));
  return { state: assembled.state, issues, clashes: clashesOf(assembled.issues) };
}

/**
 * Of flags clashing over an id or a key (or projects over an id), those that alone held theirs in an earlier
 * commit whose files `textAt` reads (undefined: no such file): the `incumbents` that keep it, so the files that
 * took it are named.
 */
export async function incumbentsAt(clashes: readonly Clash[], textAt: (path: string) => Promise<string | undefined>): Promise<Set<string>> {
  const incumbents = new Set<string>();
  for (const clash of clashes) {
    const held: string[] = [];
    for (const path of clash.paths) {
      const text = await textAt(path);
      const file =
        text === undefined ? undefined : { value: parseRepositoryFile(path, text).file?.value as FlagFile | ProjectFile | undefined };
      if (claimsClash(clash, file)) held.push(path);
    }
    if (held.length === 1) incumbents.add(held[0]);
  }
  return incumbents;
}
