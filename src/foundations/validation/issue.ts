/** One problem found in a file or a request body, with enough position to fix it. */
export interface ValidationIssue {
  /** Repository path of the file, or `body` for a request body. */
  file?: string;
  /** 1-based position, for YAML syntax errors and, where known, schema errors. */
  line?: number;
  column?: number;
  /** JSON pointer of the offending value inside the document (`/rules/2/conditions/0/value`). */
  path?: string;
  message: string;
}

/** `file:line:column: path: message`, the form editors and CI logs link to. */
export function formatIssue(issue: ValidationIssue): string {
  let where = issue.file ?? '';
  if (issue.line !== undefined) where += `:${issue.line}${issue.column !== undefined ? `:${issue.column}` : ''}`;
  const path = issue.path ? `${issue.path}: ` : '';
  return where ? `${where}: ${path}${issue.message}` : `${path}${issue.message}`;
}

/**
 * Issues in `after` that `before` did not have: what a change would make worse (an API write, a push).
 * Compared without line and column, so that rewriting a file another issue points into (a kills file naming a
 * deleted flag) does not count as a new problem: a valid change is never refused for what others left invalid.
 */
export function newIssues(before: readonly ValidationIssue[], after: readonly ValidationIssue[]): ValidationIssue[] {
  const where = (issue: ValidationIssue) => formatIssue({ file: issue.file, path: issue.path, message: issue.message });
  const known = new Set(before.map(where));
  return after.filter((issue) => !known.has(where(issue)));
}
