import type Koa from 'koa';
import { toHttpError } from '../errors/http-status.js';
import { UnauthorizedError } from '../errors/kinds.js';
import type { ServerMetrics } from './server-metrics.js';

/** The route label of a request no route matched (404s, the dashboard's fallbacks): never the raw path. */
const UNMATCHED = 'unmatched';
const METRICS_PATH = '/metrics';

/**
 * Puts GET /metrics and request timing in front of everything else of a Koa app (before its error handling,
 * so the status timed is the one sent). The route label is the pattern the router matched
 * (`/api/v1/flags/:id`), so a label's values stay few whatever paths clients send.
 */
export function instrumentApp(app: Koa, metrics: ServerMetrics): Koa {
  app.middleware.unshift(async (ctx, next) => {
    const startedAt = performance.now();
    if (ctx.path === METRICS_PATH && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      await answerMetrics(ctx, metrics);
      metrics.observeRequest(METRICS_PATH, ctx.status, startedAt);
      return;
    }
    let status = 500;
    try {
      await next();
      status = ctx.status;
    } finally {
      const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      metrics.observeRequest(route === undefined ? UNMATCHED : String(route), status, startedAt);
    }
  });
  return app;
}

async function answerMetrics(ctx: Koa.Context, metrics: ServerMetrics): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  if (!metrics.allows(ctx.get('authorization') || undefined)) {
    const failure = toHttpError(new UnauthorizedError('/metrics needs Authorization: Bearer <the FLAGOPS_METRICS_TOKEN value>'));
    ctx.status = failure.status;
    ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
    ctx.body = failure.body;
    return;
  }
  ctx.type = metrics.contentType;
  ctx.body = await metrics.text();
}
