import Koa from 'koa';
import { bearerToken } from '../auth/bearer-token.js';
import type { KeyService } from '../auth/key-service.js';
import { NotFoundError } from '../errors/kinds.js';
import { errorMiddleware } from '../http/error-middleware.js';
import { readJsonBody } from '../http/read-json-body.js';
import type { FastPath } from '../http/serve.js';
import type { Logger } from '../log/logger.js';
import type { EvaluationCounter } from '../stats/evaluation-counter.js';
import { statsScope } from '../stats/stats-scope.js';
import { cors } from './cors.js';
import { countsRoute } from './counts/counts-route.js';
import type { EnvironmentView } from './environment-view.js';
import { evaluateAnswer, type RecordVariation } from './evaluate-answer.js';
import { evalServerFastPath } from './fast-path.js';
import { OFREP_FLAG_PREFIX } from './ofrep/ofrep-paths.js';
import { ofrepBulkRoute, ofrepConfigurationRoute, ofrepFlagRoute } from './ofrep/ofrep-routes.js';
import { sendSnapshot } from './send-snapshot.js';
import type { SnapshotHolder } from './snapshot-holder.js';
import { streamRoute } from './stream/stream-route.js';

export interface EvalAppDeps {
  keys: KeyService;
  holder: SnapshotHolder;
  counter: EvaluationCounter;
  logger: Logger;
  health: () => { status: number; body: unknown };
}

export type EvalHandler = (ctx: Koa.Context, deps: EvalAppDeps) => Promise<void> | void;

/** Path → method → handler. Further endpoints (streams, OFREP, count reports) register here. */
export type EvalRoutes = Record<string, Partial<Record<'GET' | 'POST', EvalHandler>>>;

export const coreRoutes: EvalRoutes = {
  '/v1/evaluate': { POST: evaluate },
  '/v1/snapshot': { GET: snapshot },
  '/v1/stream': { GET: streamRoute },
  '/v1/counts': { POST: countsRoute },
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

/**
 * The evaluation API (service-spec §4, contract §4). The hot path is deliberately plain: one Map lookup to
 * authenticate, one to find the view, the compiled evaluator, one JSON.stringify.
 */
export function createEvalApp(deps: EvalAppDeps, routes: EvalRoutes = coreRoutes): Koa {
  const app = new Koa();
  app.proxy = false;
  app.use(errorMiddleware(deps.logger));
  app.use(cors);
  app.use(async (ctx) => {
    // OFREP puts the flag key in the path: the one prefix route.
    const byMethod = routes[ctx.path] ?? (ctx.path.startsWith(OFREP_FLAG_PREFIX) ? routes[OFREP_FLAG_PREFIX] : undefined);
    if (byMethod === undefined) return;
    const handler = byMethod[(ctx.method === 'HEAD' ? 'GET' : ctx.method) as 'GET' | 'POST'];
    if (handler === undefined) return methodNotAllowed(ctx, Object.keys(byMethod).join(', '));
    await handler(ctx, deps);
  });
  return app;
}

function methodNotAllowed(ctx: Koa.Context, allow: string): void {
  ctx.status = 405;
  ctx.set('Allow', allow);
  ctx.body = { error: { code: 'invalid_input', message: `${ctx.method} is not allowed on ${ctx.path}; use ${allow}` } };
}

/** The SDK key fixes organisation, project and environment (service-spec §5 rule 2). */
export function viewFor(ctx: Koa.Context, deps: Pick<EvalAppDeps, 'keys' | 'holder'>): EnvironmentView {
  return viewForAuthorization(ctx.get('authorization'), deps);
}

export function viewForAuthorization(authorization: string | undefined, deps: Pick<EvalAppDeps, 'keys' | 'holder'>): EnvironmentView {
  const principal = deps.keys.evaluationPrincipal(bearerToken(authorization));
  const view = deps.holder.view(principal.org, principal.projectId!, principal.environment!);
  if (!view) throw new NotFoundError(`project ${principal.projectId} of this sdk key`);
  return view;
}

/** Counts into the stats of the view's organisation, project and environment. */
function recordInto(counter: EvaluationCounter, view: EnvironmentView): RecordVariation {
  const scope = statsScope(view.org, view.projectId, view.environment);
  return (flagKey, variation) => counter.record(scope, flagKey, variation);
}

/** recordInto, made once per view (views are replaced, never changed) instead of once per request. */
function cachedRecorders(counter: EvaluationCounter): (view: EnvironmentView) => RecordVariation {
  const recorders = new WeakMap<EnvironmentView, RecordVariation>();
  return (view) => {
    let record = recorders.get(view);
    if (record === undefined) {
      record = recordInto(counter, view);
      recorders.set(view, record);
    }
    return record;
  };
}

/** POST /v1/evaluate for requests the fast path leaves to Koa (a query string, say); the same answer. */
async function evaluate(ctx: Koa.Context, deps: EvalAppDeps): Promise<void> {
  const view = viewFor(ctx, deps);
  ctx.type = 'application/json';
  ctx.body = evaluateAnswer(view, await readJsonBody(ctx.req), recordInto(deps.counter, view));
}

/** The main server's POST /v1/evaluate and GET /v1/snapshot without Koa (src/eval-server/fast-path.ts). */
export function evalFastPath(deps: EvalAppDeps): FastPath {
  return evalServerFastPath({
    view: (authorization) => viewForAuthorization(authorization, deps),
    recorder: cachedRecorders(deps.counter),
    logger: deps.logger,
  });
}

function snapshot(ctx: Koa.Context, deps: EvalAppDeps): void {
  sendSnapshot(ctx, viewFor(ctx, deps));
}
