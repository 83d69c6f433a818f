/** Exposure and track events, sent in batches to POST /v1/events. */
import { describeError, discardBody, type Http, HttpError, httpError } from './http.js';
import type { Scheduler, SdkLogger } from './types.js';

/** One event of POST /v1/events. */
export type SdkEvent =
  | { type: 'exposure'; flagKey: string; variation: string; userId?: string; at: string }
  | { type: 'track'; name: string; userId?: string; value?: number; at: string };

/** The server takes at most this many events per request. */
export const MAX_EVENTS_PER_REQUEST = 1000;
/** Events kept while the server cannot be reached: beyond it, the oldest are dropped. */
const MAX_QUEUED = 10_000;
/** close() waits at most this long for the last batch. */
const CLOSE_TIMEOUT_MS = 2_000;
/** The server's bounds on what an event carries. */
const MAX_USER_ID = 256;
const MAX_VALUE = 1e9;
const EVENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Why the server would refuse a track event with this name and value, or null. */
export function trackProblem(name: unknown, value: unknown): string | null {
  if (typeof name !== 'string' || !EVENT_NAME.test(name))
    return "the name must be 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit";
  if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > MAX_VALUE))
    return 'the value must be a number from -1e9 to 1e9';
  return null;
}

/** An evaluation without a userId (or with one longer than the server keeps): all of them are one user. */
const ANONYMOUS = '';

/**
 * Exposures are deduplicated per flag, variation and user until the next send, so an application evaluating a
 * flag in a loop sends one exposure per user per interval, and `exposure` (on every evaluation) costs three Map
 * lookups and no allocation once that user was seen. A batch is sent every interval, when `maxBatch` events are
 * waiting, and on close. A batch the server could not take for a passing reason (network, 5xx) waits for the
 * next send; one it refused (4xx) is dropped, since it would be refused again.
 */
export class EventSender {
  /** flag → variation → users exposed since the last send */
  private exposures = new Map<string, Map<string, Set<string>>>();
  /** Events are kept as their JSON text: built once, never an object per exposure. */
  private tracked: string[] = [];
  /** Events the last send could not deliver, oldest first. */
  private retry: string[] = [];
  private size = 0;
  /** When the first exposure of this batch was seen: the batch's exposures carry it as `at`. */
  private openedAt = 0;
  private timer: unknown;
  private sending: Promise<void> = Promise.resolve();
  private flushQueued = false;
  private stopped = false;

  constructor(
    private readonly http: Http,
    private readonly scheduler: Scheduler,
    private readonly intervalMs: number,
    private readonly maxBatch: number,
    private readonly logger: SdkLogger,
  ) {}

  start(): void {
    this.schedule();
  }

  /** One evaluation a caller was given: what the sample-ratio check and experiments count. */
  exposure(flagKey: string, variation: string, userId: string | undefined): void {
    if (this.stopped) return;
    let variations = this.exposures.get(flagKey);
    if (variations === undefined) {
      variations = new Map();
      this.exposures.set(flagKey, variations);
    }
    let users = variations.get(variation);
    if (users === undefined) {
      users = new Set();
      variations.set(variation, users);
    }
    const user = userId === undefined || userId.length > MAX_USER_ID ? ANONYMOUS : userId;
    if (users.has(user)) return;
    if (this.size === 0) this.openedAt = this.scheduler.now();
    users.add(user);
    this.added();
  }

  /** A track event; one the server would refuse is dropped here with a warning, as it would take its whole batch down. */
  track(name: unknown, userId: string | undefined, value: unknown): void {
    if (this.stopped) return;
    const problem = trackProblem(name, value);
    if (problem !== null) {
      this.logger.warn(`track: ${problem}; event dropped`);
      return;
    }
    const event: SdkEvent = { type: 'track', name: name as string, at: new Date(this.scheduler.now()).toISOString() };
    if (userId !== undefined && userId.length <= MAX_USER_ID) event.userId = userId;
    if (value !== undefined) event.value = value as number;
    this.tracked.push(JSON.stringify(event));
    this.added();
  }

  /** Sends everything waiting; sends never overlap. */
  flush(timeoutMs?: number): Promise<void> {
    const run = () => this.send(timeoutMs);
    this.sending = this.sending.then(run, run);
    return this.sending;
  }

  /** Stops the timer and sends what is left (waiting at most 2 s). */
  async close(): Promise<void> {
    this.stopped = true;
    this.scheduler.clearTimeout(this.timer);
    await this.flush(CLOSE_TIMEOUT_MS);
  }

  private added(): void {
    this.size++;
    // A full batch leaves at once rather than at the next interval.
    if (this.size >= this.maxBatch && !this.flushQueued) {
      this.flushQueued = true;
      void this.flush().finally(() => {
        this.flushQueued = false;
      });
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.scheduler.setTimeout(() => {
      void this.flush().finally(() => this.schedule());
    }, this.intervalMs);
  }

  /** Everything waiting, retried events first, and a fresh batch to collect into. */
  private drain(): string[] {
    const out = this.retry;
    const at = new Date(this.openedAt).toISOString();
    for (const [flagKey, variations] of this.exposures) {
      for (const [variation, users] of variations) {
        const head = `{"type":"exposure","flagKey":${JSON.stringify(flagKey)},"variation":${JSON.stringify(variation)},"at":"${at}"`;
        for (const user of users) out.push(user === ANONYMOUS ? `${head}}` : `${head},"userId":${JSON.stringify(user)}}`);
      }
    }
    for (const event of this.tracked) out.push(event);
    this.retry = [];
    this.exposures = new Map();
    this.tracked = [];
    this.size = 0;
    return out;
  }

  private async send(timeoutMs?: number): Promise<void> {
    const events = this.drain();
    const per = Math.min(this.maxBatch, MAX_EVENTS_PER_REQUEST);
    for (let i = 0; i < events.length; i += per) {
      const batch = events.slice(i, i + per);
      try {
        await this.post(batch, timeoutMs);
      } catch (err) {
        if (err instanceof HttpError && err.status >= 400 && err.status < 500) {
          this.logger.warn('the server refused events; dropping them', { error: err.message, events: batch.length });
          continue;
        }
        this.logger.warn('could not send events; will retry', { error: describeError(err) });
        if (!this.stopped) {
          const left = events.slice(i);
          this.retry = left.length > MAX_QUEUED ? left.slice(left.length - MAX_QUEUED) : left;
        }
        return;
      }
    }
  }

  private post(events: string[], timeoutMs?: number): Promise<void> {
    const init = {
      method: 'POST' as const,
      headers: { 'content-type': 'application/json' },
      body: `{"events":[${events.join(',')}]}`,
      timeoutMs,
    };
    return this.http.call('/v1/events', init, async (res) => {
      if (res.status !== 202) throw await httpError(res, 'POST /v1/events');
      await discardBody(res);
    });
  }
}
