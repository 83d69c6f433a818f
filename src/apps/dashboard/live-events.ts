import type { ServerResponse } from 'node:http';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { FlagopsError, UnauthorizedError } from '../../foundations/errors/kinds.js';
import type { Logger } from '../../foundations/log/logger.js';
import type { FlagRepository, MainMoved } from '../../foundations/storage/index.js';
import { lookUpSession, type SessionDeps, sessionOfToken } from './sessions/session-routes.js';

/** Where a signed-in page listens for changes (docs/dashboard.md, "Live updates"). */
export const EVENTS_PATH = '/dashboard/api/events';

export interface LiveEventsOptions extends SessionDeps {
  /** The organisation's repository, whose moves of main are announced. */
  repository(org: string): Promise<Pick<FlagRepository, 'onMainMoved' | 'head'>>;
  logger: Logger;
  /** Open streams at most in the whole service; one more is refused with 503 and Retry-After. */
  maxStreams?: number;
  /** Open streams at most per session (tabs of one browser). */
  maxPerSession?: number;
  /** How often every stream gets a comment line and its session is checked again. */
  heartbeatMs?: number;
  /** A stream with more unsent bytes than this is ended: its page stopped reading. */
  maxBufferedBytes?: number;
}

interface Listener {
  res: ServerResponse;
  org: string;
  sessionId: string;
  /** Re-checked at every heartbeat: a signed-out or expired session's streams end within one. */
  stillSignedIn: () => Promise<boolean>;
}

const DEFAULTS = { maxStreams: 500, maxPerSession: 16, heartbeatMs: 20_000, maxBufferedBytes: 64 * 1024 };

/** `moved`: main of the organisation moved to `commit` (an edit, a kill, a push, a scheduled step). */
export function movedEvent(commit: string): string {
  return `event: moved\ndata: ${JSON.stringify({ commit })}\n\n`;
}

/**
 * Server-Sent Events for signed-in dashboard pages: one `moved` event each time the organisation's main
 * moves, whoever moved it (kills, API writes, git pushes, the scheduler). The page re-reads what it shows,
 * so the event carries no data of its own and a missed one costs a refresh at most. Bounded: a number of
 * streams in all and per session; ended at stop before the servers close.
 */
export class LiveEvents {
  private readonly listeners = new Set<Listener>();
  private readonly watched = new Map<string, Promise<() => void>>();
  private readonly heartbeat: ReturnType<typeof setInterval>;
  private readonly limits: typeof DEFAULTS;
  private closed = false;

  constructor(private readonly options: LiveEventsOptions) {
    this.limits = {
      maxStreams: options.maxStreams ?? DEFAULTS.maxStreams,
      maxPerSession: options.maxPerSession ?? DEFAULTS.maxPerSession,
      heartbeatMs: options.heartbeatMs ?? DEFAULTS.heartbeatMs,
      maxBufferedBytes: options.maxBufferedBytes ?? DEFAULTS.maxBufferedBytes,
    };
    this.heartbeat = setInterval(() => this.beat(), this.limits.heartbeatMs);
    this.heartbeat.unref();
  }

  get size(): number {
    return this.listeners.size;
  }

  register(router: Router): void {
    router.get(EVENTS_PATH, (ctx) => this.open(ctx));
  }

  /** Ends every stream and stops following the repositories. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    for (const listener of this.listeners) listener.res.end();
    this.listeners.clear();
    for (const stop of this.watched.values())
      void stop.then(
        (off) => off(),
        () => undefined,
      );
    this.watched.clear();
  }

  private async open(ctx: Context): Promise<void> {
    const found = await lookUpSession(ctx, this.options);
    if (found.kind !== 'live') throw new UnauthorizedError('sign in to follow changes');
    if (this.closed) throw new FlagopsError('unavailable', 'the service is stopping; reconnect shortly');
    const sessionId = found.session.id;
    const perSession = [...this.listeners].filter((l) => l.sessionId === sessionId).length;
    if (this.listeners.size >= this.limits.maxStreams || perSession >= this.limits.maxPerSession) {
      throw new FlagopsError('unavailable', 'too many open dashboard pages; close some tabs or retry shortly', { retryAfterSeconds: 5 });
    }
    const org = found.session.org;
    await this.watch(org);
    const head = await (await this.options.repository(org)).head();
    if (this.closed) throw new FlagopsError('unavailable', 'the service is stopping; reconnect shortly');
    const socket = ctx.req.socket;
    socket.setTimeout(0);
    socket.setNoDelay(true);
    ctx.respond = false; // the response lives until the page or the service goes
    ctx.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'close',
      'X-Accel-Buffering': 'no',
    });
    const token = found.token;
    const listener: Listener = {
      res: ctx.res,
      org,
      sessionId,
      stillSignedIn: async () => {
        const now = await sessionOfToken(token, this.options);
        return now.kind === 'live' && now.session.id === sessionId;
      },
    };
    this.listeners.add(listener);
    ctx.res.on('close', () => this.listeners.delete(listener));
    // Sent as soon as the stream opens, so the page knows it is connected and from which commit.
    this.write(listener, `retry: 1000\n\n${head === null ? '' : movedEvent(head)}`);
  }

  private watch(org: string): Promise<() => void> {
    let watching = this.watched.get(org);
    if (!watching) {
      watching = this.options.repository(org).then((repo) => repo.onMainMoved((event: MainMoved) => this.announce(org, event.to)));
      watching.catch(() => this.watched.delete(org));
      this.watched.set(org, watching);
    }
    return watching;
  }

  private announce(org: string, commit: string): void {
    const text = movedEvent(commit);
    for (const listener of this.listeners) if (listener.org === org) this.write(listener, text);
  }

  private beat(): void {
    for (const listener of this.listeners) {
      listener.stillSignedIn().then(
        (signedIn) => (signedIn ? this.write(listener, ': heartbeat\n\n') : listener.res.end()),
        (err) => this.options.logger.warn('could not check the session of a live dashboard stream', { err }),
      );
    }
  }

  private write(listener: Listener, text: string): void {
    const { res } = listener;
    if (res.writableEnded || res.destroyed) return;
    if (res.writableLength > this.limits.maxBufferedBytes) {
      this.options.logger.warn('ending a dashboard event stream whose page does not read', { buffered: res.writableLength });
      res.destroy();
      return;
    }
    res.write(text);
  }
}
