import type { ScheduleGuard } from '@flagops/core';
import type { QueryOutcome } from './prometheus-query.js';

/** Failed queries in a row that stop a rollout: a guard that cannot be checked does not let it go on. */
export const MAX_QUERY_FAILURES = 3;

export type GuardVerdict =
  | { kind: 'pass'; value: number; text: string }
  | { kind: 'breach'; value: number; text: string }
  | { kind: 'error'; error: string; text: string };

/** `sum(rate(errors[1m])) = 0.31, above max 0.05`: the query, the value and the bound, as commits and logs say it. */
export function judge(guard: ScheduleGuard, outcome: QueryOutcome): GuardVerdict {
  if (!outcome.ok) return { kind: 'error', error: outcome.error, text: `${guard.query} failed: ${outcome.error}` };
  const { value } = outcome;
  // Written as Prometheus writes it: +Inf, not Infinity.
  const seen = value === Number.POSITIVE_INFINITY ? '+Inf' : value === Number.NEGATIVE_INFINITY ? '-Inf' : String(value);
  if (guard.max !== undefined && value > guard.max)
    return { kind: 'breach', value, text: `${guard.query} = ${seen}, above max ${guard.max}` };
  if (guard.min !== undefined && value < guard.min)
    return { kind: 'breach', value, text: `${guard.query} = ${seen}, below min ${guard.min}` };
  const bounds = [guard.min === undefined ? '' : `min ${guard.min}`, guard.max === undefined ? '' : `max ${guard.max}`].filter(Boolean);
  return { kind: 'pass', value, text: `${guard.query} = ${seen}, within ${bounds.join(' and ')}` };
}

/** Why a rollout stops, for the kill's reason and the guard_failed commits. */
export function stopReason(verdict: GuardVerdict, failures: number): string | null {
  if (verdict.kind === 'breach') return `guard failed: ${verdict.text}`;
  if (verdict.kind === 'error' && failures >= MAX_QUERY_FAILURES)
    return `guard failed: ${verdict.text} (${failures} failed queries in a row)`;
  return null;
}
