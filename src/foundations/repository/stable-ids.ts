import type { ValidationIssue } from '../validation/issue.js';
import { classifyPath } from './layout.js';
import { parseRepositoryFile } from './parse-file.js';
import { locateIssues } from './read-repository.js';

/**
 * The issue, at the `id:` line, of a project.yaml or flag file whose id `after` differs from the id it had
 * `before` (both texts of one path; an absent `id:` is the derived one), or null. Ids are stable: API paths
 * name projects and flags by id, and SDK keys and keys limited to projects name their projects' ids, so a
 * changed id cuts them off. A file that does not parse in either version has no id to compare.
 */
export function idChangeIssue(path: string, before: string | undefined, after: string | undefined): ValidationIssue | null {
  const where = classifyPath(path);
  if ((where.kind !== 'project' && where.kind !== 'flag') || before === undefined || after === undefined) return null;
  const old = idIn(path, before);
  const now = idIn(path, after);
  if (old === undefined || now === undefined || old === now) return null;
  const naming =
    where.kind === 'project'
      ? `SDK keys, keys limited to the project and API paths name ${old}`
      : `API paths (/api/v1/flags/${old}) name ${old}`;
  const message = `changes the ${where.kind}'s id ${old} → ${now}; ids are stable (${naming}): to change one deliberately, use flagops import --replace --yes`;
  return locateIssues([{ file: path, path: '/id', message }], new Map([[path, after]]))[0];
}

function idIn(path: string, text: string): string | undefined {
  const { file } = parseRepositoryFile(path, text);
  return file?.kind === 'project' || file?.kind === 'flag' ? file.value.id : undefined;
}
