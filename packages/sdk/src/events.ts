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
/** Exposures one window remembers (while sends are slow or failing); beyond, it starts over: duplicates, never fewer. */
const MAX_REMEMBERED = 100_000;
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

/** user → the variation recorded for them in this window; several (rarely: the flag changed meanwhile) as an array. */
type SeenUsers = Map<string, string | string[]>;

/** A request body ready to send, and how many events it holds. */
interface Batch {
  body: string;
  events: number;
}

/**
 * Exposures are deduplicated per flag, variation and user until the next send, so an application evaluating a
 * flag in a loop sends one exposure per user per interval. `exposure` runs on every evaluation, so a repeat
 * costs a Map lookup and a comparison (and a second lookup when the previous evaluation was of another flag),
 * and a new exposure is three strings appended to the queue: no object, no JSON until its batch leaves. A
 * batch leaves every interval, when `maxBatch` events wait, and on close; at most 10,000 events wait, the
 * oldest dropped first. A batch the server could not take for a passing reason (network, 5xx) waits for the
 * next send; one it refused (4xx) is dropped, since it would be refused again.
 */
export class EventSender {
  /** flag → users exposed since the last send */
  private seen = new Map<string, SeenUsers>();
  /** The flag of the last exposure and its users, found without a lookup when the next one is of that flag too. */
  private lastFlag: string | null = null;
  private lastUsers: SeenUsers | null = null;
  private remembered = 0;
  /** Events waiting, oldest first from `head`, three slots each: flag key, variation and user of an exposure; a track's JSON text, null, null. */
  private queue: (string | null)[] = [];
  private head = 0;
  /** Requests the last send could not deliver, oldest first, and the events they hold. */
  private retry: Batch[] = [];
  private retried = 0;
  /** When the window's first exposure was seen: its exposures carry it as `at`. */
  private openedAt: number | null = null;
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
  exposure(flagKey: string, variation: string, userId: unknown): void {
    const users = flagKey === this.lastFlag ? (this.lastUsers as SeenUsers) : this.usersOf(flagKey);
    // Only user ids the server keeps are keys, so anything else (none, not a string, too long) is looked up as anonymous there.
    if (users.get(userId as string) !== variation) this.record(users, flagKey, variation, userId);
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
    this.push(JSON.stringify(event), null, null);
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

  private usersOf(flagKey: string): SeenUsers {
    let users = this.seen.get(flagKey);
    if (users === undefined) {
      users = new Map();
      this.seen.set(flagKey, users);
    }
    this.lastFlag = flagKey;
    this.lastUsers = users;
    return users;
  }

  private forget(): void {
    this.seen = new Map();
    this.lastFlag = null;
    this.lastUsers = null;
    this.remembered = 0;
  }

  /** An exposure not yet seen with this variation in this window: queued. */
  private record(users: SeenUsers, flagKey: string, variation: string, userId: unknown): void {
    if (this.stopped) return;
    const user = typeof userId === 'string' && userId.length <= MAX_USER_ID ? userId : ANONYMOUS;
    const had = users.get(user);
    if (had === variation) return;
    if (had === undefined) users.set(user, variation);
    else if (typeof had === 'string') users.set(user, [had, variation]);
    else if (had.includes(variation)) return;
    else had.push(variation);
    if (++this.remembered > MAX_REMEMBERED) this.forget();
    this.openedAt ??= this.scheduler.now();
    this.push(flagKey, variation, user);
  }

  /** Queues an event: an exposure's flag key, variation and user, or a track's JSON text, null, null. */
  private push(key: string, variation: string | null, user: string | null): void {
    this.queue.push(key, variation, user);
    const waiting = (this.queue.length - this.head) / 3;
    if (waiting + this.retried > MAX_QUEUED) this.dropOldest();
    // A full batch leaves at once rather than at the next interval.
    if (waiting >= this.maxBatch && !this.flushQueued) {
      this.flushQueued = true;
      void this.flush().finally(() => {
        this.flushQueued = false;
      });
    }
  }

  /** Events come faster than they can be sent: the oldest go, retried requests first. */
  private dropOldest(): void {
    const oldest = this.retry.shift();
    if (oldest !== undefined) {
      this.retried -= oldest.events;
      return;
    }
    this.head += 3;
    // The queue is compacted now and then, not on every drop.
    if (this.head >= 3 * MAX_QUEUED) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.scheduler.setTimeout(() => {
      void this.flush().finally(() => this.schedule());
    }, this.intervalMs);
  }

  private async send(timeoutMs?: number): Promise<void> {
    const batches = this.retry;
    this.retry = [];
    this.retried = 0;
    batches.push(...this.drain());
    for (let i = 0; i < batches.length; i++) {
      try {
        await this.post(batches[i].body, timeoutMs);
      } catch (err) {
        if (err instanceof HttpError && err.status >= 400 && err.status < 500) {
          this.logger.warn('the server refused events; dropping them', { error: err.message, events: batches[i].events });
          continue;
        }
        this.logger.warn('could not send events; will retry', { error: describeError(err) });
        if (!this.stopped) this.keep(batches.slice(i));
        return;
      }
    }
  }

  /** Requests to try again with the next send, before the events queued since, within the bound. */
  private keep(batches: Batch[]): void {
    this.retry = batches;
    for (const batch of batches) this.retried += batch.events;
    while (this.retried + (this.queue.length - this.head) / 3 > MAX_QUEUED && this.retry.length > 0) this.dropOldest();
  }

  /** The queue as request bodies; a new window starts. */
  private drain(): Batch[] {
    const { queue, head } = this;
    const at = new Date(this.openedAt ?? 0).toISOString();
    this.openedAt = null;
    this.queue = [];
    this.head = 0;
    this.forget();
    // Each flag and variation's common start of an exposure, written once.
    const starts = new Map<string, Map<string, string>>();
    let startFlag: string | null = null;
    let startsOfFlag = new Map<string, string>();
    const per = 3 * Math.min(this.maxBatch, MAX_EVENTS_PER_REQUEST);
    const batches: Batch[] = [];
    for (let i = head; i < queue.length; i += per) {
      const end = Math.min(queue.length, i + per);
      let body = '{"events":[';
      for (let j = i; j < end; j += 3) {
        if (j > i) body += ',';
        const variation = queue[j + 1];
        if (variation === null) {
          body += queue[j];
          continue;
        }
        const flagKey = queue[j] as string;
        if (flagKey !== startFlag) {
          startFlag = flagKey;
          startsOfFlag = starts.get(flagKey) ?? new Map();
          starts.set(flagKey, startsOfFlag);
        }
        let start = startsOfFlag.get(variation);
        if (start === undefined) {
          start = `{"type":"exposure","flagKey":${JSON.stringify(flagKey)},"variation":${JSON.stringify(variation)},"at":"${at}"`;
          startsOfFlag.set(variation, start);
        }
        const user = queue[j + 2] as string;
        body += user === ANONYMOUS ? `${start}}` : `${start},"userId":${JSON.stringify(user)}}`;
      }
      batches.push({ body: `${body}]}`, events: (end - i) / 3 });
    }
    return batches;
  }

  private post(body: string, timeoutMs?: number): Promise<void> {
    const init = { method: 'POST' as const, headers: { 'content-type': 'application/json' }, body, timeoutMs };
    return this.http.call('/v1/events', init, async (res) => {
      if (res.status !== 202) throw await httpError(res, 'POST /v1/events');
      await discardBody(res);
    });
  }
}
