import { loopTurn } from '../../foundations/process/loop-turns.js';
import type { ChangedPath, CommitInfo, FlagRepository } from '../../foundations/storage/index.js';

export type MergeReader = Pick<FlagRepository, 'readCommit' | 'height' | 'treeOid'>;

/** What of a proposal tells whether main took its change: its commit and the files that commit changes. */
export interface ProposedChange {
  commit: string;
  paths: readonly ChangedPath[];
}

/**
 * The oldest commit on main's first-parent line, from `head` down to `until` (excluded), that brought a
 * proposal's change in without an approval: the proposal's commit itself (a fast-forward), a merge of it (a
 * merge commit with it as a parent), or a commit at which every file it changes is as it makes them (a squash or
 * rebase merge, or the same change made directly). `complete` is false when the walk did not meet `until`
 * (it is not on `head`'s first-parent line: main was rewritten since).
 */
export async function findMergeOnMain(
  repo: MergeReader,
  change: ProposedChange,
  head: string,
  until: string | null,
): Promise<{ merge: CommitInfo | null; complete: boolean }> {
  const floor = until === null ? -1 : await repo.height(until);
  let merge: CommitInfo | null = null;
  let at: string | undefined = head;
  while (at !== undefined && at !== until && (await repo.height(at)) > floor) {
    // An old proposal may have thousands of commits above it: walked beside evaluations and kills of this process.
    await loopTurn();
    const commit = await repo.readCommit(at);
    if (await bringsIn(repo, commit, change)) merge = commit;
    at = commit.parents[0];
  }
  return { merge, complete: at === until || (until === null && at === undefined) };
}

/** Whether `oid` is on `tip`'s first-parent line (walks down to its height only). */
export async function onFirstParentLine(repo: MergeReader, tip: string, oid: string): Promise<boolean> {
  const height = await repo.height(oid);
  let at: string | undefined = tip;
  while (at !== undefined && at !== oid && (await repo.height(at)) > height) {
    await loopTurn();
    at = (await repo.readCommit(at)).parents[0];
  }
  return at === oid;
}

async function bringsIn(repo: MergeReader, commit: CommitInfo, change: ProposedChange): Promise<boolean> {
  if (commit.oid === change.commit || commit.parents.slice(1).includes(change.commit)) return true;
  if (change.paths.length === 0) return false;
  for (const { path, newOid } of change.paths) if ((await repo.treeOid(commit.oid, path)) !== (newOid ?? null)) return false;
  return true;
}
