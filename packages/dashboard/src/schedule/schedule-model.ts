import type { ScheduleStep } from '@flagops/core';

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
): TimelineEntry[] {
  let rollout = current.rolloutPct;
  let enabled = current.enabled;
  return schedule.map((step, i) => {
    rollout = step.set.rolloutPct ?? rollout;
    enabled = step.set.enabled ?? enabled;
    return {
      at: step.at,
      when: localWhen(step.at),
      relative: untilText(step.at, now),
      sets: describeSet(step.set),
      rolloutAfter: rollout,
      enabledAfter: enabled,
      next: i === 0,
    };
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
