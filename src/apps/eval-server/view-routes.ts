import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';
import { negotiateCoding } from '../../foundations/http/content-encoding.js';
import { sendJsonPerRequest, setEncodedJson, VARY_KEY_AND_ENCODING } from '../../foundations/http/encoded-json.js';
import { readJsonBody } from '../../foundations/http/read-json-body.js';
import { evaluateAnswer } from './evaluate.js';
import { eventsRoute } from './events.js';
import { OFREP_FLAG_PREFIX, ofrepBulkRoute, ofrepConfigurationRoute, ofrepFlagRoute } from './ofrep.js';
import { type EvalHandler, type EvalRoutes, matchesEtag } from './routed-app.js';
import { type ServedSnapshot, snapshotBody } from './snapshot-body.js';
import { parseSince } from './snapshot-changes.js';
import type { ViewSource } from './view-source.js';

interface ServingDeps {
  source: ViewSource;
  health: (req: IncomingMessage) => { status: number; body: unknown };
}

/**
 * The evaluation API's route table (docs/evaluation-server.md, and OFREP), the same on the main server and on
 * replicas but for the stream and count reports, which each feeds from its own place.
 */
export function evaluationRoutes<D extends ServingDeps>(own: { stream: EvalHandler<D>; counts: EvalHandler<D> }): EvalRoutes<D> {
  return {
    '/v1/evaluate': { POST: evaluateRoute },
    '/v1/snapshot': { GET: snapshotRoute },
    '/v1/stream': { GET: own.stream },
    '/v1/counts': { POST: own.counts },
    '/v1/events': { POST: eventsRoute },
    '/ofrep/v1/evaluate/flags': { POST: ofrepBulkRoute },
    [OFREP_FLAG_PREFIX]: { POST: ofrepFlagRoute },
    '/ofrep/v1/configuration': { GET: ofrepConfigurationRoute },
    '/healthz': {
      GET: (ctx, deps) => {
        const { status, body } = deps.health(ctx.req);
        ctx.status = status;
        ctx.body = body;
      },
    },
  };
}

/**
 * POST /v1/evaluate and GET /v1/snapshot through Koa, for the requests the fast path (fast-path.ts) leaves to
 * the app, such as those with a query string: the same answers.
 */
export async function evaluateRoute(ctx: Koa.Context, deps: { source: ViewSource }): Promise<void> {
  const view = await deps.source.view(ctx.req);
  ctx.type = 'application/json';
  ctx.body = evaluateAnswer(view, await readJsonBody(ctx.req), deps.source.recorder(view));
}

/**
 * GET /v1/snapshot, and with `?since=<version>` the delta from that version when the server still knows it
 * (docs/evaluation-server.md, "Deltas"): the same ETag, 304 when `since` is the current version, and the full
 * snapshot for a `since` it does not know or cannot read.
 */
export async function snapshotRoute(ctx: Koa.Context, deps: { source: ViewSource }): Promise<void> {
  const view = await deps.source.view(ctx.req);
  const since = parseSince(ctx.query.since);
  // An If-None-Match naming the current version is a 304 whatever `since` says: sendSnapshot answers it.
  if (since !== undefined && !matchesEtag(ctx.get('if-none-match'), view.etag)) {
    if (since === view.version) {
      ctx.set(snapshotHeaders(view.etag));
      ctx.status = 304;
      return;
    }
    const delta = deps.source.changes?.delta(view, since);
    if (delta !== undefined) {
      ctx.set(snapshotHeaders(view.etag));
      // A delta is made for the version asked about: compressed for this request, not kept.
      await sendJsonPerRequest(ctx, delta);
      return;
    }
  }
  await sendSnapshot(ctx, view);
}

/**
 * Sent with every snapshot answer, 304 included. Caches (a CDN in front of replicas) may keep it but must
 * revalidate; the key in Authorization and the coding accepted decide what is served. The ETag is the
 * version's whatever the coding.
 */
export function snapshotHeaders(etag: string): Record<string, string> {
  return { ETag: etag, 'Cache-Control': 'no-cache', Vary: VARY_KEY_AND_ENCODING };
}

/**
 * Answers GET /v1/snapshot from a view: the ETag on every answer, 304 with no body when
 * If-None-Match names it, else the body in the coding the request accepts.
 */
export async function sendSnapshot(ctx: Koa.Context, view: ServedSnapshot): Promise<void> {
  ctx.set(snapshotHeaders(view.etag));
  if (matchesEtag(ctx.get('if-none-match'), view.etag)) {
    ctx.status = 304;
    return;
  }
  const coding = negotiateCoding(ctx.get('accept-encoding'));
  setEncodedJson(ctx, await snapshotBody(view, coding), coding);
}
