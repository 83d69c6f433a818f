import { Gauge, type Registry } from 'prom-client';

/** Flags per status of each project, as the last health check found them. */
export type FlagStatusCounts = Iterable<{ org: string; project: string; status: string; count: number }>;

/**
 * The control port's flag-health family: active flags per status (`active`, `potentially_stale`, `stale`), per
 * organisation and project (the project's slug), as of the last check (every few minutes). Bounded labels.
 */
export function registerFlagHealthFamilies(registry: Registry, counts: () => FlagStatusCounts): void {
  new Gauge({
    name: 'flagops_flags',
    help: 'Active (not archived) flags per health status (active, potentially_stale, stale), per organisation and project, as of the last health check.',
    labelNames: ['org', 'project', 'status'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { org, project, status, count } of counts()) this.set({ org, project, status }, count);
    },
  });
}
