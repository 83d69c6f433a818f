/** Evaluation counts: local mode counts each evaluation and reports the counts to POST /v1/counts. */
import { describeError, discardBody, type Http, HttpError, httpError } from './http.js';
import type { Scheduler, SdkLogger } from './types.js';

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

/** The server takes at most this many entries per report (docs/sdk.md, "Evaluation counts"). */
export const MAX_REPORT_ENTRIES = 1000;
/** ... and at most this count in one entry, each flag, variation and hour named once per report. */
export const MAX_ENTRY_COUNT = 1_000_000;
/** Reports one send may post; what is left waits for the next interval (a backlog after a long outage). */
const MAX_REPORTS_PER_SEND = 100;

/** close() waits at most this long for the last report, so that stopping an application stays quick. */
const CLOSE_REPORT_TIMEOUT_MS = 2_000;

/**
 * Sends the counts of local evaluations to POST /v1/counts every interval and once more on close. A report the
 * server could not take for a passing reason (network, 5xx) goes back into the buffer for the next one; one it
 * refused (4xx) is dropped, since sending it again would be refused again.
 */
export class CountReporter {
  private timer: unknown;
  private sending: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly http: Http,
    private readonly buffer: CountBuffer,
    private readonly scheduler: Scheduler,
    private readonly intervalMs: number,
    private readonly logger: SdkLogger,
  ) {}

  start(): void {
    this.schedule();
  }

  /** Sends what has been counted; reports never overlap. */
  flush(timeoutMs?: number): Promise<void> {
    const run = () => this.send(timeoutMs);
    this.sending = this.sending.then(run, run);
    return this.sending;
  }

  /** Stops the timer, waits for a report in flight, sends the rest. */
  async close(): Promise<void> {
    this.stopped = true;
    this.scheduler.clearTimeout(this.timer);
    this.buffer.stop();
    await this.flush(CLOSE_REPORT_TIMEOUT_MS);
  }

  /**
   * The next report comes after the interval, or at the start of the next hour if that is sooner: the buffer
   * learns the hour only when it is drained, so a report at each hour's start keeps counts in their hour.
   */
  private schedule(): void {
    if (this.stopped) return;
    const delay = Math.min(this.intervalMs, untilNextHour(this.scheduler.now()) + 1);
    this.timer = this.scheduler.setTimeout(() => {
      void this.flush().finally(() => this.schedule());
    }, delay);
  }

  private async send(timeoutMs?: number): Promise<void> {
    const entries = this.buffer.drain(); // even when empty: it moves the buffer into the current hour
    if (entries.length === 0) return;
    const reports = splitIntoReports(entries);
    if (reports.length > MAX_REPORTS_PER_SEND) this.buffer.restore(reports.splice(MAX_REPORTS_PER_SEND).flat());
    for (let i = 0; i < reports.length; i++) {
      const batch = reports[i];
      try {
        await this.post(batch, timeoutMs);
      } catch (err) {
        if (err instanceof HttpError && err.status >= 400 && err.status < 500) {
          this.logger.warn('the server refused evaluation counts; dropping them', { error: err.message, entries: batch.length });
          continue;
        }
        this.logger.warn('could not send evaluation counts; will retry', { error: describeError(err) });
        if (!this.stopped) this.buffer.restore(reports.slice(i).flat());
        return;
      }
    }
  }

  private post(counts: CountReportEntry[], timeoutMs?: number): Promise<void> {
    const init = { method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ counts }), timeoutMs };
    return this.http.call('/v1/counts', init, async (res) => {
      if (res.status !== 202) throw await httpError(res, 'POST /v1/counts');
      await discardBody(res);
    });
  }
}

/**
 * Reports the server takes: at most MAX_REPORT_ENTRIES entries, no count above MAX_ENTRY_COUNT, each flag,
 * variation and hour at most once. A larger count goes in parts, the nth part in the nth report.
 */
export function splitIntoReports(entries: readonly CountReportEntry[]): CountReportEntry[][] {
  const rounds: CountReportEntry[][] = [];
  for (const entry of entries) {
    let left = entry.count;
    for (let round = 0; left > 0; round++) {
      const part = Math.min(left, MAX_ENTRY_COUNT);
      rounds[round] ??= [];
      rounds[round].push(part === entry.count ? entry : { ...entry, count: part });
      left -= part;
    }
  }
  const reports: CountReportEntry[][] = [];
  for (const round of rounds)
    for (let i = 0; i < round.length; i += MAX_REPORT_ENTRIES) reports.push(round.slice(i, i + MAX_REPORT_ENTRIES));
  return reports;
}
