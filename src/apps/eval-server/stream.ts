import type { ServerResponse } from 'node:http';
import type Koa from 'koa';
import { bearerToken } from '../../foundations/auth/key-format.js';
import { FlagopsError } from '../../foundations/errors/kinds.js';
import { type Logger, silentLogger } from '../../foundations/log/logger.js';
import type { EnvironmentView } from './environment-view.js';
import { type EvalAppDeps, viewForKey } from './main-view-source.js';
import {
  type AnnouncedChange,
  changesFor,
  PATCH_MAX_BYTES,
  parseSince,
  type SnapshotChanges,
  type ViewHolder,
} from './snapshot-changes.js';
import type { SnapshotHolder } from './snapshot-holder.js';

/**
 * The wire format of GET /v1/stream (Server-Sent Events, WHATWG HTML §9.2). Every message is complete in one
 * write, so a reader never sees half an event between two chunks of ours.
 */

/** Asks EventSource clients to reconnect after this long when the connection drops (browsers default to ~3 s). */
export const RECONNECT_HINT_MS = 1_000;

export function streamPreamble(): string {
  return `retry: ${RECONNECT_HINT_MS}\n\n`;
}

/**
 * A `version` event: the new version, the version it follows (`since`) and, when small, the patch from `since`
 * (`{"flags":…,"segments":…}`, as in a delta). `id` lets an EventSource resend it as Last-Event-ID on
 * reconnecting, which names the version it holds (streamClientVersion).
 */
export function versionEvent(version: number, since?: number | null, patch?: string | null): string {
  const after = since == null ? '' : `,"since":${since}${patch == null ? '' : `,"patch":${patch}`}`;
  return `id: ${version}\nevent: version\ndata: {"version":${version}${after}}\n\n`;
}

/** A comment line: ignored by every SSE parser, but it keeps proxies from timing out an idle connection. */
export function heartbeatComment(): string {
  return ': heartbeat\n\n';
}

/**
 * The SDK key of a stream request: the Authorization header, or `?sdkKey=` because a browser's EventSource
 * cannot set headers. SDK keys are publishable (they ship in browser code), so a key in a URL (and so in access logs)
 * discloses nothing a page does not already ship.
 */
export function streamRequestKey(ctx: Koa.Context): string | null {
  const fromHeader = bearerToken(ctx.get('authorization'));
  if (fromHeader !== null) return fromHeader;
  const query = ctx.query.sdkKey;
  return typeof query === 'string' && query !== '' ? query : null;
}

/**
 * The version a connecting client holds: `?since=`, or the Last-Event-ID an EventSource sends when it
 * reconnects (the id of the last event it read is that event's version). Undefined when it names none.
 */
export function streamClientVersion(ctx: Koa.Context): number | undefined {
  return parseSince(ctx.query.since) ?? parseSince(ctx.get('last-event-id') || undefined);
}

export interface StreamHubOptions {
  /** How often every stream gets a comment line; 15–25 s keeps proxies with a 30–60 s idle timeout open. */
  heartbeatMs?: number;
  /** A stream with more unsent bytes than this is ended: its client stopped reading, and memory must not grow. */
  maxBufferedBytes?: number;
  logger?: Logger;
}

/**
 * Until when a stream's key holds (epoch ms): Infinity for a key that does not end, a past moment (or -Infinity)
 * for one no longer valid. Asked on opening, before every event, at every heartbeat and when the keys change
 * (recheck), so a revoked key's stream ends at once, and one that expires or whose rotation grace ends at that moment.
 */
export type AuthorizedUntil = () => number;

interface Subscriber {
  res: ServerResponse;
  lastVersion: number;
  authorizedUntil: AuthorizedUntil;
  /** Ends the stream when its key does, if it does; set again when the keys change (a rotation moves the end). */
  endTimer?: ReturnType<typeof setTimeout>;
}

const DEFAULT_HEARTBEAT_MS = 20_000;
const DEFAULT_MAX_BUFFERED = 64 * 1024;
/** setTimeout's longest delay (about 24.8 days); a key ending later is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

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
  private readonly changes: SnapshotChanges;
  private readonly stopListening: () => void;
  private readonly heartbeatTimer: ReturnType<typeof setInterval>;
  private readonly maxBuffered: number;
  private readonly logger: Logger;
  private isClosed = false;

  constructor(holder: ViewHolder, options: StreamHubOptions = {}) {
    this.maxBuffered = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED;
    this.logger = options.logger ?? silentLogger;
    // The holder's changes, heard after they are recorded: each event's patch is built there once per change.
    this.changes = changesFor(holder);
    this.stopListening = this.changes.onChange((changes) => this.announce(changes));
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
   * The first event carries `since` only when the client named the version it holds (`clientVersion`) and that
   * is not the current one, and `patch` too when the patch from it is known and small enough.
   */
  open(res: ServerResponse, view: EnvironmentView, authorizedUntil: AuthorizedUntil, clientVersion?: number): void {
    const scope = scopeOf(view.org, view.projectId, view.environment);
    const subscriber: Subscriber = { res, lastVersion: view.version, authorizedUntil };
    let set = this.byScope.get(scope);
    if (set === undefined) {
      set = new Set();
      this.byScope.set(scope, set);
    }
    set.add(subscriber);
    res.on('close', () => this.remove(scope, subscriber));
    this.write(subscriber, streamPreamble() + this.firstEvent(view, clientVersion));
    this.endWithKey(subscriber);
  }

  /** Sends a comment to every stream and ends those whose key is no longer valid. */
  heartbeat(): void {
    for (const set of this.byScope.values()) {
      for (const subscriber of set) {
        if (stillAuthorized(subscriber)) this.write(subscriber, heartbeatComment());
        else subscriber.res.end();
      }
    }
  }

  /**
   * Ends the streams whose key is no longer valid, and times the others' ends again: the keys changed (one revoked
   * or rotated, here or elsewhere).
   */
  recheck(): void {
    for (const set of this.byScope.values()) for (const subscriber of set) this.endWithKey(subscriber);
  }

  /** Ends every stream and stops listening; the server can then stop without waiting for them. Idempotent. */
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.stopListening();
    clearInterval(this.heartbeatTimer);
    for (const set of this.byScope.values()) {
      for (const subscriber of set) {
        clearTimeout(subscriber.endTimer);
        subscriber.res.end();
      }
    }
    this.byScope.clear();
  }

  private firstEvent(view: EnvironmentView, clientVersion: number | undefined): string {
    if (clientVersion === undefined || clientVersion === view.version) return versionEvent(view.version);
    // The event follows the client's version either way; without a patch (too old, too big) it fetches.
    const patch = this.changes.patch(view, clientVersion);
    if (patch === undefined || Buffer.byteLength(patch) > PATCH_MAX_BYTES) return versionEvent(view.version, clientVersion);
    return versionEvent(view.version, clientVersion, patch);
  }

  private announce(changes: AnnouncedChange[]): void {
    for (const { view, since, patch } of changes) {
      const set = this.byScope.get(scopeOf(view.org, view.projectId, view.environment));
      if (set === undefined) continue;
      let event: string | undefined; // one text for every subscriber
      for (const subscriber of set) {
        if (subscriber.lastVersion === view.version) continue;
        // A key past its expiry or grace since the last heartbeat learns nothing more (one Map lookup a stream).
        if (!stillAuthorized(subscriber)) {
          subscriber.res.end();
          continue;
        }
        subscriber.lastVersion = view.version;
        event ??= versionEvent(view.version, since, patch);
        this.write(subscriber, event);
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

  /**
   * Ends the stream now if its key no longer holds, or else at the moment the key ends: an expiring key's stream
   * must not outlive it until the next heartbeat or event.
   */
  private endWithKey(subscriber: Subscriber): void {
    clearTimeout(subscriber.endTimer);
    subscriber.endTimer = undefined;
    if (subscriber.res.writableEnded || subscriber.res.destroyed) return;
    const left = subscriber.authorizedUntil() - Date.now();
    if (left <= 0) {
      subscriber.res.end();
      return;
    }
    if (left === Number.POSITIVE_INFINITY) return;
    subscriber.endTimer = setTimeout(() => this.endWithKey(subscriber), Math.min(left, MAX_TIMER_MS));
    subscriber.endTimer.unref(); // streams must never keep a stopping process alive
  }

  private remove(scope: string, subscriber: Subscriber): void {
    clearTimeout(subscriber.endTimer);
    const set = this.byScope.get(scope);
    if (set === undefined) return;
    set.delete(subscriber);
    if (set.size === 0) this.byScope.delete(scope);
  }
}

function stillAuthorized(subscriber: Subscriber): boolean {
  return subscriber.authorizedUntil() > Date.now();
}

/**
 * One hub per snapshot holder. The route table's handlers only get the app's deps, so the stream route finds
 * its hub through the holder; the composition root attaches it (to close it first on stop), and an app built
 * without one still streams, through a hub made on first use.
 */
const hubs = new WeakMap<SnapshotHolder, StreamHub>();

export function attachStreamHub(holder: SnapshotHolder, options: StreamHubOptions = {}): StreamHub {
  hubs.get(holder)?.close();
  const hub = new StreamHub(holder, options);
  hubs.set(holder, hub);
  return hub;
}

export function streamHubFor(holder: SnapshotHolder): StreamHub {
  return hubs.get(holder) ?? attachStreamHub(holder);
}

/**
 * GET /v1/stream: Server-Sent Events announcing the snapshot version of the key's environment (docs/sdk.md),
 * each with the version it follows and, when small, the patch from it. A client holding that version applies
 * the patch; any other fetches (a delta or the snapshot), so a missed event costs one fetch at most.
 */
export function streamRoute(ctx: Koa.Context, deps: EvalAppDeps): void {
  const rawKey = streamRequestKey(ctx);
  const view = viewForKey(rawKey, ctx.req, deps);
  const hub = streamHubFor(deps.holder);
  if (hub.closed) throw new FlagopsError('unavailable', 'the evaluation server is stopping; reconnect shortly');
  if (ctx.method === 'HEAD') {
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    return;
  }
  const socket = ctx.req.socket;
  socket.setTimeout(0);
  socket.setNoDelay(true);
  ctx.respond = false; // Koa must not end the response: it lives until the client or the server goes
  // A stream ends when its client goes away, often with a reset socket: that is not an error worth a log line.
  ctx.onerror = (err) => {
    if (err) deps.logger.debug('event stream closed by the client', { err: (err as Error).message });
  };
  ctx.res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    // The socket of an ended stream is not worth keeping: closing it lets a stopping server finish at once.
    Connection: 'close',
    'X-Accel-Buffering': 'no', // nginx: pass events through unbuffered
  });
  const { org, projectId, environment } = view;
  hub.open(
    ctx.res,
    view,
    () => {
      if (rawKey === null) return Number.NEGATIVE_INFINITY;
      const now = deps.keys.authenticate(rawKey);
      const valid = now !== null && now.kind === 'sdk' && now.org === org && now.projectId === projectId && now.environment === environment;
      return valid ? deps.keys.endsAt(rawKey) : Number.NEGATIVE_INFINITY;
    },
    streamClientVersion(ctx),
  );
}
