import type { EnvironmentName } from '@flagops/core';

/** What the last check of a guard saw: the dashboard's "last value" and the count that stops a rollout. */
export interface GuardCheck {
  org: string;
  project: string;
  flag: string;
  environment: EnvironmentName;
  /** The guarded step the check was for (its `at`) and its query: a check of another step starts a new count. */
  stepAt: string;
  query: string;
  /** The guard's identity (its query and bounds): a guard changed on the same step starts a new count too. */
  guardId: string;
  checkedAt: string;
  /** `pass`: within the bounds; `breach`: outside them; `error`: the query failed (no value). */
  result: 'pass' | 'breach' | 'error';
  value?: number;
  error?: string;
  /** Failed queries in a row for this step's guard, across every control plane. */
  failures: number;
}

/** A check's outcome, as recorded. */
export type GuardCheckOutcome = Omit<GuardCheck, 'failures'>;

/**
 * The state guarded rollouts share across control planes: who runs a check (claims, so a query runs once per
 * interval whichever instance's timer fires), and the last check of each guarded schedule with its count of
 * failed queries in a row.
 */
export interface GuardStore {
  /**
   * Takes the claim `id` of `org` at `now` until `until` (epoch ms): false when another claim on it runs until
   * after `now` (another instance ran, or runs, that check).
   */
  claim(org: string, id: string, now: number, until: number): Promise<boolean>;
  /** Gives the claim back before it runs out (the check did not settle the step: another may try at once). */
  release(org: string, id: string): Promise<void>;
  /**
   * Moves the end of the claim `id`, which this instance holds, to `until`: a check claimed for as long as its
   * query may take is held, once it ends, for its interval from then.
   */
  hold(org: string, id: string, until: number): Promise<void>;
  /**
   * Records a check of the guarded schedule `target` (`<project>/<flag>/<env>`) and answers it with `failures`:
   * one more than the last check's when both are errors of the same step and guard, 1 for an error after
   * anything else, 0 otherwise.
   */
  record(target: string, outcome: GuardCheckOutcome): Promise<GuardCheck>;
  /** The last check of every guarded schedule of `org`. */
  list(org: string): Promise<GuardCheck[]>;
  /** Forgets the checks (and claims) of these targets: their schedules have no guard left. */
  remove(org: string, targets: readonly string[]): Promise<void>;
}

/** The count `record` answers with, from the check before (undefined: none). */
export function failuresAfter(before: GuardCheck | undefined, outcome: GuardCheckOutcome): number {
  if (outcome.result !== 'error') return 0;
  const same = before && before.stepAt === outcome.stepAt && before.guardId === outcome.guardId;
  return same && before.result === 'error' ? before.failures + 1 : 1;
}
