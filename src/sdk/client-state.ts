import type { Emitter } from './emitter.js';
import { describeError, isRefusal } from './http.js';
import type { ClientEvents, ClientStatus, Scheduler } from './types.js';

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
    /** Whether there is anything to serve (a snapshot, or a known version in remote mode). */
    private readonly hasData: () => boolean,
  ) {}

  get status(): ClientStatus {
    return this.current;
  }

  succeeded(): void {
    this.refused = false;
    this.set('ready');
  }

  failed(error: unknown): void {
    this.refused = isRefusal(error);
    this.set(this.refused || !this.hasData() ? 'error' : 'stale', describeError(error));
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
