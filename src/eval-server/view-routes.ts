import type Koa from 'koa';
import { readJsonBody } from '../http/read-json-body.js';
import { evaluateAnswer } from './evaluate-answer.js';
import { OFREP_FLAG_PREFIX } from './ofrep/ofrep-paths.js';
import { ofrepBulkRoute, ofrepConfigurationRoute, ofrepFlagRoute } from './ofrep/ofrep-routes.js';
import type { EvalHandler, EvalRoutes } from './routed-app.js';
import { sendSnapshot } from './send-snapshot.js';
import type { ViewSource } from './view-source.js';

interface ServingDeps {
  source: ViewSource;
  health: () => { status: number; body: unknown };
}

/**
 * The evaluation API's route table (service-spec §4, contract §4, OFREP), the same on the main server and on
 * replicas but for the stream and count reports, which each feeds from its own place.
 */
export function evaluationRoutes<D extends ServingDeps>(own: { stream: EvalHandler<D>; counts: EvalHandler<D> }): EvalRoutes<D> {
  return {
    '/v1/evaluate': { POST: evaluateRoute },
    '/v1/snapshot': { GET: snapshotRoute },
    '/v1/stream': { GET: own.stream },
    '/v1/counts': { POST: own.counts },
    '/ofrep/v1/evaluate/flags': { POST: ofrepBulkRoute },
    [OFREP_FLAG_PREFIX]: { POST: ofrepFlagRoute },
    '/ofrep/v1/configuration': { GET: ofrepConfigurationRoute },
    '/healthz': {
      GET: (ctx, deps) => {
        const { status, body } = deps.health();
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

export async function snapshotRoute(ctx: Koa.Context, deps: { source: ViewSource }): Promise<void> {
  sendSnapshot(ctx, await deps.source.view(ctx.req));
}
