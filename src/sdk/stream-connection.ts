import { describeError, type Http, HttpError, httpError, isRefusal } from './http.js';
import { SseParser } from './sse-parser.js';
import type { Scheduler, SdkLogger } from './types.js';

export interface StreamHandlers {
  onOpen(): void;
  onVersion(version: number): void;
  /** The stream is over (it will not call anything again); `refused` when the key was refused (401/403). */
  onClose(error: Error, refused: boolean): void;
}

export interface StreamOptions {
  http: Http;
  scheduler: Scheduler;
  logger: SdkLogger;
  /** Nothing received for this long (the server sends a heartbeat every 15–25 s) means the connection is dead. */
  idleTimeoutMs: number;
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
    try {
      const res = await this.options.http.open('/v1/stream', { accept: 'text/event-stream' }, this.controller);
      const type = res.headers.get('content-type') ?? '';
      if (res.status !== 200 || !type.startsWith('text/event-stream') || res.body === null) {
        const err = res.status === 200 ? new HttpError(200, `GET /v1/stream answered ${type || 'no content type'}`) : await httpError(res, 'GET /v1/stream');
        refused = isRefusal(err);
        throw err;
      }
      if (this.ended) return;
      this.handlers.onOpen();
      this.touch();
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      const parser = new SseParser((event) => {
        if (event.event === 'version') this.version(event.data);
      });
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.touch();
        parser.push(decoder.decode(value, { stream: true }));
      }
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
    this.handlers.onClose(failure, refused);
  }

  private version(data: string): void {
    try {
      const version = (JSON.parse(data) as { version?: unknown }).version;
      if (typeof version === 'number' && Number.isFinite(version)) this.handlers.onVersion(version);
    } catch {
      this.options.logger.warn('ignoring a version event that is not JSON', { data });
    }
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
