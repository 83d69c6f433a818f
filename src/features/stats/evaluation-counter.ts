import { InvalidInputError } from '../../foundations/errors/kinds.js';
import { type Logger, silentLogger } from '../../foundations/log/logger.js';
import type { ControlState, CountStore } from '../../foundations/state/index.js';
import {
  addCounts,
  addDurable,
  addPending,
  child,
  type DurableCounts,
  durableEntries,
  type HourCounts,
  type LatestHours,
  latestHours,
  noteLatest,
  type PendingCounts,
  pendingEntries,
  pruneDurable,
  type VariationCounts,
} from './count-maps.js';
import { HOUR_MS, hourStart, isStatsPeriod, oldestKeptHour, PERIOD_HOURS, type StatsPeriod } from './hours.js';

/** Schedules `fn` every `ms`; returns how to stop. Injected so tests control time. */
export type Every = (ms: number, fn: () => void) => () => void;

export interface EvaluationCounterOptions {
  /** Where counts are kept. */
  state: Pick<ControlState, 'counts'>;
  /** Epoch milliseconds. */
  now?: () => number;
  every?: Every;
  /** How often counts are stored; a crash loses at most this much. Default 2 s. */
  flushIntervalMs?: number;
  logger?: Logger;
}

export interface SeriesQuery {
  scope: string;
  flagKey: string;
  period: StatsPeriod;
  /** Epoch milliseconds; the series ends with the hour containing it. Default: the clock. */
  now?: number;
}

export interface StatsSeries {
  period: StatsPeriod;
  /** One entry per hour of the period, oldest first; an hour without evaluations has `variations: {}`. */
  series: Array<{ hour: string; variations: Record<string, number> }>;
}

const DEFAULT_FLUSH_MS = 2_000;

const realEvery: Every = (ms, fn) => {
  const handle = setInterval(fn, ms);
  handle.unref(); // counting must never keep the process alive
  return () => clearInterval(handle);
};

/**
 * Evaluation counts per (scope, flag, variation, hour). `record` is the evaluation hot path: a clock read,
 * two comparisons and three Map lookups, no allocation once a (scope, flag, variation) has been seen this hour.
 * Counts are flushed to the control plane's state (CountStore) every flush interval and queried from memory,
 * flushed or not.
 */
export class EvaluationCounter {
  private pending: PendingCounts = new Map();
  /** The batch being written; still counted by queries until it is durable. */
  private inFlight: PendingCounts | null = null;
  private current: HourCounts = new Map();
  private currentHour = 0;
  /** -Infinity forces the next `record` to look up its hour's bucket. */
  private nextHour = Number.NEGATIVE_INFINITY;
  private lastPrunedHour: number;
  /** scope → flag key → the newest hour with a durable count: what lastEvaluated reads without walking every hour. */
  private latest: LatestHours = new Map();
  private flushes: Promise<void> = Promise.resolve();
  private closing: Promise<void> | null = null;
  private stopTimer: () => void = () => {};
  private stopListening: () => void = () => {};
  /** A read of what other instances added is waiting for its turn; more announcements meanwhile need no other. */
  private rereadQueued = false;
  private closed = false;
  /** Goes up whenever keys may have left the counts (expired hours dropped, counts read again): see keysOf. */
  private revision = 0;
  private readonly now: () => number;
  private readonly logger: Logger;

  private constructor(
    private readonly store: CountStore,
    private durable: DurableCounts,
    options: EvaluationCounterOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? silentLogger;
    this.lastPrunedHour = hourStart(this.now());
  }

  static async open(options: EvaluationCounterOptions): Promise<EvaluationCounter> {
    const store = options.state.counts;
    const durable: DurableCounts = new Map();
    await store.read(oldestKeptHour((options.now ?? Date.now)()), (entry) => addDurable(durable, entry));
    const counter = new EvaluationCounter(store, durable, options);
    counter.latest = latestHours(durable);
    await counter.tidy().catch(async (err) => {
      await store.close();
      throw err;
    });
    // Several control planes on one database count apart and answer for all: what the others add is read again.
    counter.stopListening = store.onChange(() => counter.rereadDurable());
    // Started only now, so that no flush runs during the compaction above.
    counter.stopTimer = (options.every ?? realEvery)(options.flushIntervalMs ?? DEFAULT_FLUSH_MS, () => {
      counter.flush().catch((err) => counter.logger.error('stats flush failed; will retry', { err }));
    });
    return counter;
  }

  /** Counts one evaluation. Never throws and never waits: it runs on every evaluation request. */
  record(scope: string, flagKey: string, variation: string): void {
    if (this.closing) return;
    const t = this.now();
    if (t >= this.nextHour || t < this.currentHour) this.enterHour(t);
    let flags = this.current.get(scope);
    if (flags === undefined) {
      flags = new Map();
      this.current.set(scope, flags);
    }
    let variations = flags.get(flagKey);
    if (variations === undefined) {
      variations = new Map();
      flags.set(flagKey, variations);
    }
    variations.set(variation, (variations.get(variation) ?? 0) + 1);
  }

  /**
   * Adds counts reported in a batch (by SDKs or replicas) for the hour starting at `hourStartMs`.
   * Returns false when that hour is already past retention (nothing to keep it for).
   */
  add(scope: string, flagKey: string, variation: string, hourStartMs: number, count: number): boolean {
    if (!Number.isSafeInteger(count) || count <= 0) throw new InvalidInputError('count must be a positive whole number', 'count');
    if (!Number.isFinite(hourStartMs)) throw new InvalidInputError('hour must be a time', 'hour');
    const hour = hourStart(hourStartMs);
    const now = this.now();
    // An hour ahead allows for clock skew between reporters; further ahead is a bug or an attack.
    if (hour > hourStart(now) + HOUR_MS) throw new InvalidInputError('hour is in the future', 'hour');
    if (this.closing || hour < oldestKeptHour(now)) return false;
    addPending(this.pending, { hour, scope, flagKey, variation, count });
    return true;
  }

  /** The hourly series of a flag in a scope, counting flushed and not yet flushed evaluations. */
  series(query: SeriesQuery): StatsSeries {
    if (!isStatsPeriod(query.period)) throw new InvalidInputError('period must be 24h, 7d or 30d', 'period');
    const end = hourStart(query.now ?? this.now());
    const start = end - (PERIOD_HOURS[query.period] - 1) * HOUR_MS;
    const durableHours = this.durable.get(query.scope)?.get(query.flagKey);
    const series: StatsSeries['series'] = [];
    for (let hour = start; hour <= end; hour += HOUR_MS) {
      const totals = new Map<string, number>();
      const sources = [
        durableHours?.get(hour),
        this.inFlight?.get(hour)?.get(query.scope)?.get(query.flagKey),
        this.pending.get(hour)?.get(query.scope)?.get(query.flagKey),
      ];
      for (const counts of sources) {
        if (counts) for (const [variation, n] of counts) totals.set(variation, addCounts(totals.get(variation) ?? 0, n));
      }
      series.push({ hour: new Date(hour).toISOString(), variations: Object.fromEntries(totals) });
    }
    return { period: query.period, series };
  }

  /**
   * Every key of a scope per hour of the period (key → variation → count), flushed or not: for scopes whose
   * keys are not known in advance (track event names).
   */
  scopeSeries(scope: string, period: StatsPeriod, now?: number): Array<{ hour: string; keys: Map<string, VariationCounts> }> {
    const end = hourStart(now ?? this.now());
    const start = end - (PERIOD_HOURS[period] - 1) * HOUR_MS;
    const byHour = new Map<number, Map<string, VariationCounts>>();
    const addAll = (hour: number, key: string, counts: VariationCounts | undefined) => {
      if (!counts || hour < start || hour > end) return;
      const variations = child(
        child(byHour, hour, () => new Map()),
        key,
        () => new Map(),
      );
      for (const [variation, n] of counts) variations.set(variation, addCounts(variations.get(variation) ?? 0, n));
    };
    for (const [key, hours] of this.durable.get(scope) ?? []) for (const [hour, counts] of hours) addAll(hour, key, counts);
    for (const batch of [this.inFlight, this.pending]) {
      for (const [hour, scopes] of batch ?? []) for (const [key, counts] of scopes.get(scope) ?? []) addAll(hour, key, counts);
    }
    const series: Array<{ hour: string; keys: Map<string, VariationCounts> }> = [];
    for (let hour = start; hour <= end; hour += HOUR_MS)
      series.push({ hour: new Date(hour).toISOString(), keys: byHour.get(hour) ?? new Map() });
    return series;
  }

  /** Every key with a count in the scope, in any hour kept, flushed or not. */
  keysOf(scope: string): Set<string> {
    const keys = new Set(this.durable.get(scope)?.keys());
    for (const batch of [this.inFlight, this.pending]) {
      for (const scopes of batch?.values() ?? []) for (const key of scopes.get(scope)?.keys() ?? []) keys.add(key);
    }
    return keys;
  }

  /** Changes when a key may have gone from keysOf's answer; adding counts only adds keys and leaves it alone. */
  get keysRevision(): number {
    return this.revision;
  }

  /**
   * Per flag of a scope, the latest moment it may have been evaluated within the counts kept: the end of the
   * newest hour with a count (counts are per hour), never later than now. Flags without a count are absent.
   */
  lastEvaluated(scope: string): Map<string, number> {
    const now = this.now();
    const oldest = oldestKeptHour(now);
    const out = new Map<string, number>();
    const note = (flagKey: string, hour: number) => {
      if (hour < oldest) return;
      const end = Math.min(now, hour + HOUR_MS);
      if (end > (out.get(flagKey) ?? Number.NEGATIVE_INFINITY)) out.set(flagKey, end);
    };
    for (const [flagKey, hour] of this.latest.get(scope) ?? []) note(flagKey, hour);
    for (const batch of [this.inFlight, this.pending]) {
      for (const [hour, scopes] of batch ?? []) for (const flagKey of scopes.get(scope)?.keys() ?? []) note(flagKey, hour);
    }
    return out;
  }

  /** Writes every count not yet on disk. Flushes run one at a time. */
  flush(): Promise<void> {
    const run = () => this.flushPending();
    const done = this.flushes.then(run, run);
    this.flushes = done.catch(() => undefined);
    return done;
  }

  /** Stops the timer and flushes everything: a clean stop (SIGTERM) loses no count. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stopTimer();
      this.stopListening();
      try {
        await this.flush();
      } finally {
        this.closed = true;
        await this.store.close();
      }
    })();
    return this.closing;
  }

  /** Reads every stored count again, in turn with the flushes, so no add of this instance is under way meanwhile. */
  private rereadDurable(): void {
    if (this.rereadQueued) return;
    this.rereadQueued = true;
    const run = async () => {
      this.rereadQueued = false;
      if (this.closed) return;
      const durable: DurableCounts = new Map();
      await this.store.read(oldestKeptHour(this.now()), (entry) => addDurable(durable, entry));
      this.durable = durable;
      this.latest = latestHours(durable);
      this.revision++;
    };
    const done = this.flushes.then(run, run);
    this.flushes = done.catch((err) =>
      this.logger.error('stats: reading counts of other instances failed; the next change reads them', { err }),
    );
  }

  private enterHour(t: number): void {
    this.currentHour = hourStart(t);
    this.nextHour = this.currentHour + HOUR_MS;
    let bucket = this.pending.get(this.currentHour);
    if (bucket === undefined) {
      bucket = new Map();
      this.pending.set(this.currentHour, bucket);
    }
    this.current = bucket;
  }

  private async flushPending(): Promise<void> {
    if (this.closed) return;
    const batch = this.pending;
    this.pending = new Map();
    this.nextHour = Number.NEGATIVE_INFINITY; // `current` belonged to the old map
    this.inFlight = batch;
    try {
      await this.store.add(pendingEntries(batch));
    } catch (err) {
      for (const entry of pendingEntries(batch)) addPending(this.pending, entry);
      this.inFlight = null;
      throw err;
    }
    for (const entry of pendingEntries(batch)) {
      addDurable(this.durable, entry);
      noteLatest(this.latest, entry);
    }
    this.inFlight = null;
    const hour = hourStart(this.now());
    if (hour !== this.lastPrunedHour) {
      this.lastPrunedHour = hour;
      pruneDurable(this.durable, oldestKeptHour(hour));
      this.revision++;
    }
    await this.tidy();
  }

  /** Lets the store drop expired hours, handing it the counts kept (one per scope, flag, variation and hour) should it rewrite itself. */
  private async tidy(): Promise<void> {
    const oldest = oldestKeptHour(this.now());
    await this.store.tidy(oldest, () => {
      pruneDurable(this.durable, oldest);
      this.revision++;
      return durableEntries(this.durable);
    });
  }
}

/**
 * The scope counts are kept under: one project environment of one organisation. Callers build it once
 * (per snapshot or per SDK key), not per evaluation, so the hot path concatenates no strings.
 */
export function statsScope(org: string, projectId: string, environment: string): string {
  return `${org}/${projectId}/${environment}`;
}
