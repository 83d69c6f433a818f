import type { RepositoryState } from '@flagops/core';
import type { ValidationIssue } from '../validation/issue.js';
import { assembleState, type RepositoryEntry } from './assemble-state.js';
import { parseRepositoryFile } from './parse-file.js';

/** Parse every file of a commit and assemble them: all issues, then the state of what is valid. */
export function readRepositoryFiles(
  files: Iterable<{ path: string; text: string }>,
  commit: string | null,
): { state: RepositoryState; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const entries: RepositoryEntry[] = [];
  for (const { path, text } of files) {
    const parsed = parseRepositoryFile(path, text);
    if (parsed.issues.length > 0) issues.push(...parsed.issues);
    entries.push(parsed.file ? { path, file: parsed.file } : { path });
  }
  const assembled = assembleState(entries, commit);
  issues.push(...assembled.issues);
  return { state: assembled.state, issues };
}
