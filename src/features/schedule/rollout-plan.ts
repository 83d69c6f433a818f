import { MAX_SCHEDULE_STEPS, type ScheduleStep } from '@flagops/core';
import { InvalidInputError } from '../../foundations/errors/kinds.js';
import type { RolloutPlanBody } from '../../foundations/validation/api-bodies.js';

const LAST_TIME = Date.parse('9999-12-31T23:59:59Z');
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `30s`, `15m`, `1h`, `2d` → milliseconds (the schema has checked the form). */
export function durationMs(every: string): number {
  const unit = every.slice(-1) as keyof typeof UNIT_MS;
  return Number(every.slice(0, -1)) * UNIT_MS[unit];
}

/** A time as schedules write it: ISO-8601 UTC, without milliseconds when they are zero. */
export function scheduleTime(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

export interface ExpandedPlan {
  /** Set by the write itself when the plan starts now (no `startAt`): the flag is enabled at startPct. */
  now?: { enabled: true; rolloutPct: number };
  schedule: ScheduleStep[];
}

/**
 * A progressive rollout as a schedule: startPct now (or at startAt, as a first step that also enables the
 * flag), then stepPct more every `every`, the last step exactly maxPct (default 100). "5 % now, then +20 %
 * every hour to 100 %" is { startPct: 5, stepPct: 20, every: '1h' }: 5 now, then 25, 45, 65, 85, 100.
 * With `guard`, every step carries it. More than 50 steps, or a maxPct below startPct: InvalidInputError naming the field.
 */
export function expandRolloutPlan(plan: RolloutPlanBody, now: Date): ExpandedPlan {
  const maxPct = plan.maxPct ?? 100;
  if (maxPct < plan.startPct) throw new InvalidInputError(`maxPct: must be at least startPct (${plan.startPct})`, 'maxPct');
  const interval = durationMs(plan.every);
  // Starting now: counted from the next whole second, so the file reads 10:00:00Z rather than 10:00:00.713Z.
  const startAt = plan.startAt === undefined ? Math.ceil(now.getTime() / 1000) * 1000 : Date.parse(plan.startAt);
  if (plan.startAt !== undefined && startAt <= now.getTime())
    throw new InvalidInputError(`startAt: must be in the future (it is ${now.toISOString()} now)`, 'startAt');
  const schedule: ScheduleStep[] = [];
  if (plan.startAt !== undefined) schedule.push({ at: scheduleTime(startAt), set: { enabled: true, rolloutPct: plan.startPct } });
  let pct = plan.startPct;
  for (let i = 1; pct < maxPct; i++) {
    pct = Math.min(maxPct, round2(plan.startPct + i * plan.stepPct));
    const at = startAt + i * interval;
    // A schedule's times have four-digit years, as ISO-8601 UTC timestamps do.
    if (at > LAST_TIME) {
      const field = plan.startAt === undefined ? 'every' : 'startAt';
      throw new InvalidInputError(
        `${field}: the plan's step to ${pct} % would fall after 9999-12-31T23:59:59Z; start earlier, or take shorter or bigger steps`,
        field,
      );
    }
    schedule.push({ at: scheduleTime(at), set: { rolloutPct: pct } });
    if (schedule.length > MAX_SCHEDULE_STEPS)
      throw new InvalidInputError(
        `stepPct: the plan takes more than ${MAX_SCHEDULE_STEPS} steps from ${plan.startPct} % to ${maxPct} %; take bigger steps`,
        'stepPct',
      );
  }
  // A guard watches the rollout up to its own step, so the plan's guard goes on every step: it is checked from
  // the write until the last step is applied.
  if (plan.guard) for (const step of schedule) step.guard = { ...plan.guard };
  return plan.startAt === undefined ? { now: { enabled: true, rolloutPct: plan.startPct }, schedule } : { schedule };
}

/** Percentages keep two decimals, as buckets do: 0.1 + 0.2 is 0.3. */
function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
