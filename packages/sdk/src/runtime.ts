/**
 * What both client modes share: status and ready(), events, timers that close() cancels, the update loop, and
 * close() itself.
 */
import { EventSender } from './events.js';
import { describeError, Http, isRefusal } from './http.js';
import type { ResolvedOptions } from './options.js';
import type { ClientEvents, ClientStatus, EvaluationContext, Scheduler, SdkLogger } from './types.js';
import { StreamConnection, UpdateLoop, type UpdateSource } from './updates.js';

/**
 * What both modes share: status, events, ready(), the update loop and close(). close() is the one way out:
 * it stops the loop and the stream, aborts every request, cancels every timer and resolves once done.
 */
export abstract class ClientRuntime {
  // The members marked @internal are left out of the published declarations (stripInternal): applications
  // create clients with createClient() and use the public members only.
  /** @internal */ protected readonly options: ResolvedOptions;
  /** @internal */ protected readonly scheduler: TrackedScheduler;
  /** @internal */ protected readonly logger: SdkLogger;
  /** @internal */ protected readonly http: Http;
  /** @internal */ protected readonly emitter: Emitter<ClientEvents>;
  /** @internal */ protected readonly state: ClientState;
  /** @internal With sendExposures: where the evaluations given to the application go. */
  protected readonly exposures: EventSender | null;
  private sender: EventSender | null = null;
  private loop: UpdateLoop | null = null;
  private closing: Promise<void> | null = null;

  /** @internal */
  protected constructor(options: ResolvedOptions) {
    this.options = options;
    this.scheduler = new TrackedScheduler(options.scheduler);
    this.logger = options.logger;
    this.http = new Http({
      evalUrl: options.evalUrl,
      sdkKey: options.sdkKey,
      fetch: options.fetch,
      timeoutMs: options.requestTimeoutMs,
      scheduler: this.scheduler,
    });
    this.emitter = new Emitter<ClientEvents>(options.logger);
    this.state = new ClientState(this.emitter, this.scheduler, () => this.hasData(), this.logger);
    this.exposures = options.sendExposures ? this.events() : null;
  }

  /**
   * Records a track event (a conversion, a purchase with its amount as `value`) for `context`'s user, sent in
   * a batch to POST /v1/events. Never throws: a name or value the server would refuse is dropped with a warning.
   */
  track(name: string, context?: EvaluationContext, value?: number): void {
    if (this.closing) return;
    const userId = context?.userId;
    this.events().track(name, typeof userId === 'string' ? userId : undefined, value);
  }

  // The event sender, started on first use: a client that sends no events runs no timer for them.
  private events(): EventSender {
    if (this.sender === null) {
      this.sender = new EventSender(this.http, this.scheduler, this.options.eventsIntervalMs, this.options.eventsMaxBatch, this.logger);
      this.sender.start();
    }
    return this.sender;
  }

  get status(): ClientStatus {
    return this.state.status;
  }

  /** Resolves with the status once there is something to serve, the key is refused, or `timeoutMs` pass. Never rejects. */
  ready(timeoutMs: number = this.options.readyTimeoutMs): Promise<ClientStatus> {
    return this.state.ready(timeoutMs);
  }

  on<E extends keyof ClientEvents>(event: E, listener: (payload: ClientEvents[E]) => void): () => void {
    return this.emitter.on(event, listener);
  }

  off<E extends keyof ClientEvents>(event: E, listener: (payload: ClientEvents[E]) => void): void {
    this.emitter.off(event, listener);
  }

  /** Stops everything the client runs; the getters keep answering from what was last loaded. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.loop?.stop();
      this.http.abortAll();
      await this.beforeClose();
      await this.sender?.close();
      this.http.close();
      this.state.close();
      this.scheduler.clear();
      this.emitter.clear();
    })();
    return this.closing;
  }

  /** @internal */
  protected abstract hasData(): boolean;

  /**
   * Runs after the loop stopped and before the last sockets close (local mode sends its last counts here).
   * @internal
   */
  protected async beforeClose(): Promise<void> {}

  /** @internal */
  protected startLoop(source: UpdateSource): void {
    const { options } = this;
    this.loop = new UpdateLoop({
      source,
      scheduler: this.scheduler,
      logger: this.logger,
      random: options.random,
      pollIntervalMs: options.pollIntervalMs,
      retryInitialMs: options.retryInitialMs,
      retryMaxMs: options.retryMaxMs,
      openStream: options.stream
        ? (handlers) =>
            new StreamConnection(
              {
                http: this.http,
                scheduler: this.scheduler,
                logger: this.logger,
                idleTimeoutMs: options.streamIdleTimeoutMs,
                since: source.version && (() => source.version!()),
              },
              handlers,
            )
        : null,
      succeeded: () => this.state.succeeded(),
      failed: (error) => this.state.failed(error),
    });
    this.loop.start();
  }
}

/**
 * The client's status (docs/sdk.md, "Status") and the callers waiting in ready(). ready() resolves once there
 * is something to serve, or once the server has refused the key (that does not fix itself), or after its
 * timeout, or on close: it never rejects and never hangs.
 */
export class ClientState {
  private current: ClientStatus = 'not_ready';
  private refused = false;
  private closed = false;
  private readonly waiters = new Set<(status: ClientStatus) => void>();

  constructor(
    private readonly emitter: Emitter<ClientEvents>,
    private readonly scheduler: Scheduler,
    // Whether there is anything to serve (a snapshot, or a known version in remote mode).
    private readonly hasData: () => boolean,
    private readonly logger: SdkLogger,
  ) {}

  get status(): ClientStatus {
    return this.current;
  }

  // Why the last fetch failed (null once one succeeded): what an evaluation before the first snapshot says.
  failure: string | null = null;

  succeeded(): void {
    this.refused = false;
    this.failure = null;
    this.set('ready');
  }

  failed(error: unknown): void {
    const refusedBefore = this.refused;
    this.refused = isRefusal(error);
    this.failure = describeError(error);
    // A refused key does not fix itself: said at once, not left to a status listener the application may not have.
    if (this.refused && !refusedBefore) this.logger.warn('the server refused the SDK key', { error: this.failure });
    this.set(this.refused || !this.hasData() ? 'error' : 'stale', this.failure);
  }

  ready(timeoutMs: number): Promise<ClientStatus> {
    if (this.settled()) return Promise.resolve(this.current);
    return new Promise((resolve) => {
      let timer: unknown;
      const done = (status: ClientStatus) => {
        this.scheduler.clearTimeout(timer);
        this.waiters.delete(done);
        resolve(status);
      };
      this.waiters.add(done);
      timer = this.scheduler.setTimeout(() => done(this.current), timeoutMs);
    });
  }

  /** Releases every ready() caller with the status as it is; no status event is sent after this. */
  close(): void {
    this.closed = true;
    this.release();
  }

  private settled(): boolean {
    return this.closed || this.current === 'ready' || this.current === 'stale' || this.refused;
  }

  private set(next: ClientStatus, error?: string): void {
    if (this.closed) return;
    if (next !== this.current) {
      const previous = this.current;
      this.current = next;
      this.emitter.emit('status', error === undefined ? { status: next, previous } : { status: next, previous, error });
    }
    if (this.settled()) this.release();
  }

  private release(): void {
    for (const waiter of [...this.waiters]) waiter(this.current);
  }
}

type Listener<T> = (event: T) => void;

/**
 * A small typed event emitter, so the SDK needs no EventTarget or Node events. A listener that throws is logged
 * and the others still run: an application's handler must not break flag delivery.
 */
export class Emitter<Events extends object> {
  private readonly listeners = new Map<keyof Events, Set<Listener<never>>>();

  constructor(private readonly logger: SdkLogger) {}

  on<E extends keyof Events>(event: E, listener: Listener<Events[E]>): () => void {
    let set = this.listeners.get(event);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener as Listener<never>);
    return () => this.off(event, listener);
  }

  off<E extends keyof Events>(event: E, listener: Listener<Events[E]>): void {
    this.listeners.get(event)?.delete(listener as Listener<never>);
  }

  emit<E extends keyof Events>(event: E, payload: Events[E]): void {
    const set = this.listeners.get(event);
    if (set === undefined) return;
    for (const listener of [...set]) {
      try {
        (listener as Listener<Events[E]>)(payload);
      } catch (err) {
        this.logger.error(`a ${String(event)} listener threw`, { error: err instanceof Error ? err.message : String(err) });
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}

/**
 * A scheduler that forgets its pending timers on `clear()`: the client's close() cancels everything it ever
 * scheduled, whoever scheduled it, without each part having to remember its own handles.
 */
export class TrackedScheduler implements Scheduler {
  private readonly pending = new Set<unknown>();
  private cleared = false;

  constructor(private readonly inner: Scheduler) {}

  now(): number {
    return this.inner.now();
  }

  setTimeout(fn: () => void, ms: number): unknown {
    if (this.cleared) return undefined;
    const handle = this.inner.setTimeout(() => {
      this.pending.delete(handle);
      fn();
    }, ms);
    this.pending.add(handle);
    return handle;
  }

  clearTimeout(handle: unknown): void {
    if (handle === undefined || !this.pending.delete(handle)) return;
    this.inner.clearTimeout(handle);
  }

  /** Cancels every pending timer and refuses new ones. */
  clear(): void {
    this.cleared = true;
    for (const handle of this.pending) this.inner.clearTimeout(handle);
    this.pending.clear();
  }
}
