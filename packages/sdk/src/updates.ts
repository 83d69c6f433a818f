/**
 * Keeping the client current: the connection to GET /v1/stream, polling while it is down, and retries after
 * failures.
 */
import { describeError, type Http, HttpError, httpError, isConnectionLost, isRefusal } from './http.js';
import { readEventStream } from './sse.js';
import type { Scheduler, SdkLogger } from './types.js';

/**
 * How long to wait before retry number `attempt` (1 = the first retry): doubling from `initialMs` up to
 * `maxMs`, then "equal jitter" (half fixed, half random) so that many clients cut off by the same outage do not
 * come back in lockstep, while none retries much sooner than planned.
 */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number, random: () => number): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const ceiling = Math.min(maxMs, initialMs * 2 ** exponent);
  return ceiling / 2 + random() * (ceiling / 2);
}

/** The longest wait before trying again a server that refused or reset the connection. */
const RECONNECT_MAX_MS = 1_000;

export interface RetrySettings {
  retryInitialMs: number;
  retryMaxMs: number;
  random: () => number;
}

/**
 * The wait before retrying after `error`, the `answered`th answered failure in a row: within a second when
 * nothing listens (costs the server nothing), else Retry-After or the doubling backoff.
 */
export function retryDelay(error: unknown, answered: number, settings: RetrySettings): number {
  const { retryInitialMs, retryMaxMs, random } = settings;
  if (isConnectionLost(error)) return reconnectDelay(settings);
  if (error instanceof HttpError && error.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, retryMaxMs);
  return backoffDelay(answered, retryInitialMs, retryMaxMs, random);
}

/** Up to a second (less when retryInitialMs is), with jitter. */
export function reconnectDelay({ retryInitialMs, retryMaxMs, random }: RetrySettings): number {
  return backoffDelay(1, Math.min(retryInitialMs, RECONNECT_MAX_MS), retryMaxMs, random);
}

/** What a `version` event says besides the version: the version it follows and, when small, the patch from it. */
export interface VersionChange {
  since: number;
  /** `{ flags, segments }` as sent, unchecked; absent when the change was too big to send. */
  patch?: unknown;
}

export interface StreamHandlers {
  onOpen(): void;
  onVersion(version: number, change?: VersionChange): void;
  /**
   * The stream is over (it will not call anything again); `refused` when the key was refused (401/403),
   * `opened` when it had been connected.
   */
  onClose(error: Error, refused: boolean, opened: boolean): void;
}

export interface StreamOptions {
  http: Http;
  scheduler: Scheduler;
  logger: SdkLogger;
  /** Nothing received for this long (the server sends a heartbeat every 15–25 s) means the connection is dead. */
  idleTimeoutMs: number;
  /** The version held when connecting: sent as `?since=`, so that the first event can carry the patch from it. */
  since?: () => number | null;
}

/**
 * One connection to GET /v1/stream, read with fetch's ReadableStream so it works the same in Node and browsers
 * and can carry the SDK key in a header. It never reconnects by itself: the update loop decides when.
 */
export class StreamConnection {
  private readonly controller = new AbortController();
  private idleTimer: unknown;
  private idle = false;
  private ended = false;

  constructor(
    private readonly options: StreamOptions,
    private readonly handlers: StreamHandlers,
  ) {
    void this.run();
  }

  /** Ends the connection without calling onClose. */
  close(): void {
    this.finish();
  }

  private async run(): Promise<void> {
    let failure: Error;
    let refused = false;
    let opened = false;
    try {
      const since = this.options.since?.() ?? null;
      const path = since === null ? '/v1/stream' : `/v1/stream?since=${since}`;
      const res = await this.options.http.open(path, { accept: 'text/event-stream' }, this.controller);
      const type = res.headers.get('content-type') ?? '';
      if (res.status !== 200 || !type.startsWith('text/event-stream') || res.body === null) {
        const err =
          res.status === 200
            ? new HttpError(200, `GET /v1/stream answered ${type || 'no content type'}`)
            : await httpError(res, 'GET /v1/stream');
        refused = isRefusal(err);
        throw err;
      }
      if (this.ended) return;
      opened = true;
      this.handlers.onOpen();
      this.touch();
      await readEventStream(
        res.body,
        (event) => {
          if (event.event === 'version') this.version(event.data);
        },
        () => this.touch(),
      );
      failure = new Error('the server ended the stream');
    } catch (err) {
      failure = this.idle
        ? new Error(`GET /v1/stream sent nothing for ${this.options.idleTimeoutMs} ms`)
        : err instanceof Error
          ? err
          : new Error(describeError(err));
    }
    if (this.ended) return;
    this.finish();
    this.handlers.onClose(failure, refused, opened);
  }

  private version(data: string): void {
    let event: { version?: unknown; since?: unknown; patch?: unknown };
    try {
      event = JSON.parse(data) as typeof event;
    } catch {
      this.options.logger.warn('ignoring a version event that is not JSON', { data: data.slice(0, 200) });
      return;
    }
    const { version, since, patch } = event ?? {};
    if (typeof version !== 'number' || !Number.isFinite(version)) return;
    if (typeof since !== 'number') this.handlers.onVersion(version);
    else this.handlers.onVersion(version, patch === undefined ? { since } : { since, patch });
  }

  /** Restarts the idle watchdog: any bytes, heartbeat comments included, prove the connection alive. */
  private touch(): void {
    this.options.scheduler.clearTimeout(this.idleTimer);
    this.idleTimer = this.options.scheduler.setTimeout(() => {
      this.idle = true;
      this.controller.abort();
    }, this.options.idleTimeoutMs);
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.options.scheduler.clearTimeout(this.idleTimer);
    this.controller.abort();
  }
}

/** What the loop keeps current: the snapshot (local mode) or the version (remote mode). */
export interface UpdateSource {
  /** One conditional request; applies what it learns. Throws when the server cannot be used. */
  refresh(): Promise<void>;
  /**
   * The stream announced `version` (with the version it follows and maybe a patch): whether a refresh is
   * needed to catch up with it.
   */
  announce(version: number, change?: VersionChange): boolean;
  /** The version held, sent when the stream connects; absent when the source takes no patches. */
  version?(): number | null;
}

export interface UpdateLoopOptions {
  source: UpdateSource;
  scheduler: Scheduler;
  logger: SdkLogger;
  random: () => number;
  pollIntervalMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
  /** Opens GET /v1/stream; null when streaming is off. */
  openStream: ((handlers: StreamHandlers) => StreamConnection) | null;
  succeeded(): void;
  failed(error: unknown): void;
}

/**
 * Keeps a source current. With a stream connected it waits for announcements and fetches on each; without
 * one it polls every pollIntervalMs. After a failure it retries after retryDelay, whatever the mode, and a
 * dropped stream is reconnected on its own retry delays while polling covers the gap.
 */
export class UpdateLoop {
  // Until a refresh succeeds again: when to retry, and how many failures in a row the server answered.
  private retryInMs: number | null = null;
  private answeredFailures = 0;
  private streamDrops = 0;
  private streamAnsweredFailures = 0;
  private streamUp = false;
  private stream: StreamConnection | null = null;
  private pollTimer: unknown;
  private reconnectTimer: unknown;
  private inFlight: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly options: UpdateLoopOptions) {}

  start(): void {
    void this.refresh();
    if (this.options.openStream !== null) this.connect();
  }

  /** Refreshes now; a call while one runs makes it run once more afterwards (versions may have moved on). */
  refresh(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.inFlight !== null) {
      this.again = true;
      return this.inFlight;
    }
    this.clearPoll();
    this.inFlight = this.runRefreshes().finally(() => {
      this.inFlight = null;
      this.schedulePoll();
    });
    return this.inFlight;
  }

  stop(): void {
    this.stopped = true;
    this.clearPoll();
    this.options.scheduler.clearTimeout(this.reconnectTimer);
    this.stream?.close();
    this.stream = null;
  }

  private async runRefreshes(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.options.source.refresh();
      } catch (err) {
        if (this.stopped) return;
        this.answeredFailures = isConnectionLost(err) ? 0 : this.answeredFailures + 1;
        this.retryInMs = retryDelay(err, this.answeredFailures, this.options);
        this.options.failed(err);
        return; // the retry timer retries; looping here would hammer a server that is down
      }
      if (this.stopped) return;
      this.retryInMs = null;
      this.answeredFailures = 0;
      this.options.succeeded();
    } while (this.again);
  }

  private schedulePoll(): void {
    this.clearPoll();
    if (this.stopped) return;
    let delay: number;
    if (this.retryInMs !== null) delay = this.retryInMs;
    else if (this.streamUp)
      return; // the stream announces every change
    else delay = this.options.pollIntervalMs;
    this.pollTimer = this.options.scheduler.setTimeout(() => {
      this.pollTimer = undefined;
      void this.refresh();
    }, delay);
  }

  private connect(): void {
    const open = this.options.openStream;
    if (open === null || this.stopped) return;
    this.stream = open({
      onOpen: () => {
        this.streamDrops = 0;
        this.streamAnsweredFailures = 0;
        this.streamUp = true;
        // Healthy again: the stream replaces polling, and a pending retry is better done now.
        if (this.retryInMs !== null) void this.refresh();
        else if (this.inFlight === null) this.clearPoll();
      },
      onVersion: (version, change) => {
        if (this.options.source.announce(version, change)) void this.refresh();
      },
      onClose: (error, refused, opened) => {
        this.streamUp = false;
        this.stream = null;
        if (this.stopped) return;
        this.streamDrops++;
        if (this.streamDrops === 1)
          this.options.logger.warn('the flag stream dropped; polling until it is back', { error: describeError(error) });
        // Find out at once whether the server is still there, and poll from here on until the stream is back.
        void this.refresh();
        // A stream that was connected and ended is reopened as soon as a lost connection would be: the server
        // may be restarting, and a reconnection it refuses costs it nothing.
        this.streamAnsweredFailures = opened || isConnectionLost(error) ? 0 : this.streamAnsweredFailures + 1;
        const delay = refused
          ? this.options.retryMaxMs
          : opened
            ? reconnectDelay(this.options)
            : retryDelay(error, this.streamAnsweredFailures, this.options);
        this.reconnectTimer = this.options.scheduler.setTimeout(() => {
          this.reconnectTimer = undefined;
          this.connect();
        }, delay);
      },
    });
  }

  private clearPoll(): void {
    if (this.pollTimer === undefined) return;
    this.options.scheduler.clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
  }
}
