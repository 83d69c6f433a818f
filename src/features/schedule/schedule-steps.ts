import type { Actor, EnvironmentConfig, EnvironmentName, RepositoryState, ScheduleStep } from '@flagops/core';
import { describeStepSet } from '../../foundations/repository/format-changes.js';
import { layout } from '../../foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../foundations/repository/serialize-file.js';
import type { Change } from '../../foundations/storage/index.js';

/** Who applies scheduled steps: the audit trail's actor of type `scheduler`. */
export const SCHEDULER_ACTOR: Actor = { type: 'scheduler', name: 'scheduler' };

/** The step that falls due next in a config, or null: the first, as steps are strictly ascending. */
export function nextStep(config: EnvironmentConfig): ScheduleStep | null {
  return config.schedule?.[0] ?? null;
}

/** Whether two steps are the same step: the same time, the same fields set and the same guard. */
export function sameStep(a: ScheduleStep, b: ScheduleStep): boolean {
  return (
    Date.parse(a.at) === Date.parse(b.at) &&
    a.set.enabled === b.set.enabled &&
    a.set.rolloutPct === b.set.rolloutPct &&
    Object.keys(a.set).length === Object.keys(b.set).length &&
    sameGuard(a.guard, b.guard)
  );
}

function sameGuard(a: ScheduleStep['guard'], b: ScheduleStep['guard']): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.query === b.query && a.max === b.max && a.min === b.min && a.intervalSeconds === b.intervalSeconds;
}

/**
 * Whether a schedule still has the guarded step `guarded` (the same time and the same guard): false once that
 * step was applied, or the schedule was cancelled, replaced, or stopped. A check of a guard decides nothing then.
 */
export function holdsGuardedStep(schedule: readonly ScheduleStep[] | undefined, guarded: ScheduleStep): boolean {
  return (schedule ?? []).some(
    (s) => Date.parse(s.at) === Date.parse(guarded.at) && s.guard !== undefined && sameGuard(s.guard, guarded.guard),
  );
}

export interface StepTarget {
  slug: string;
  key: string;
  env: EnvironmentName;
}

export interface AppliedStep extends StepTarget {
  step: ScheduleStep;
  skipped: boolean;
}

/**
 * The commit that applies `expected`, the first step of a flag's schedule in one environment, once it is due:
 * it sets the step's fields, removes the step (handing its guard, if any, to the next step when that has none)
 * and increments `version`; while the flag is killed in that
 * environment the step is only removed (and `version` incremented): skipped, never applied later.
 *
 * Null (no commit) unless, on the state it is given, the flag is there and `expected` is still the first step
 * and due: a step another control plane (or this one, before a crash) applied is gone from the file, so it is
 * never applied twice; a flag an invalid file holds back is not in the committed state and waits until its
 * files are valid again.
 */
export function stepChange(
  current: RepositoryState,
  target: StepTarget,
  expected: ScheduleStep,
  now: Date,
  /** For a guarded step, what its check saw: the value (in the summary) and `query = 0.01, within max 0.05` (the reason). */
  guardSeen?: { value: number; text: string },
): Change<AppliedStep> | null {
  const project = current.projects.get(target.slug);
  const config = project?.flags.get(target.key)?.environments[target.env];
  const first = config && nextStep(config);
  if (!project || !config || !first || !sameStep(first, expected) || Date.parse(first.at) > now.getTime()) return null;
  const skipped = Object.hasOwn(project.kills[target.env].kills, target.key);
  const rest = config.schedule!.slice(1);
  // A guard watches the rollout until its last step is applied: the next step takes it over unless it has its own.
  if (first.guard && rest.length > 0 && rest[0].guard === undefined) rest[0] = { ...rest[0], guard: first.guard };
  const next: EnvironmentConfig = {
    ...config,
    enabled: skipped ? config.enabled : (first.set.enabled ?? config.enabled),
    rolloutPct: skipped ? config.rolloutPct : (first.set.rolloutPct ?? config.rolloutPct),
    version: config.version + 1,
  };
  if (rest.length > 0) next.schedule = rest;
  else delete next.schedule;
  const what = describeStepSet(first.set);
  const where = `${target.key} in ${target.env}`;
  const seen = guardSeen && !skipped ? [`reason: guard passed: ${guardSeen.text}`] : [];
  const value = guardSeen && !skipped ? ` (guard value ${guardSeen.value})` : '';
  return {
    changes: [
      { path: layout.configFile(target.slug, target.env, target.key), content: serializeRepositoryFile({ kind: 'config', value: next }) },
    ],
    meta: {
      action: skipped ? 'scheduled_change_skipped' : 'scheduled_change',
      summary: skipped ? `skip scheduled step of ${where} (killed): ${what}` : `scheduled step of ${where}: ${what}${value}`,
      body: [`step due at ${first.at}${skipped ? '; skipped because the flag is killed in this environment' : ''}`, ...seen],
      actor: SCHEDULER_ACTOR,
      project: target.slug,
      flag: target.key,
      environment: target.env,
    },
    result: { ...target, step: first, skipped },
  };
}
