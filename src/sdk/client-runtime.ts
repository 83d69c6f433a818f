import { ClientState } from './client-state.js';
import { Emitter } from './emitter.js';
import { Http } from './http.js';
import { TrackedScheduler } from './scheduler.js';
import { StreamConnection } from './stream-connection.js';
import type { ClientEvents, ClientStatus, SdkLogger } from './types.js';
import { UpdateLoop, type UpdateSource } from './update-loop.js';
import type { ResolvedOptions } from './options.js';

/**
 * What both modes share: status, events, ready(), the update loop and close(). close() is the one way out:
 * it stops the loop and the stream, aborts every request, cancels every timer and resolves once done.
 */
export abstract class ClientRuntime {
  protected readonly scheduler: TrackedScheduler;
  protected readonly logger: SdkLogger;
  protected readonly http: Http;
  protected readonly emitter: Emitter<ClientEvents>;
  protected readonly state: ClientState;
  private loop: UpdateLoop | null = null;
  private closing: Promise<void> | null = null;

  protected constructor(protected readonly options: ResolvedOptions) {
    this.scheduler = new TrackedScheduler(options.scheduler);
    this.logger = options.logger;
    this.http = new Http({ evalUrl: options.evalUrl, sdkKey: options.sdkKey, fetch: options.fetch, timeoutMs: options.requestTimeoutMs, scheduler: this.scheduler });
    this.emitter = new Emitter<ClientEvents>(options.logger);
    this.state = new ClientState(this.emitter, this.scheduler, () => this.hasData());
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
      this.http.close();
      this.state.close();
      this.scheduler.clear();
      this.emitter.clear();
    })();
    return this.closing;
  }

  protected abstract hasData(): boolean;

  /** Runs after the loop stopped and before the last sockets close (local mode sends its last counts here). */
  protected async beforeClose(): Promise<void> {}

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
        ? (handlers) => new StreamConnection({ http: this.http, scheduler: this.scheduler, logger: this.logger, idleTimeoutMs: options.streamIdleTimeoutMs }, handlers)
        : null,
      succeeded: () => this.state.succeeded(),
      failed: (error) => this.state.failed(error),
    });
    this.loop.start();
  }
}
