import { InvalidInRepositoryError } from '../../foundations/errors/kinds.js';
import { flagUnitKey, holdsBack, invalidFile, unitOfPath } from '../../foundations/repository/held-units.js';
import { classifyPath } from '../../foundations/repository/layout.js';
import type { ValidationIssue } from '../../foundations/validation/issue.js';

/**
 * Why a push must be refused for changing what an invalid file already on main holds back (one the push leaves
 * as it was), one line per file it changes there: what it changes would be committed and not served, so it is
 * refused as the API refuses the same write (409 invalid_in_repository), naming the invalid file. A push that
 * fixes or removes that file changes what is then served, and a kills.yaml is served whatever holds its
 * project back: neither is refused. `left`: the issues of the pushed main that the push does not bring.
 */
export function heldBackChanges(left: readonly ValidationIssue[], changedPaths: Iterable<string>): string[] {
  const projects = new Map<string, ValidationIssue[]>();
  const flags = new Map<string, ValidationIssue[]>();
  for (const issue of left) {
    const unit = issue.file === undefined ? undefined : unitOfPath(issue.file);
    if (!unit || !holdsBack(issue)) continue;
    const [held, key] = unit.kind === 'project' ? [projects, unit.project] : [flags, flagUnitKey(unit.project, unit.flag)];
    held.set(key, [...(held.get(key) ?? []), issue]);
  }
  if (projects.size === 0 && flags.size === 0) return [];
  const problems: string[] = [];
  for (const path of changedPaths) {
    const where = classifyPath(path);
    if (where.kind === 'other' || where.kind === 'kills') continue;
    const ofFlag = where.kind === 'flag' || where.kind === 'config';
    const held = [...(projects.get(where.project) ?? []), ...((ofFlag && flags.get(flagUnitKey(where.project, where.flag))) || [])];
    if (held.length === 0) continue;
    const what = ofFlag ? `flag "${where.flag}"` : `project "${where.project}"`;
    problems.push(`${path}: ${new InvalidInRepositoryError(what, held.map(invalidFile)).message}`);
  }
  return problems;
}
