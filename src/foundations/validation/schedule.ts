import { isDateTime } from './date-time.js';
import type { ValidationIssue } from './issue.js';

interface LooseStep {
  at?: unknown;
  guard?: unknown;
}

function stepsOf(schedule: unknown): LooseStep[] {
  return Array.isArray(schedule) ? (schedule as LooseStep[]) : [];
}

/** The step's time in ms; NaN when `at` is not a date-time (the schema reports that). */
function time(step: LooseStep | null): number {
  return typeof step?.at === 'string' && isDateTime(step.at) ? Date.parse(step.at) : Number.NaN;
}

/**
 * A schedule's steps are strictly ascending by `at` (what JSON Schema cannot say): each is later than the one
 * before, so the order a reviewer reads is the order they are applied in and no two fall due together.
 */
export function scheduleOrderIssues(schedule: unknown, file?: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const steps = stepsOf(schedule);
  for (let i = 1; i < steps.length; i++) {
    const before = time(steps[i - 1]);
    const at = time(steps[i]);
    if (Number.isNaN(before) || Number.isNaN(at) || at > before) continue;
    const message = `must be later than the step before it (/schedule/${i - 1}/at): steps are strictly ascending`;
    issues.push(file === undefined ? { path: `/schedule/${i}/at`, message } : { file, path: `/schedule/${i}/at`, message });
  }
  return issues;
}

/**
 * Steps at or before `now`. The API refuses them (a step written through the API is meant for later); a
 * pushed file may hold them, and the service applies them at once as due.
 */
export function pastStepIssues(schedule: unknown, now: Date): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  stepsOf(schedule).forEach((step, i) => {
    const at = time(step);
    if (!Number.isNaN(at) && at <= now.getTime())
      issues.push({ path: `/schedule/${i}/at`, message: `must be in the future (it is ${now.toISOString()} now)` });
  });
  return issues;
}

/**
 * A guard's bounds (what JSON Schema cannot say briefly): at least one of max and min, and min at most max, so
 * that some value passes. `at` is where the guard is (`/schedule/2/guard`, `/guard`).
 */
export function guardBoundIssues(guard: unknown, at: string, file?: string): ValidationIssue[] {
  if (guard === null || typeof guard !== 'object') return [];
  const { max, min } = guard as { max?: unknown; min?: unknown };
  const issue = (path: string, message: string): ValidationIssue => (file === undefined ? { path, message } : { file, path, message });
  if (max === undefined && min === undefined) return [issue(at, 'must give max, min or both: the bound the query must stay within')];
  if (typeof max === 'number' && typeof min === 'number' && min > max) return [issue(`${at}/min`, `must be at most max (${max})`)];
  return [];
}

/** Everything beside the schema that a schedule must hold: steps strictly ascending, guards with a bound. */
export function scheduleIssues(schedule: unknown, file?: string): ValidationIssue[] {
  const issues = scheduleOrderIssues(schedule, file);
  stepsOf(schedule).forEach((step, i) => {
    if (step !== null && typeof step === 'object') issues.push(...guardBoundIssues(step.guard, `/schedule/${i}/guard`, file));
  });
  return issues;
}
