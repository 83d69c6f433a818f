import { Counter, type Registry } from 'prom-client';
import { EventTotals } from './event-totals.js';

/** Counts one served evaluation of a flag: what the evaluation endpoints call per key evaluated. */
export type CountEvaluation = (flagKey: string, variation: string, reason: string) => void;

/** flag key → variation → reason → count, since the process started. */
type FlagTotals = Map<string, Map<string, Map<string, number>>>;

interface Scope {
  org: string;
  project: string;
  environment: string;
  flags: FlagTotals;
}

/**
 * Evaluations since the process started, per (organisation, project, environment, flag, variation, reason),
 * for `flagops_evaluations_total`. Counting is the evaluation hot path, so it stays three Map lookups and a
 * set on plain Maps held by the caller's scope: no label objects, no string building, no prom-client call per
 * evaluation. The counter family reads the Maps only when Prometheus scrapes.
 */
export class EvaluationTotals {
  private readonly scopes = new Map<string, Scope>();
  /** Exposure and track events (POST /v1/events), registered with the evaluations. */
  readonly events = new EventTotals();

  /**
   * The counting function of one project environment; callers make it once per served view, not per request.
   * `project` is the project's slug, the name operators know it by.
   */
  counter(org: string, project: string, environment: string): CountEvaluation {
    const id = `${org}\u0000${project}\u0000${environment}`;
    let scope = this.scopes.get(id);
    if (scope === undefined) {
      scope = { org, project, environment, flags: new Map() };
      this.scopes.set(id, scope);
    }
    const flags = scope.flags;
    return (flagKey, variation, reason) => {
      let variations = flags.get(flagKey);
      if (variations === undefined) {
        variations = new Map();
        flags.set(flagKey, variations);
      }
      let reasons = variations.get(variation);
      if (reasons === undefined) {
        reasons = new Map();
        variations.set(variation, reasons);
      }
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    };
  }

  /** Registers `flagops_evaluations_total`, read from these totals at each scrape. */
  register(registry: Registry): void {
    this.events.register(registry);
    const scopes = this.scopes;
    new Counter({
      name: 'flagops_evaluations_total',
      help: 'Flag evaluations served, by project (slug), environment, flag, variation and reason; org is the organisation.',
      labelNames: ['project', 'environment', 'flag', 'variation', 'reason', 'org'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const { org, project, environment, flags } of scopes.values()) {
          for (const [flag, variations] of flags) {
            for (const [variation, reasons] of variations) {
              for (const [reason, count] of reasons) this.inc({ project, environment, flag, variation, reason, org }, count);
            }
          }
        }
      },
    });
  }
}
