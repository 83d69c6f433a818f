import { GUARD_DEFAULT_INTERVAL_SECONDS, type ScheduleGuard, type ScheduleStep } from '@flagops/core';

/** The last check of a schedule's guard, as GET .../guard-check answers it. */
export interface GuardCheckView {
  stepAt: string;
  query: string;
  checkedAt: string;
  result: 'pass' | 'breach' | 'error';
  value?: number;
  error?: string;
  failures: number;
}

/** One step of the timeline as the panel draws it. */
export interface TimelineEntry {
  at: string;
  /** `Tue 24 Nov 10:00`, local time. */
  when: string;
  /** `in 2 h 5 min`, `in 40 s`, `due now`. */
  relative: string;
  /** `rollout 25 %`, `enabled, rollout 100 %`, `disabled`. */
  sets: string;
  /** The rollout percentage once the step is applied (for the bar), carried forward from the steps before. */
  rolloutAfter: number;
  enabledAfter: boolean;
  next: boolean;
  /** `guard: <query> ≤ 0.05, every 60 s`, for a guarded step. */
  guard?: string;
  /** What the guard's last check saw, for the step it was made for: `last check 0.01: within bounds`. */
  lastCheck?: { text: string; ok: boolean };
}

/** A guard in words: the query, its bounds and how often it is checked. */
export function guardText(guard: ScheduleGuard): string {
  const bounds = [guard.min === undefined ? '' : `≥ ${guard.min}`, guard.max === undefined ? '' : `≤ ${guard.max}`].filter(Boolean);
  return `guard: ${guard.query} ${bounds.join(', ')}, every ${guard.intervalSeconds ?? GUARD_DEFAULT_INTERVAL_SECONDS} s`;
}

/** A guard check in words, and whether it lets the rollout go on. */
export function checkText(check: GuardCheckView): { text: string; ok: boolean } {
  const when = new Date(check.checkedAt).toLocaleTimeString();
  if (check.result === 'pass') return { text: `last check ${check.value}: within bounds (${when})`, ok: true };
  if (check.result === 'breach') return { text: `last check ${check.value}: out of bounds (${when})`, ok: false };
  return { text: `last check failed (${check.failures} in a row; 3 stop the rollout): ${check.error ?? 'no value'} (${when})`, ok: false };
}

export function describeSet(set: ScheduleStep['set']): string {
  const parts: string[] = [];
  if (set.enabled !== undefined) parts.push(set.enabled ? 'enabled' : 'disabled');
  if (set.rolloutPct !== undefined) parts.push(`rollout ${set.rolloutPct} %`);
  return parts.join(', ');
}

/** How long until `at`, in words, to the second under a minute and to the minute beyond. */
export function untilText(at: string, now: number): string {
  const seconds = Math.round((Date.parse(at) - now) / 1000);
  if (!Number.isFinite(seconds)) return at;
  if (seconds <= 0) return 'due now';
  if (seconds < 60) return `in ${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `in ${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  return `in ${Math.round(hours / 24)} d`;
}

function localWhen(at: string): string {
  const d = new Date(at);
  const date = d.toLocaleDateString(undefined, { weekday: 'short', day: 'numeric', month: 'short' });
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: d.getSeconds() ? '2-digit' : undefined });
  return `${date} ${time}`;
}

/** The timeline of a schedule, from the config's current state forward. */
export function timeline(
  schedule: readonly ScheduleStep[],
  current: { enabled: boolean; rolloutPct: number },
  now: number,
  check: GuardCheckView | null = null,
): TimelineEntry[] {
  let rollout = current.rolloutPct;
  let enabled = current.enabled;
  return schedule.map((step, i) => {
    rollout = step.set.rolloutPct ?? rollout;
    enabled = step.set.enabled ?? enabled;
    const entry: TimelineEntry = {
      at: step.at,
      when: localWhen(step.at),
      relative: untilText(step.at, now),
      sets: describeSet(step.set),
      rolloutAfter: rollout,
      enabledAfter: enabled,
      next: i === 0,
    };
    if (step.guard) entry.guard = guardText(step.guard);
    if (step.guard && check && Date.parse(check.stepAt) === Date.parse(step.at) && check.query === step.guard.query)
      entry.lastCheck = checkText(check);
    return entry;
  });
}

/** A datetime-local input's value (local time, no zone) as the UTC time a step is written with. */
export function localInputToUtc(value: string): string | null {
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? null : new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** The schedule with one more step, kept in time order (steps are strictly ascending). */
export function withStep(schedule: readonly ScheduleStep[], step: ScheduleStep): ScheduleStep[] {
  return [...schedule, step].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}
