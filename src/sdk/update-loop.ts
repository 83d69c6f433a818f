import { backoffDelay } from './backoff.js';
import { describeError } from './http.js';
import type { StreamConnection, StreamHandlers } from './stream-connection.js';
import type { Scheduler, SdkLogger } from './types.js';

/** What the loop keeps current: the snapshot (local mode) or the version (remote mode). */
export interface UpdateSource {
  /** One conditional request; applies what it learns. Throws when the server cannot be used. */
  refresh(): Promise<void>;
  /** The stream announced `version`: whether a refresh is needed to catch up with it. */
  announce(version: number): boolean;
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
 * one it polls every pollIntervalMs. After a failure it retries with exponential backoff and jitter, whatever
 * the mode, and a dropped stream is reconnected with its own backoff while polling covers the gap.
 */
export class UpdateLoop {
  private failures = 0;
  private streamFailures = 0;
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
        this.failures++;
        this.options.failed(err);
        return; // the backoff timer retries; looping here would hammer a server that is down
      }
      if (this.stopped) return;
      this.failures = 0;
      this.options.succeeded();
    } while (this.again);
  }

  private schedulePoll(): void {
    this.clearPoll();
    if (this.stopped) return;
    let delay: number;
    if (this.failures > 0) delay = this.retryDelay(this.failures);
    else if (this.streamUp) return; // the stream announces every change
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
        this.streamFailures = 0;
        this.streamUp = true;
        // Healthy again: the stream replaces polling, and a pending retry is better done now.
        if (this.failures > 0) void this.refresh();
        else if (this.inFlight === null) this.clearPoll();
      },
      onVersion: (version) => {
        if (this.options.source.announce(version)) void this.refresh();
      },
      onClose: (error, refused) => {
        this.streamUp = false;
        this.stream = null;
        if (this.stopped) return;
        this.streamFailures++;
        if (this.streamFailures === 1) this.options.logger.warn('the flag stream dropped; polling until it is back', { error: describeError(error) });
        // Find out at once whether the server is still there, and poll from here on until the stream is back.
        void this.refresh();
        const delay = refused ? this.options.retryMaxMs : this.retryDelay(this.streamFailures);
        this.reconnectTimer = this.options.scheduler.setTimeout(() => {
          this.reconnectTimer = undefined;
          this.connect();
        }, delay);
      },
    });
  }

  private retryDelay(attempt: number): number {
    return backoffDelay(attempt, this.options.retryInitialMs, this.options.retryMaxMs, this.options.random);
  }

  private clearPoll(): void {
    if (this.pollTimer === undefined) return;
    this.options.scheduler.clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
  }
}
