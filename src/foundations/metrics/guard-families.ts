import { Counter, type Registry } from 'prom-client';

/** A guarded rollout's series: the schedule of one flag in one environment. Bounded by the guarded schedules. */
export interface GuardSeries {
  org: string;
  /** The project's slug. */
  project: string;
  environment: string;
  flag: string;
}

export type GuardCheckResult = 'pass' | 'breach' | 'error';
/** Why a rollout was stopped: its value crossed a bound, or 3 queries in a row failed. */
export type GuardStopReason = 'breach' | 'errors';

/**
 * The control port's guard families: the checks of guarded rollouts, by result, and the rollouts they stopped.
 * Counted by the process that ran the check (with several control planes, each check is run by one) and the one
 * whose commit removed the remaining steps (made once), so summing over instances counts each once.
 */
export class GuardFamilies {
  private readonly checks: Counter<'project' | 'environment' | 'flag' | 'org' | 'result'>;
  private readonly stops: Counter<'project' | 'environment' | 'flag' | 'org' | 'reason'>;

  constructor(registry: Registry) {
    this.checks = new Counter({
      name: 'flagops_guard_checks_total',
      help: "Queries of guarded rollouts' guards this process ran against FLAGOPS_PROMETHEUS_URL, by result (pass, breach, error), per project (slug), environment, flag and org.",
      labelNames: ['project', 'environment', 'flag', 'org', 'result'] as const,
      registers: [registry],
    });
    this.stops = new Counter({
      name: 'flagops_guard_stops_total',
      help: 'Guarded rollouts this process stopped (killed, remaining steps removed), by reason: breach (a value past its bound) or errors (3 failed queries in a row).',
      labelNames: ['project', 'environment', 'flag', 'org', 'reason'] as const,
      registers: [registry],
    });
  }

  countCheck({ org, project, environment, flag }: GuardSeries, result: GuardCheckResult): void {
    this.checks.inc({ project, environment, flag, org, result });
  }

  countStop({ org, project, environment, flag }: GuardSeries, reason: GuardStopReason): void {
    this.stops.inc({ project, environment, flag, org, reason });
  }
}
