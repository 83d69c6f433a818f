import Koa from 'koa';
import type { KeyService } from '../auth/key-service.js';
import { bearerToken } from '../auth/bearer-token.js';
import { NotFoundError } from '../errors/kinds.js';
import { errorMiddleware } from '../http/error-middleware.js';
import { readJsonBody } from '../http/read-json-body.js';
import type { Logger } from '../log/logger.js';
import type { EvaluationResult } from '../model/index.js';
import type { EvaluationCounter } from '../stats/evaluation-counter.js';
import { statsScope } from '../stats/stats-scope.js';
import { countsRoute } from './counts/counts-route.js';
import { cors } from './cors.js';
import type { EnvironmentView } from './environment-view.js';
import { parseEvaluateRequest } from './evaluate-request.js';
import { OFREP_FLAG_PREFIX } from './ofrep/ofrep-paths.js';
import { ofrepBulkRoute, ofrepConfigurationRoute, ofrepFlagRoute } from './ofrep/ofrep-routes.js';
import type { SnapshotHolder } from './snapshot-holder.js';
import { sendSnapshot } from './send-snapshot.js';
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
  const principal = deps.keys.evaluationPrincipal(bearerToken(ctx.get('authorization')));
  const view = deps.holder.view(principal.org, principal.projectId!, principal.environment!);
  if (!view) throw new NotFoundError(`project ${principal.projectId} of this sdk key`);
  return view;
}

async function evaluate(ctx: Koa.Context, deps: EvalAppDeps): Promise<void> {
  const view = viewFor(ctx, deps);
  const request = parseEvaluateRequest(await readJsonBody(ctx.req));
  const scope = statsScope(view.org, view.projectId, view.environment);
  const out: Record<string, EvaluationResult> = {};
  for (const key of request.keys) {
    const result = view.compiled.evaluate(key, request.context, view.killed);
    if (result.variation !== undefined) deps.counter.record(scope, key, result.variation);
    out[key] = result;
  }
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(out);
}

function snapshot(ctx: Koa.Context, deps: EvalAppDeps): void {
  sendSnapshot(ctx, viewFor(ctx, deps));
}
