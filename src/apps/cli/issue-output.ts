import { posix } from 'node:path';
import { formatIssue, type ValidationIssue } from '../../foundations/validation/issue.js';

export const ISSUE_FORMATS = ['text', 'github'] as const;
export type IssueFormat = (typeof ISSUE_FORMATS)[number];

// GitHub Actions workflow commands: https://docs.github.com/actions/reference/workflow-commands-for-github-actions
function escapeData(text: string): string {
  return text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}

function escapeProperty(text: string): string {
  return escapeData(text).replaceAll(':', '%3A').replaceAll(',', '%2C');
}

/**
 * One line per issue, with the file shown relative to where the command ran (`flags/projects/…`) so editors
 * and CI logs link to it. `github` writes `::error` annotations that GitHub shows on the pull request's diff.
 */
export function formatIssueLine(issue: ValidationIssue, dir: string, format: IssueFormat): string {
  const file = issue.file === undefined ? undefined : dir === '.' ? issue.file : posix.join(dir.replaceAll('\\', '/'), issue.file);
  const shown = { ...issue, file };
  if (format === 'text') return formatIssue(shown);
  const props = [
    file && `file=${escapeProperty(file)}`,
    issue.line && `line=${issue.line}`,
    issue.column && `col=${issue.column}`,
    'title=flagops validate',
  ]
    .filter(Boolean)
    .join(',');
  const message = issue.path ? `${issue.path}: ${issue.message}` : issue.message;
  return `::error ${props}::${escapeData(message)}`;
}
