import type { FlagFile } from '@flagops/core';

/** A flag's health, as the service's flag health reports it. */
export type FlagStatus = 'active' | 'potentially_stale' | 'stale';

/** The status `flagops refs` prints for a flag key. The one seam through which the command learns health. */
export type StatusOf = (key: string) => FlagStatus;

const RANK: Record<FlagStatus, number> = { active: 0, potentially_stale: 1, stale: 2 };

/**
 * What the flags repository alone tells about each flag's health, without the service's evaluation counts or
 * served history: an archived flag, and one whose `lifecycle.expiresAt` has passed, is `stale`; any other is
 * `active`. A key several projects have (no --project) takes the least stale of them, since the code cannot
 * say which project it means.
 */
export function offlineStatusOf(flags: Iterable<FlagFile>, now: number): StatusOf {
  const statuses: Array<{ key: string; status: FlagStatus }> = [];
  for (const flag of flags)
    statuses.push({ key: flag.key, status: flag.archivedAt !== null || expired(flag.lifecycle?.expiresAt, now) ? 'stale' : 'active' });
  return leastStale(statuses, 'active');
}

/**
 * A status per key from (key, status) pairs, the least stale where a key comes more than once (several
 * projects); `otherwise` for a key not among them.
 */
export function leastStale(statuses: Iterable<{ key: string; status: FlagStatus }>, otherwise: FlagStatus): StatusOf {
  const byKey = new Map<string, FlagStatus>();
  for (const { key, status } of statuses) {
    const before = byKey.get(key);
    if (before === undefined || RANK[status] < RANK[before]) byKey.set(key, status);
  }
  return (key) => byKey.get(key) ?? otherwise;
}

/** A date (`2027-03-31`) expires at the end of that day in UTC; a date-time at that instant. */
export function expired(expiresAt: string | undefined, now: number): boolean {
  if (expiresAt === undefined) return false;
  const at = /^\d{4}-\d{2}-\d{2}$/.test(expiresAt) ? Date.parse(`${expiresAt}T00:00:00Z`) + 86_400_000 : Date.parse(expiresAt);
  return !Number.isNaN(at) && now >= at;
}
