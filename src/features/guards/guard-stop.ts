import type { Actor, EnvironmentConfig, RepositoryState, ScheduleStep } from '@flagops/core';
import { layout } from '../../foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../foundations/repository/serialize-file.js';
import type { Change } from '../../foundations/storage/index.js';
import { holdsGuardedStep, type StepTarget } from '../schedule/schedule-steps.js';

/** Who stops a guarded rollout: the audit trail's actor of the guard_failed commits, and `killedBy` of its kill. */
export const GUARD_ACTOR: Actor = { type: 'scheduler', name: 'guard' };

/**
 * The commit that removes what is left of a stopped rollout's schedule (and increments `version`); null unless
 * the schedule still has `guarded`, the step whose guard failed: another control plane removed it already, the
 * step was applied meanwhile, or the schedule was replaced by one this guard does not watch.
 */
export function removeStepsChange(
  current: RepositoryState,
  target: StepTarget,
  guarded: ScheduleStep,
  reason: string,
): Change<number> | null {
  const config = current.projects.get(target.slug)?.flags.get(target.key)?.environments[target.env];
  const steps = config?.schedule?.length ?? 0;
  if (!config || steps === 0 || !holdsGuardedStep(config.schedule, guarded)) return null;
  const next: EnvironmentConfig = { ...config, version: config.version + 1 };
  delete next.schedule;
  return {
    changes: [
      { path: layout.configFile(target.slug, target.env, target.key), content: serializeRepositoryFile({ kind: 'config', value: next }) },
    ],
    meta: {
      action: 'guard_failed',
      summary: `stop rollout of ${target.key} in ${target.env}: ${steps} remaining step${steps === 1 ? '' : 's'} removed`,
      body: `reason: ${reason}`,
      actor: GUARD_ACTOR,
      project: target.slug,
      flag: target.key,
      environment: target.env,
    },
    result: steps,
  };
}
