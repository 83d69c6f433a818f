import type { FlagLifecycle } from '@flagops/core';
import type { FlagView } from '../types.js';

/** One flag's health as GET /projects/:id/flags/health answers it. */
export interface FlagHealth {
  key: string;
  status: HealthStatus;
  reasons: Array<{ code: string; message: string }>;
}

export type HealthStatus = 'active' | 'potentially_stale' | 'stale';

export const HEALTH_LABELS: Readonly<Record<HealthStatus, string>> = {
  stale: 'stale',
  potentially_stale: 'potentially stale',
  active: 'active',
};

/** Stale first: what a sort by status brings to the top. */
const RANK: Readonly<Record<HealthStatus, number>> = { stale: 0, potentially_stale: 1, active: 2 };

/** A flag's lifecycle, `release` when it has none. */
export function lifecycleOf(flag: FlagView): FlagLifecycle {
  return flag.lifecycle ?? { type: 'release' };
}

export interface HealthFilter {
  /** '' for any. */
  status: string;
  type: string;
  /** Part of the owner, ignoring case; '' for any. */
  owner: string;
}

/** The flags a filter keeps. Archived flags have no status: a status filter leaves them out. */
export function filterByHealth(flags: FlagView[], health: ReadonlyMap<string, FlagHealth>, filter: HealthFilter): FlagView[] {
  const owner = filter.owner.trim().toLowerCase();
  return flags.filter((flag) => {
    const lifecycle = lifecycleOf(flag);
    if (filter.status !== '' && health.get(flag.key)?.status !== filter.status) return false;
    if (filter.type !== '' && lifecycle.type !== filter.type) return false;
    if (owner !== '' && !(lifecycle.owner ?? '').toLowerCase().includes(owner)) return false;
    return true;
  });
}

/** Stale first, then potentially stale, then active, then flags without a status (archived); by key within each. */
export function sortByStatus(flags: FlagView[], health: ReadonlyMap<string, FlagHealth>): FlagView[] {
  const rank = (flag: FlagView) => {
    const status = health.get(flag.key)?.status;
    return status === undefined ? 3 : RANK[status];
  };
  return [...flags].sort((a, b) => rank(a) - rank(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
