import type { AuditEntry, Pusher } from '@flagops/core';
import { loopTurn } from '../../foundations/process/loop-turns.js';
import { createLimiter } from '../../foundations/storage/git/limiter.js';
import type { FlagRepository } from '../../foundations/storage/index.js';
import { describeCommit } from './commit-entries.js';
import type { EntryLog } from './entry-log.js';

export type CommitReader = Pick<FlagRepository, 'firstParentLog' | 'changedPaths' | 'readBlob'>;

export interface CommitFacts {
  /** The commit up to which unsigned trailers are believed (FlagRepository.unsignedTrailersUpTo); null: none. */
  unsignedTrailersUpTo?: string | null;
  /** The key that pushed a commit over git over HTTP, when one did. */
  pusherOf?: (commit: string) => Pusher | undefined;
}

export interface NewCommits {
  /** Oldest first, each with its entries. */
  commits: Array<{ oid: string; entries: readonly AuditEntry[] }>;
  /** False when the walk reached the root without meeting `until`: `until` is not on the new line. */
  reachedUntil: boolean;
}

const CHUNK = 256;
const DESCRIBE_CONCURRENCY = 8;

/**
 * The commits from `head` back along first parents to `until` (excluded), described. Commits `known`
 * already holds keep their entries (a commit never changes). The walk is read in chunks and each chunk is
 * described while the next is read, so a long history costs about the walk, not the walk plus the diffs.
 */
export async function readNewCommits(
  repo: CommitReader,
  head: string,
  until: string | null,
  known: EntryLog,
  facts: CommitFacts = {},
): Promise<NewCommits> {
  const limit = createLimiter(DESCRIBE_CONCURRENCY);
  const oids: string[] = [];
  const described: Array<readonly AuditEntry[] | Promise<readonly AuditEntry[]>> = [];
  // Newest first: once the walk reaches the last commit from before signing, it and all below it are old.
  let beforeSigning = false;
  let from: string | undefined = head;
  while (from !== undefined && from !== until) {
    const chunk = await repo.firstParentLog({ from, until, limit: CHUNK });
    for (const commit of chunk) {
      oids.push(commit.oid);
      if (commit.oid === facts.unsignedTrailersUpTo) beforeSigning = true;
      const context = { trustUnsigned: beforeSigning, pushedBy: facts.pusherOf?.(commit.oid) };
      const entries =
        known.entriesOf(commit.oid) ??
        limit(async () => {
          // Hundreds of commits pushed at once are described here, beside evaluations and kills of this process.
          await loopTurn();
          return describeCommit(commit, repo, context);
        });
      // Awaited below; until then a failure must not count as unhandled.
      if (entries instanceof Promise) entries.catch(() => {});
      described.push(entries);
    }
    from = chunk.length === 0 ? undefined : chunk[chunk.length - 1].parents[0];
  }
  const entries = await Promise.all(described);
  const commits = oids.map((oid, i) => ({ oid, entries: entries[i] })).reverse();
  return { commits, reachedUntil: until === null || from === until };
}
