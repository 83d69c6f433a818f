import type { AuditEntry } from '@flagops/core';

/** An organisation's audit index, read newest first, a page at a time. */
export interface AuditPages {
  query(query: { limit: number; cursor?: string }): Promise<{ entries: AuditEntry[]; nextCursor: string | null }>;
}

const PAGE = 500;

/**
 * The entries after `cursor` (the newest entry already turned into deliveries; '' for an empty trail), oldest
 * first, and the id of the newest. None when there is no cursor yet, and none with `skipped` saying why when
 * the cursor is no longer on main (main was rewritten) or more than `limit` entries came at once (a large
 * import): receivers are not flooded with those, and deliveries continue from the head.
 */
export async function entriesSince(
  index: AuditPages,
  cursor: string | undefined,
  limit: number,
): Promise<{ newest: string; entries: AuditEntry[]; skipped?: string; gone?: true }> {
  let page = await index.query({ limit: PAGE });
  const newest = page.entries[0]?.id ?? '';
  if (cursor === undefined || newest === cursor) return { newest, entries: [] };
  const fresh: AuditEntry[] = [];
  for (;;) {
    for (const entry of page.entries) {
      if (entry.id === cursor) return { newest, entries: fresh.reverse() };
      fresh.push(entry);
    }
    if (fresh.length >= limit) return { newest, entries: [], skipped: `more than ${limit} new audit entries at once` };
    if (page.nextCursor === null) break;
    page = await index.query({ limit: PAGE, cursor: page.nextCursor });
  }
  // The whole trail is new: the cursor was '' (nothing on main before), or its entry is gone.
  return cursor === ''
    ? { newest, entries: fresh.reverse() }
    : { newest, entries: [], skipped: 'the last entry delivered is no longer on main', gone: true };
}

/** What webhooks read of main's history: a commit's parents and, for a kill made again, the commit first made. */
export interface CommitLine {
  readCommit(oid: string): Promise<{ parents: readonly string[]; flagops?: { madeFrom?: string } | null }>;
}

/**
 * The entries after `cursor` when main no longer holds it: main was rebuilt under it (kills this control plane
 * made while the git host was unreachable, made again on the host's newer head once it answered, with what the
 * host got meanwhile before them). The entries after the last commit both lines share (the fork), oldest first,
 * less those whose change was delivered already on the old line: an entry made again names the one it was made
 * from (`madeFrom`). So the host's own commits of the outage are delivered, and a held kill once. Skipped, as by
 * entriesSince, when the fork is not within `limit` commits or entries.
 */
export async function entriesAfterRebuild(
  index: AuditPages,
  line: CommitLine,
  cursor: string,
  limit: number,
): Promise<{ newest: string; entries: AuditEntry[]; skipped?: string }> {
  // The trail, newest first, up to `limit` entries (the index is in memory: no commit is read for it).
  const trail: AuditEntry[] = [];
  let page = await index.query({ limit: PAGE });
  const newest = page.entries[0]?.id ?? '';
  for (;;) {
    trail.push(...page.entries);
    if (trail.length >= limit || page.nextCursor === null) break;
    page = await index.query({ limit: PAGE, cursor: page.nextCursor });
  }
  const onMain = new Set(trail.map((entry) => entry.id));
  // The old line back from the position to the first commit main has (the fork): what it delivered.
  const delivered = new Set<string>();
  let fork: string | undefined;
  for (let at: string | undefined = cursor; at !== undefined && delivered.size < 2 * limit; ) {
    if (onMain.has(at)) {
      fork = at;
      break;
    }
    const commit: Awaited<ReturnType<CommitLine['readCommit']>> | null = await line.readCommit(at).catch(() => null);
    if (!commit) break;
    delivered.add(at).add(commit.flagops?.madeFrom ?? at);
    at = commit.parents[0];
  }
  if (fork === undefined)
    return { newest, entries: [], skipped: 'the last entry delivered is no longer on main, nor anything before it within reach' };
  const fresh = trail
    .slice(
      0,
      trail.findIndex((entry) => entry.id === fork),
    )
    .reverse();
  return { newest, entries: fresh.filter((entry) => !delivered.has(entry.madeFrom ?? entry.id) && !delivered.has(entry.id)) };
}
