import type { EnvironmentName } from '@flagops/core';
import { statsScope } from '../../stats/evaluation-counter.js';
import type { StatsPeriod } from '../../stats/hours.js';
import type { Workspace } from '../http/workspace.js';
import { flagById } from '../state-lookup.js';

export interface FlagStats {
  flagId: string;
  environment: EnvironmentName;
  period: StatsPeriod;
  series: Array<{ hour: string; variations: Record<string, number> }>;
}

/** Hourly per-variation counts of one flag in one environment (contract §3), oldest hour first. */
export async function flagStats(ws: Workspace, flagId: string, env: EnvironmentName, period: StatsPeriod): Promise<FlagStats> {
  const { state } = await ws.repo.readServed();
  const { project, flag } = flagById(state, flagId);
  const { series } = ws.deps.counter.series({ scope: statsScope(ws.org, project.project.id, env), flagKey: flag.meta.key, period });
  return { flagId, environment: env, period, series };
}
