import type Koa from 'koa';
import { FlagopsError } from '../../errors/kinds.js';
import { type EvalAppDeps, viewForKey } from '../eval-app.js';
import { streamRequestKey } from './request-key.js';
import { streamHubFor } from './stream-hubs.js';

/**
 * GET /v1/stream: Server-Sent Events announcing the snapshot version of the key's environment (docs/sdk.md).
 * Clients fetch the snapshot (or re-evaluate) when a new version is announced; the stream itself carries no
 * flag data, so it needs no versioning of its own and a missed event costs one extra snapshot fetch at most.
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
  hub.open(ctx.res, view, () => {
    const now = rawKey === null ? null : deps.keys.authenticate(rawKey);
    return now !== null && now.kind === 'sdk' && now.org === org && now.projectId === projectId && now.environment === environment;
  });
}
