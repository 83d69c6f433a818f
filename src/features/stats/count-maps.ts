import type { CountEntry } from '../../foundations/state/index.js';

/** variation → count */
export type VariationCounts = Map<string, number>;
/** scope → flag key → variation → count, for one hour. */
export type HourCounts = Map<string, Map<string, VariationCounts>>;
/** hour start (ms) → counts of that hour: what has been counted but not yet written. */
export type PendingCounts = Map<number, HourCounts>;
/** scope → flag key → hour start (ms) → variation → count: what is on disk, shaped for queries. */
export type DurableCounts = Map<string, Map<string, Map<number, VariationCounts>>>;

export type { CountEntry } from '../../foundations/state/index.js';

/**
 * `a + b`, but never beyond Number.MAX_SAFE_INTEGER: a count the stats file could not give back exactly would
 * be refused when it is read again, and the count would be lost on restart.
 */
export function addCounts(a: number, b: number): number {
  return Math.min(Number.MAX_SAFE_INTEGER, a + b);
}

export function child<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

export function addPending(pending: PendingCounts, e: CountEntry): void {
  const scopes = child(pending, e.hour, () => new Map());
  const variations = child(
    child(scopes, e.scope, () => new Map()),
    e.flagKey,
    () => new Map(),
  );
  variations.set(e.variation, addCounts(variations.get(e.variation) ?? 0, e.count));
}

export function addDurable(durable: DurableCounts, e: CountEntry): void {
  const flags = child(durable, e.scope, () => new Map());
  const variations = child(
    child(flags, e.flagKey, () => new Map()),
    e.hour,
    () => new Map(),
  );
  variations.set(e.variation, addCounts(variations.get(e.variation) ?? 0, e.count));
}

export function* pendingEntries(pending: PendingCounts): Generator<CountEntry> {
  for (const [hour, scopes] of pending) {
    for (const [scope, flags] of scopes) {
      for (const [flagKey, variations] of flags) {
        for (const [variation, count] of variations) yield { hour, scope, flagKey, variation, count };
      }
    }
  }
}

export function* durableEntries(durable: DurableCounts): Generator<CountEntry> {
  for (const [scope, flags] of durable) {
    for (const [flagKey, hours] of flags) {
      for (const [hour, variations] of hours) {
        for (const [variation, count] of variations) yield { hour, scope, flagKey, variation, count };
      }
    }
  }
}

/** Removes every hour before `oldest`, and the maps left empty by that. */
export function pruneDurable(durable: DurableCounts, oldest: number): void {
  for (const [scope, flags] of durable) {
    for (const [flagKey, hours] of flags) {
      for (const hour of hours.keys()) if (hour < oldest) hours.delete(hour);
      if (hours.size === 0) flags.delete(flagKey);
    }
    if (flags.size === 0) durable.delete(scope);
  }
}

/** scope → flag key → the newest hour (ms) with a count. */
export type LatestHours = Map<string, Map<string, number>>;

export function noteLatest(latest: LatestHours, e: Pick<CountEntry, 'scope' | 'flagKey' | 'hour'>): void {
  const flags = child(latest, e.scope, () => new Map());
  if (e.hour > (flags.get(e.flagKey) ?? Number.NEGATIVE_INFINITY)) flags.set(e.flagKey, e.hour);
}

export function latestHours(durable: DurableCounts): LatestHours {
  const latest: LatestHours = new Map();
  for (const [scope, flags] of durable) {
    for (const [flagKey, hours] of flags) for (const hour of hours.keys()) noteLatest(latest, { scope, flagKey, hour });
  }
  return latest;
}
