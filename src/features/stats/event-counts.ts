import { InvalidInputError } from '../../foundations/errors/kinds.js';
import { addCounts } from './count-maps.js';
import type { EvaluationCounter } from './evaluation-counter.js';
import { isStatsPeriod, type StatsPeriod } from './hours.js';

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

/** A value as the sum keeps it: whole millionths. */
export function toMicros(value: number): number {
  return Math.round(value * MICROS);
}

/** Counts the cells of one environment (`scope` as statsScope makes it); returns how many events were kept. */
export function addEventCells(
  counter: Pick<EvaluationCounter, 'add'>,
  scope: string,
  exposures: Iterable<ExposureCell>,
  track: Iterable<TrackCell>,
): number {
  let accepted = 0;
  const exposed = exposureScope(scope);
  for (const e of exposures) if (counter.add(exposed, e.flagKey, e.variation, e.hourStartMs, e.count)) accepted += e.count;
  const tracked = trackScope(scope);
  for (const t of track) {
    if (!counter.add(tracked, t.name, TRACK_COUNT, t.hourStartMs, t.count)) continue;
    accepted += t.count;
    if (t.sumMicros > 0) counter.add(tracked, t.name, SUM_UP, t.hourStartMs, t.sumMicros);
    else if (t.sumMicros < 0) counter.add(tracked, t.name, SUM_DOWN, t.hourStartMs, -t.sumMicros);
  }
  return accepted;
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
