import { Counter, Gauge, type Registry } from 'prom-client';

/** What one request's events add, per cell (the parsed body of POST /v1/events). */
export interface EventCells {
  exposures: Iterable<{ flagKey: string; variation: string; count: number }>;
  track: Iterable<{ name: string; count: number; sumMicros: number }>;
}

/**
 * Track names come from clients: at most this many per environment get a series of their own; later names are
 * counted under OTHER_NAME, so a client sending made-up names cannot grow /metrics without bound. Exposure
 * labels need no such cap: their flag and variation were checked against the environment's flags.
 */
export const MAX_TRACK_NAMES = 100;
export const OTHER_NAME = '_other';

interface Scope {
  org: string;
  project: string;
  environment: string;
  /** flag → variation → count */
  exposures: Map<string, Map<string, number>>;
  /** name → count and sum (in millionths, summed exactly) */
  track: Map<string, { count: number; sumMicros: number }>;
  /** Track events not stored: their name was new while the project kept as many names as it may. */
  dropped: number;
}

/**
 * Exposure and track events since the process started, for `flagops_exposures_total`,
 * `flagops_track_events_total` and `flagops_track_value`: plain Maps added to per request, read at scrape.
 */
export class EventTotals {
  private readonly scopes = new Map<string, Scope>();

  /** `project` is the project's slug, the name operators know it by. */
  record(org: string, project: string, environment: string, cells: EventCells): void {
    const scope = this.scope(org, project, environment);
    for (const e of cells.exposures) {
      let variations = scope.exposures.get(e.flagKey);
      if (variations === undefined) {
        variations = new Map();
        scope.exposures.set(e.flagKey, variations);
      }
      variations.set(e.variation, (variations.get(e.variation) ?? 0) + e.count);
    }
    for (const t of cells.track) {
      const name = scope.track.has(t.name) || scope.track.size < MAX_TRACK_NAMES ? t.name : OTHER_NAME;
      const totals = scope.track.get(name);
      if (totals) {
        totals.count += t.count;
        totals.sumMicros += t.sumMicros;
      } else scope.track.set(name, { count: t.count, sumMicros: t.sumMicros });
    }
  }

  /** Track events the stats did not keep (their name over the project's bound), for flagops_track_events_dropped_total. */
  recordDropped(org: string, project: string, environment: string, count: number): void {
    this.scope(org, project, environment).dropped += count;
  }

  private scope(org: string, project: string, environment: string): Scope {
    const id = `${org}\u0000${project}\u0000${environment}`;
    let scope = this.scopes.get(id);
    if (scope === undefined) {
      scope = { org, project, environment, exposures: new Map(), track: new Map(), dropped: 0 };
      this.scopes.set(id, scope);
    }
    return scope;
  }

  register(registry: Registry): void {
    const scopes = this.scopes;
    new Counter({
      name: 'flagops_exposures_total',
      help: 'Exposure events received (POST /v1/events), by project (slug), environment, flag and variation; org is the organisation.',
      labelNames: ['project', 'environment', 'flag', 'variation', 'org'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const { org, project, environment, exposures } of scopes.values()) {
          for (const [flag, variations] of exposures) {
            for (const [variation, count] of variations) this.inc({ project, environment, flag, variation, org }, count);
          }
        }
      },
    });
    new Counter({
      name: 'flagops_track_events_total',
      help: `Track events received (POST /v1/events), by project (slug), environment and event name (the first ${MAX_TRACK_NAMES} names per environment; later ones as ${OTHER_NAME}).`,
      labelNames: ['project', 'environment', 'event', 'org'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const { org, project, environment, track } of scopes.values()) {
          for (const [event, { count }] of track) this.inc({ project, environment, event, org }, count);
        }
      },
    });
    new Counter({
      name: 'flagops_track_events_dropped_total',
      help: 'Track events received but not kept in the stats, by project (slug) and environment: their name was new while the project kept as many names as it may.',
      labelNames: ['project', 'environment', 'org'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const { org, project, environment, dropped } of scopes.values()) {
          if (dropped > 0) this.inc({ project, environment, org }, dropped);
        }
      },
    });
    // A sum may go down (negative values), so it is a gauge: Prometheus counters must not decrease.
    new Gauge({
      name: 'flagops_track_value',
      help: 'Sum of the values of the track events received, by project (slug), environment and event name (capped as flagops_track_events_total).',
      labelNames: ['project', 'environment', 'event', 'org'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const { org, project, environment, track } of scopes.values()) {
          for (const [event, { sumMicros }] of track) this.set({ project, environment, event, org }, sumMicros / 1_000_000);
        }
      },
    });
  }
}
