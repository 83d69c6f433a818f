import type { AuditEntry, RepositoryState } from '@flagops/core';
import { diffStates } from '../../foundations/repository/diff-states.js';
import { describeChange } from '../../foundations/repository/format-changes.js';
import type { FlagRepository } from '../../foundations/storage/index.js';

const EMPTY: RepositoryState = { commit: null, projects: new Map() };

type History = Pick<FlagRepository, 'readCommit' | 'readState'>;

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
  const [before, after] = await Promise.all([parent ? repo.readState(parent).then((s) => s.state) : EMPTY, repo.readState(entry.id)]);
  const words: string[] = [];
  for (const change of diffStates(before, after.state)) {
    if (entry.projectSlug !== null && change.project !== entry.projectSlug) continue;
    if (entry.flagKey !== null && change.flag !== entry.flagKey) continue;
    // A project's own changes (its name, segments) belong to entries about no flag; a flag's to entries about that flag.
    if (entry.flagKey === null && change.flag !== null) continue;
    if (entry.environment !== null && change.environment !== null && change.environment !== entry.environment) continue;
    for (const item of change.changes) {
      if (entry.segmentKey !== undefined && 'segmentKey' in item && item.segmentKey !== entry.segmentKey) continue;
      words.push(describeChange(item));
    }
  }
  return words;
}
