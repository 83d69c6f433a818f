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
): Promise<{ newest: string; entries: AuditEntry[]; skipped?: string }> {
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
    : { newest, entries: [], skipped: 'the last entry delivered is no longer on main' };
}
