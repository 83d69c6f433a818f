import type { ServerResponse } from 'node:http';
import { type Logger, silentLogger } from '../../log/logger.js';
import type { EnvironmentView } from '../environment-view.js';
import type { SnapshotHolder } from '../snapshot-holder.js';
import { heartbeatComment, streamPreamble, versionEvent } from './sse-format.js';

export interface StreamHubOptions {
  /** How often every stream gets a comment line; 15–25 s keeps proxies with a 30–60 s idle timeout open. */
  heartbeatMs?: number;
  /** A stream with more unsent bytes than this is ended: its client stopped reading, and memory must not grow. */
  maxBufferedBytes?: number;
  logger?: Logger;
}

interface Subscriber {
  res: ServerResponse;
  lastVersion: number;
  /** Re-checked at every heartbeat, so that a revoked key's streams end within one heartbeat. */
  stillAuthorized: () => boolean;
}

const DEFAULT_HEARTBEAT_MS = 20_000;
const DEFAULT_MAX_BUFFERED = 64 * 1024;

function scopeOf(org: string, projectId: string, environment: string): string {
  return `${org}\u0000${projectId}\u0000${environment}`;
}

/**
 * The open GET /v1/stream responses, grouped by (organisation, project, environment). It listens to the
 * snapshot holder, so an announcement goes out in the same turn the holder swaps a view in: a kill reaches
 * every stream as soon as the evaluation server serves it.
 */
export class StreamHub {
  private readonly byScope = new Map<string, Set<Subscriber>>();
  private readonly stopListening: () => void;
  private readonly heartbeatTimer: ReturnType<typeof setInterval>;
  private readonly maxBuffered: number;
  private readonly logger: Logger;
  private isClosed = false;

  constructor(holder: Pick<SnapshotHolder, 'onChange'>, options: StreamHubOptions = {}) {
    this.maxBuffered = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED;
    this.logger = options.logger ?? silentLogger;
    this.stopListening = holder.onChange((views) => this.announce(views));
    this.heartbeatTimer = setInterval(() => this.heartbeat(), options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    this.heartbeatTimer.unref(); // streams must never keep a stopping process alive
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** How many streams are open. */
  get size(): number {
    let n = 0;
    for (const set of this.byScope.values()) n += set.size;
    return n;
  }

  /**
   * Starts streaming on `res` (headers already written) for `view`'s environment: the current version at once,
   * then one event per new version. Synchronous from reading the view to subscribing, so no swap slips between.
   */
  open(res: ServerResponse, view: EnvironmentView, stillAuthorized: () => boolean): void {
    const scope = scopeOf(view.org, view.projectId, view.environment);
    const subscriber: Subscriber = { res, lastVersion: view.version, stillAuthorized };
    let set = this.byScope.get(scope);
    if (set === undefined) {
      set = new Set();
      this.byScope.set(scope, set);
    }
    set.add(subscriber);
    res.on('close', () => this.remove(scope, subscriber));
    this.write(subscriber, streamPreamble() + versionEvent(view.version));
  }

  /** Sends a comment to every stream and ends those whose key is no longer valid. */
  heartbeat(): void {
    for (const set of this.byScope.values()) {
      for (const subscriber of set) {
        if (subscriber.stillAuthorized()) this.write(subscriber, heartbeatComment());
        else subscriber.res.end();
      }
    }
  }

  /** Ends every stream and stops listening; the server can then stop without waiting for them. Idempotent. */
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.stopListening();
    clearInterval(this.heartbeatTimer);
    for (const set of this.byScope.values()) for (const subscriber of set) subscriber.res.end();
    this.byScope.clear();
  }

  private announce(views: EnvironmentView[]): void {
    for (const view of views) {
      const set = this.byScope.get(scopeOf(view.org, view.projectId, view.environment));
      if (set === undefined) continue;
      for (const subscriber of set) {
        if (subscriber.lastVersion === view.version) continue;
        subscriber.lastVersion = view.version;
        this.write(subscriber, versionEvent(view.version));
      }
    }
  }

  private write(subscriber: Subscriber, text: string): void {
    const { res } = subscriber;
    if (res.writableEnded || res.destroyed) return;
    if (res.writableLength > this.maxBuffered) {
      this.logger.warn('ending a stream whose client does not read', { buffered: res.writableLength });
      res.destroy();
      return;
    }
    res.write(text);
  }

  private remove(scope: string, subscriber: Subscriber): void {
    const set = this.byScope.get(scope);
    if (set === undefined) return;
    set.delete(subscriber);
    if (set.size === 0) this.byScope.delete(scope);
  }
}
