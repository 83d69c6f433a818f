import { ENVIRONMENTS } from '@flagops/core';
import { InvalidInputError } from '../../foundations/errors/kinds.js';
import { type Logger, silentLogger } from '../../foundations/log/logger.js';
import { addCounts } from './count-maps.js';
import type { EvaluationCounter } from './evaluation-counter.js';
import { hourStart, isStatsPeriod, type StatsPeriod } from './hours.js';

/**
 * Exposure and track events are kept in the same hourly count store as evaluations, so they are durable,
 * shared between control planes and counted once per replica batch exactly as evaluations are. They live under
 * scopes of their own: `<org>/<project>/<env>/exposures` and `<org>/<project>/<env>/track`, which no evaluation
 * scope (three parts) can be. A track event's name takes the place of the flag key; its variations are `count`
 * and the sum of its values in millionths, split by sign (`sum+`, `sum-`) because stored counts are positive
 * whole numbers.
 */
export const exposureScope = (scope: string): string => `${scope}/exposures`;
export const trackScope = (scope: string): string => `${scope}/track`;

const TRACK_COUNT = 'count';
const SUM_UP = 'sum+';
const SUM_DOWN = 'sum-';
/** Values are summed in millionths: what a sum keeps of a value's decimals. */
const MICROS = 1_000_000;

export interface ExposureCell {
  flagKey: string;
  variation: string;
  hourStartMs: number;
  count: number;
}

export interface TrackCell {
  name: string;
  hourStartMs: number;
  count: number;
  /** The sum of the values in millionths (a value sent without one adds nothing). */
  sumMicros: number;
}

/** A request's events, added up per cell: exposures per flag, variation and hour, track events per name and hour. */
export interface ParsedEvents {
  exposures: ExposureCell[];
  track: TrackCell[];
  /** Well-formed exposures of a flag or variation the environment does not serve (now): not counted. */
  ignored: number;
}

/**
 * a + b in millionths, held within what a count can hold exactly (±Number.MAX_SAFE_INTEGER, about ±9 billion): a
 * sum past it stops growing there, in one request as across requests, rather than failing a request whose events
 * were each valid.
 */
export function addMicros(a: number, b: number): number {
  return Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, a + b));
}

/** A value as the sum keeps it: whole millionths. */
export function toMicros(value: number): number {
  return Math.round(value * MICROS);
}

/**
 * Track event names come from clients holding a publishable SDK key: a project keeps the counts of at most this
 * many distinct names over the 30 days kept, its three environments together (so at most this many in any hour,
 * and in any answer of the events API). Names already kept go on being counted; an event of a new name while the
 * project has this many is dropped. A name frees its place when its last count expires.
 */
export const MAX_KEPT_TRACK_NAMES = 1000;

interface ProjectNames {
  /** The names the project has counts of, as last read from the counter, and those taken since. */
  names: Set<string>;
  /** The counter's keysRevision when `names` was read: a newer one may have lost names (expired). */
  revision: number;
  /** The hour a drop was last logged, so a flood logs once an hour. */
  loggedHour: number;
}

/**
 * Which track events of a project are kept (MAX_KEPT_TRACK_NAMES). One per counter: the main server's events
 * and those replicas forward count against the same names. Several control planes on one database each take
 * names until they read the others' counts, so there the bound is per control plane.
 */
export class TrackNameBound {
  private readonly projects = new Map<string, ProjectNames>();
  private readonly logger: Logger;
  private readonly now: () => number;

  constructor(
    private readonly counter: Pick<EvaluationCounter, 'keysOf' | 'keysRevision'>,
    options: { logger?: Logger; now?: () => number } = {},
  ) {
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
  }

  /**
   * Whether an event named `name` for the environment `scope` (statsScope: `<org>/<project>/<env>`) is kept.
   */
  admit(scope: string, name: string): boolean {
    const project = scope.slice(0, scope.lastIndexOf('/'));
    let entry = this.projects.get(project);
    if (entry === undefined) {
      entry = { ...this.read(project), loggedHour: Number.NEGATIVE_INFINITY };
      this.projects.set(project, entry);
    }
    if (entry.names.has(name)) return true;
    if (entry.names.size >= MAX_KEPT_TRACK_NAMES && entry.revision !== this.counter.keysRevision) {
      // Full with what may be stale: names may have expired since, or other control planes added some.
      Object.assign(entry, this.read(project));
      if (entry.names.has(name)) return true;
    }
    if (entry.names.size < MAX_KEPT_TRACK_NAMES) {
      entry.names.add(name);
      return true;
    }
    const hour = hourStart(this.now());
    if (entry.loggedHour !== hour) {
      entry.loggedHour = hour;
      this.logger.warn(`track events of new names are dropped: the project keeps ${MAX_KEPT_TRACK_NAMES} names`, {
        project,
        name,
      });
    }
    return false;
  }

  private read(project: string): Pick<ProjectNames, 'names' | 'revision'> {
    const revision = this.counter.keysRevision;
    const names = new Set<string>();
    for (const env of ENVIRONMENTS) for (const name of this.counter.keysOf(trackScope(`${project}/${env}`))) names.add(name);
    return { names, revision };
  }
}

/** What counting a request's events kept: `accepted` events, and `dropped` track events of names over the bound. */
export interface CountedEvents {
  accepted: number;
  dropped: number;
}

/** Counts the cells of one environment (`scope` as statsScope makes it), track events within `names`' bound. */
export function addEventCells(
  counter: Pick<EvaluationCounter, 'add'>,
  names: TrackNameBound,
  scope: string,
  exposures: Iterable<ExposureCell>,
  track: Iterable<TrackCell>,
): CountedEvents {
  let accepted = 0;
  let dropped = 0;
  const exposed = exposureScope(scope);
  for (const e of exposures) if (counter.add(exposed, e.flagKey, e.variation, e.hourStartMs, e.count)) accepted += e.count;
  const tracked = trackScope(scope);
  for (const t of track) {
    if (!names.admit(scope, t.name)) {
      dropped += t.count;
      continue;
    }
    if (!counter.add(tracked, t.name, TRACK_COUNT, t.hourStartMs, t.count)) continue;
    accepted += t.count;
    if (t.sumMicros > 0) counter.add(tracked, t.name, SUM_UP, t.hourStartMs, t.sumMicros);
    else if (t.sumMicros < 0) counter.add(tracked, t.name, SUM_DOWN, t.hourStartMs, -t.sumMicros);
  }
  return { accepted, dropped };
}

export interface TrackSeries {
  period: StatsPeriod;
  series: Array<{ hour: string; counts: Record<string, { count: number; sum: number }> }>;
}

/** The hourly track counts of one environment, per name, oldest hour first; hours without events have `counts: {}`. */
export function trackSeries(
  counter: Pick<EvaluationCounter, 'scopeSeries'>,
  scope: string,
  period: StatsPeriod,
  now?: number,
): TrackSeries {
  if (!isStatsPeriod(period)) throw new InvalidInputError('period must be 24h, 7d or 30d', 'period');
  const hours = counter.scopeSeries(trackScope(scope), period, now);
  return {
    period,
    series: hours.map(({ hour, keys }) => {
      const counts: Record<string, { count: number; sum: number }> = {};
      for (const [name, v] of keys) {
        const count = v.get(TRACK_COUNT) ?? 0;
        if (count === 0) continue;
        counts[name] = { count, sum: ((v.get(SUM_UP) ?? 0) - (v.get(SUM_DOWN) ?? 0)) / MICROS };
      }
      return { hour, counts };
    }),
  };
}

/** Exposures of one flag per variation over a period: what the sample-ratio check reads. */
export function exposureTotals(
  counter: Pick<EvaluationCounter, 'series'>,
  scope: string,
  flagKey: string,
  period: StatsPeriod,
  now?: number,
): Map<string, number> {
  const totals = new Map<string, number>();
  for (const { variations } of counter.series({ scope: exposureScope(scope), flagKey, period, ...(now === undefined ? {} : { now }) })
    .series) {
    for (const [variation, n] of Object.entries(variations)) totals.set(variation, addCounts(totals.get(variation) ?? 0, n));
  }
  return totals;
}
