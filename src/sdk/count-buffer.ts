const HOUR_MS = 3_600_000;

/** One line of a POST /v1/counts report. */
export interface CountReportEntry {
  flagKey: string;
  variation: string;
  /** ISO-8601 start of the UTC hour. */
  hour: string;
  count: number;
}

type FlagCounts = Map<string, Map<string, number>>;

export function hourStart(ms: number): number {
  return ms - (((ms % HOUR_MS) + HOUR_MS) % HOUR_MS);
}

/** Milliseconds from `ms` to the start of the next UTC hour. */
export function untilNextHour(ms: number): number {
  return hourStart(ms) + HOUR_MS - ms;
}

/**
 * Evaluation counts per (hour, flag, variation), kept until reported. `add` runs on every local evaluation, so
 * it reads no clock: counts go to the current hour's map, which `drain` (the reporter, at least once per
 * interval and at each hour's start) replaces with a fresh one for the hour the clock then says.
 */
export class CountBuffer {
  private current: FlagCounts = new Map();
  private currentHour: number;
  /** Counts put back after a failed report, by hour. */
  private older = new Map<number, FlagCounts>();
  private cells = 0;
  private stopped = false;

  constructor(
    private readonly now: () => number,
    /** Bounds memory while the server cannot be reached: beyond it, the oldest hours are dropped. */
    private readonly maxCells = 100_000,
  ) {
    this.currentHour = hourStart(now());
  }

  add(flagKey: string, variation: string): void {
    if (this.stopped) return;
    let variations = this.current.get(flagKey);
    if (variations === undefined) {
      variations = new Map();
      this.current.set(flagKey, variations);
    }
    const before = variations.get(variation);
    if (before === undefined) this.cells++;
    variations.set(variation, (before ?? 0) + 1);
  }

  /** Takes everything counted so far, oldest hour first, and starts counting in the clock's current hour. */
  drain(): CountReportEntry[] {
    const byHour = this.older;
    if (this.current.size > 0) byHour.set(this.currentHour, merge(byHour.get(this.currentHour), this.current));
    const out: CountReportEntry[] = [];
    for (const hour of [...byHour.keys()].sort((a, b) => a - b)) {
      const iso = new Date(hour).toISOString();
      for (const [flagKey, variations] of byHour.get(hour)!) {
        for (const [variation, count] of variations) out.push({ flagKey, variation, hour: iso, count });
      }
    }
    this.older = new Map();
    this.current = new Map();
    this.currentHour = hourStart(this.now());
    this.cells = 0;
    return out;
  }

  /** Puts back counts whose report failed, to go with the next one. */
  restore(entries: readonly CountReportEntry[]): void {
    for (const e of entries) {
      let flags = this.older.get(Date.parse(e.hour));
      if (flags === undefined) {
        flags = new Map();
        this.older.set(Date.parse(e.hour), flags);
      }
      let variations = flags.get(e.flagKey);
      if (variations === undefined) {
        variations = new Map();
        flags.set(e.flagKey, variations);
      }
      const before = variations.get(e.variation);
      if (before === undefined) this.cells++;
      variations.set(e.variation, (before ?? 0) + e.count);
    }
    this.trim();
  }

  /** Counts nothing from now on (the client is closed). */
  stop(): void {
    this.stopped = true;
  }

  private trim(): void {
    for (const hour of [...this.older.keys()].sort((a, b) => a - b)) {
      if (this.cells <= this.maxCells) return;
      for (const variations of this.older.get(hour)!.values()) this.cells -= variations.size;
      this.older.delete(hour);
    }
  }
}

function merge(into: FlagCounts | undefined, from: FlagCounts): FlagCounts {
  if (into === undefined) return from;
  for (const [flagKey, variations] of from) {
    const target = into.get(flagKey);
    if (target === undefined) {
      into.set(flagKey, variations);
      continue;
    }
    for (const [variation, n] of variations) target.set(variation, (target.get(variation) ?? 0) + n);
  }
  return into;
}
