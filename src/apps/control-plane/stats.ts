import type { EnvironmentName } from '@flagops/core';
import { statsScope } from '../../features/stats/evaluation-counter.js';
import { isStatsPeriod, type StatsPeriod } from '../../features/stats/hours.js';
import { InvalidInputError } from '../../foundations/errors/kinds.js';
import { flagById } from '../../foundations/repository/state-lookup.js';
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
];

export interface FlagStats {
  flagId: string;
  environment: EnvironmentName;
  period: StatsPeriod;
  series: Array<{ hour: string; variations: Record<string, number> }>;
}

/** Hourly per-variation counts of one flag in one environment, oldest hour first. */
export async function flagStats(ws: Workspace, flagId: string, env: EnvironmentName, period: StatsPeriod): Promise<FlagStats> {
  const { state } = await ws.readServed();
  const { project, flag } = flagById(state, flagId);
  const { series } = ws.deps.counter.series({ scope: statsScope(ws.org, project.project.id, env), flagKey: flag.meta.key, period });
  return { flagId, environment: env, period, series };
}
