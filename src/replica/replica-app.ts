import Koa from 'koa';
import { bearerToken } from '../auth/bearer-token.js';
import { NotFoundError } from '../errors/kinds.js';
import { cors } from '../eval-server/cors.js';
import { parseCountReport } from '../eval-server/counts/counts-request.js';
import type { EnvironmentView } from '../eval-server/environment-view.js';
import { evaluateAnswer, type RecordVariation } from '../eval-server/evaluate-answer.js';
import { evalServerFastPath } from '../eval-server/fast-path.js';
import { sendSnapshot } from '../eval-server/send-snapshot.js';
import { streamRequestKey } from '../eval-server/stream/request-key.js';
import type { StreamHub } from '../eval-server/stream/stream-hub.js';
import { errorMiddleware } from '../http/error-middleware.js';
import { readJsonBody } from '../http/read-json-body.js';
import type { FastPath } from '../http/serve.js';
import type { Logger } from '../log/logger.js';
import type { ReplicaCounts } from './replica-counts.js';
import type { ReplicaHolder } from './replica-holder.js';
import type { ReplicaKeys } from './replica-keys.js';

export interface ReplicaAppDeps {
  holder: ReplicaHolder;
  keys: ReplicaKeys;
  counts: ReplicaCounts;
  hub: StreamHub;
  logger: Logger;
  health: () => { status: number; body: unknown };
}

type Handler = (ctx: Koa.Context, deps: ReplicaAppDeps) => Promise<void> | void;

/**
 * The evaluation API of a replica: /v1/evaluate, /v1/snapshot, /v1/stream, /v1/counts and /healthz, with
 * the main server's request parsing, evaluation core, ETags and stream hub; only where keys and views come
 * from differs (ReplicaKeys, ReplicaHolder).
 */
export function createReplicaApp(deps: ReplicaAppDeps): Koa {
  const routes: Record<string, Partial<Record<'GET' | 'POST', Handler>>> = {
    '/v1/evaluate': { POST: evaluate },
    '/v1/snapshot': { GET: snapshot },
    '/v1/stream': { GET: stream },
    '/v1/counts': { POST: counts },
    '/healthz': {
      GET: (ctx) => {
        const { status, body } = deps.health();
        ctx.status = status;
        ctx.body = body;
      },
    },
  };
  const app = new Koa();
  app.use(errorMiddleware(deps.logger));
  app.use(cors);
  app.use(async (ctx) => {
    const byMethod = routes[ctx.path];
    if (byMethod === undefined) return;
    const handler = byMethod[(ctx.method === 'HEAD' ? 'GET' : ctx.method) as 'GET' | 'POST'];
    if (handler === undefined) {
      ctx.status = 405;
      ctx.set('Allow', Object.keys(byMethod).join(', '));
      ctx.body = { error: { code: 'invalid_input', message: `${ctx.method} is not allowed on ${ctx.path}` } };
      return;
    }
    await handler(ctx, deps);
  });
  return app;
}

async function viewOf(rawKey: string | null, deps: ReplicaAppDeps): Promise<EnvironmentView> {
  const verdict = (rawKey !== null && deps.keys.known(rawKey)) || (await deps.keys.verify(rawKey));
  const view = deps.holder.org === null ? undefined : deps.holder.view(deps.holder.org, verdict.projectId, verdict.environment);
  if (!view) throw new NotFoundError(`project ${verdict.projectId} of this sdk key`);
  return view;
}

function recorder(view: EnvironmentView, counts: ReplicaCounts): RecordVariation {
  return (flagKey, variation) => counts.record(view.projectId, view.environment, flagKey, variation);
}

/** POST /v1/evaluate for requests the fast path leaves to Koa; the same answer. */
async function evaluate(ctx: Koa.Context, deps: ReplicaAppDeps): Promise<void> {
  const view = await viewOf(bearerToken(ctx.get('authorization')), deps);
  ctx.type = 'application/json';
  ctx.body = evaluateAnswer(view, await readJsonBody(ctx.req), recorder(view, deps.counts));
}

/** A replica's POST /v1/evaluate and GET /v1/snapshot without Koa, as on the main server. */
export function replicaFastPath(deps: ReplicaAppDeps): FastPath {
  return evalServerFastPath({
    view: (authorization) => viewOf(bearerToken(authorization), deps),
    recorder: (view) => recorder(view, deps.counts),
    logger: deps.logger,
  });
}

async function snapshot(ctx: Koa.Context, deps: ReplicaAppDeps): Promise<void> {
  sendSnapshot(ctx, await viewOf(bearerToken(ctx.get('authorization')), deps));
}

async function stream(ctx: Koa.Context, deps: ReplicaAppDeps): Promise<void> {
  const rawKey = streamRequestKey(ctx);
  const view = await viewOf(rawKey, deps);
  if (ctx.method === 'HEAD') {
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    return;
  }
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.respond = false;
  ctx.res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', Connection: 'close', 'X-Accel-Buffering': 'no' });
  deps.hub.open(ctx.res, view, () => rawKey !== null && deps.keys.known(rawKey) !== undefined);
}

async function counts(ctx: Koa.Context, deps: ReplicaAppDeps): Promise<void> {
  const view = await viewOf(bearerToken(ctx.get('authorization')), deps);
  const entries = parseCountReport(await readJsonBody(ctx.req), { hasFlag: (key) => view.compiled.has(key), now: Date.now() });
  for (const e of entries) deps.counts.add(view.projectId, view.environment, e.flagKey, e.variation, e.hourStartMs, e.count);
  ctx.status = 202;
  ctx.body = { accepted: entries.length };
}
