import { ENVIRONMENTS, type EnvironmentName } from '@flagops/core';
import { statsScope } from '../../features/stats/evaluation-counter.js';
import { exposureScope, exposureTotals, type TrackSeries, trackSeries } from '../../features/stats/event-counts.js';
import { isStatsPeriod, type StatsPeriod } from '../../features/stats/hours.js';
import { type SampleRatio, sampleRatio } from '../../features/stats/sample-ratio.js';
import { InvalidInputError } from '../../foundations/errors/kinds.js';
import { flagById, projectById } from '../../foundations/repository/state-lookup.js';
import { optionalQuery, route } from './route-table.js';
import type { Workspace } from './workspace.js';

/** A missing period means the last 24 hours; anything but 24h, 7d or 30d is refused. */
function periodOf(query: Readonly<Record<string, string | string[] | undefined>>): StatsPeriod {
  const period = optionalQuery(query, 'period') ?? '24h';
  if (!isStatsPeriod(period)) throw new InvalidInputError(`period: must be 24h, 7d or 30d (got ${JSON.stringify(period)})`, 'period');
  return period;
}

export const statsRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/flags/:id/environments/:env/stats',
    permission: 'stats.read',
    body: 'none',
    handle: async ({ ws, params, environment, query }) => ({ body: await flagStats(ws, params.id, environment, periodOf(query)) }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/projects/:id/events',
    permission: 'stats.read',
    body: 'none',
    handle: async ({ ws, params, query }) => ({ body: await projectEvents(ws, params.id, periodOf(query), environmentOf(query)) }),
  }),
];

/** `?environment=` narrows the events to one environment; without it they are added up over all three. */
function environmentOf(query: Readonly<Record<string, string | string[] | undefined>>): EnvironmentName | undefined {
  const env = optionalQuery(query, 'environment');
  if (env === undefined) return undefined;
  if (!(ENVIRONMENTS as readonly string[]).includes(env))
    throw new InvalidInputError(`environment: must be one of ${ENVIRONMENTS.join(', ')} (got ${JSON.stringify(env)})`, 'environment');
  return env as EnvironmentName;
}

export interface FlagStats {
  flagId: string;
  environment: EnvironmentName;
  period: StatsPeriod;
  /** Per hour: evaluations per variation, and exposure events (POST /v1/events) per variation. */
  series: Array<{ hour: string; variations: Record<string, number>; exposures: Record<string, number> }>;
  /** For a config with weighted variants: exposures per variant against the weights over the period; else null. */
  sampleRatio: SampleRatio | null;
}

/** Hourly per-variation counts of one flag in one environment, oldest hour first. */
export async function flagStats(ws: Workspace, flagId: string, env: EnvironmentName, period: StatsPeriod): Promise<FlagStats> {
  const { state } = await ws.readServed();
  const { project, flag } = flagById(state, flagId);
  const scope = statsScope(ws.org, project.project.id, env);
  const now = Date.now();
  const { series } = ws.deps.counter.series({ scope, flagKey: flag.meta.key, period, now });
  const exposures = ws.deps.counter.series({ scope: exposureScope(scope), flagKey: flag.meta.key, period, now }).series;
  return {
    flagId,
    environment: env,
    period,
    series: series.map((entry, i) => ({ ...entry, exposures: exposures[i].variations })),
    sampleRatio: sampleRatio(flag.environments[env]?.variants, exposureTotals(ws.deps.counter, scope, flag.meta.key, period, now)),
  };
}

export interface ProjectEvents extends TrackSeries {
  projectId: string;
  /** Absent: all environments added up. */
  environment?: EnvironmentName;
}

/** Hourly track events of a project per name (count, and sum of values), oldest hour first. */
export async function projectEvents(ws: Workspace, projectId: string, period: StatsPeriod, env?: EnvironmentName): Promise<ProjectEvents> {
  const { state } = await ws.readServed();
  const project = projectById(state, projectId);
  const envs = env === undefined ? ENVIRONMENTS : [env];
  const now = Date.now();
  const [first, ...rest] = envs.map((e) => trackSeries(ws.deps.counter, statsScope(ws.org, project.project.id, e), period, now).series);
  const series = first.map((entry, i) => {
    const counts = { ...entry.counts };
    for (const other of rest) {
      for (const [name, c] of Object.entries(other[i].counts)) {
        const sum = counts[name];
        counts[name] = sum ? { count: sum.count + c.count, sum: sum.sum + c.sum } : c;
      }
    }
    return { hour: entry.hour, counts };
  });
  return { projectId, ...(env ? { environment: env } : {}), period, series };
}
