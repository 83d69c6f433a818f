import type { AuditEntry, RepositoryState } from '@flagops/core';
import { diffStates } from '../../foundations/repository/diff-states.js';
import { describeChange } from '../../foundations/repository/format-changes.js';
import { classifyPath } from '../../foundations/repository/layout.js';
import type { FlagRepository } from '../../foundations/storage/index.js';
import { formatIssue, type ValidationIssue } from '../../foundations/validation/issue.js';

const EMPTY: RepositoryState = { commit: null, projects: new Map() };

type History = Pick<FlagRepository, 'readCommit' | 'readState'>;

/** What an entry says of a flag whose files the commit made valid again: `flagops diff` does not compare it either. */
const INVALID_IN_PARENT = 'invalid file in the parent commit made valid: served as committed from here, not compared with the parent';

/**
 * What an audit entry's commit changed for the entry's project, flag and environment, in the words of
 * `flagops diff` (`rolloutPct 10 → 50`, `rule beta-users added`, `killed by deploy-bot (error rate)`): the
 * commit's state compared with its first parent's. Files with issues are left out of both sides, as `flagops
 * diff` does. Undefined when the entry names no commit of this repository (a rejected proposal's record).
 */
export async function entryChanges(repo: History, entry: AuditEntry): Promise<string[] | undefined> {
  let parent: string | undefined;
  try {
    parent = (await repo.readCommit(entry.id)).parents[0];
  } catch {
    return undefined;
  }
  const [parentRead, after] = await Promise.all([parent ? repo.readState(parent) : undefined, repo.readState(entry.id)]);
  const before = parentRead?.state ?? EMPTY;
  // A flag left out because a file of it became invalid is held back, not deleted: its issues say what happened.
  const invalid = invalidFlags(after.issues);
  // One left out of the parent was held back there, not absent: made valid again, it was not added.
  const invalidBefore = invalidFlags(parentRead?.issues ?? []);
  const words: string[] = [];
  const told = new Set<string>();
  for (const change of diffStates(before, after.state)) {
    if (entry.projectSlug !== null && change.project !== entry.projectSlug) continue;
    if (entry.flagKey !== null && change.flag !== entry.flagKey) continue;
    // A project's own changes (its name, segments) belong to entries about no flag; a flag's to entries about that flag.
    if (entry.flagKey === null && change.flag !== null) continue;
    if (entry.environment !== null && change.environment !== null && change.environment !== entry.environment) continue;
    const held = change.flag === null ? undefined : invalid.get(`${change.project}/${change.flag}`);
    if (held) {
      const key = `${change.project}/${change.flag}`;
      if (!told.has(key)) for (const issue of held) words.push(`invalid file, held back (its last valid state serves): ${issue}`);
      told.add(key);
      continue;
    }
    if (change.flag !== null && invalidBefore.has(`${change.project}/${change.flag}`)) {
      const key = `${change.project}/${change.flag}`;
      if (!told.has(key)) words.push(INVALID_IN_PARENT);
      told.add(key);
      continue;
    }
    for (const item of change.changes) {
      if (entry.segmentKey !== undefined && 'segmentKey' in item && item.segmentKey !== entry.segmentKey) continue;
      words.push(describeChange(item));
    }
  }
  return words;
}

/** Per `<project>/<flag>`, the issues of that flag's files (its flag file and its configs), in words. */
function invalidFlags(issues: readonly ValidationIssue[]): Map<string, string[]> {
  const invalid = new Map<string, string[]>();
  for (const issue of issues) {
    const where = issue.file === undefined ? undefined : classifyPath(issue.file);
    if (where === undefined || (where.kind !== 'flag' && where.kind !== 'config')) continue;
    const key = `${where.project}/${where.flag}`;
    invalid.set(key, [...(invalid.get(key) ?? []), formatIssue(issue)]);
  }
  return invalid;
}
