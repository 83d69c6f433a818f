import type { Context, Next } from 'koa';
import Koa from 'koa';
import { errorMiddleware } from '../../foundations/http/error-middleware.js';
import type { Logger } from '../../foundations/log/logger.js';

/**
 * SDK keys are publishable (they ship in browser code), so any origin may call the evaluation API from a browser.
 * ETag is exposed so browser SDKs can send If-None-Match.
 */
export const CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'ETag',
});

/** Every answer carries CORS_HEADERS; preflights answer at once. */
export async function cors(ctx: Context, next: Next): Promise<void> {
  ctx.set(CORS_HEADERS);
  if (ctx.method === 'OPTIONS') {
    ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, If-None-Match');
    ctx.set('Access-Control-Max-Age', '86400');
    ctx.status = 204;
    return;
  }
  await next();
}

export type EvalHandler<D> = (ctx: Koa.Context, deps: D) => Promise<void> | void;

/** Path → method → handler. A path ending in "/" is a prefix: OFREP puts the flag key in the path. */
export type EvalRoutes<D> = Record<string, Partial<Record<'GET' | 'POST', EvalHandler<D>>>>;

/** A script pointed at the evaluation port by mistake: its 404 says where the control-plane API is. */
function controlApiElsewhere(path: string): string | undefined {
  return path.startsWith('/api/') || path.startsWith('/dashboard') || path.startsWith('/git/')
    ? "the control plane's API is served on its control port (FLAGOPS_CONTROL_PORT, 4000 unless set), not an evaluation port"
    : undefined;
}

/**
 * A Koa app serving an evaluation route table (the main server's or a replica's): errors as
 * `{ error: { code, message } }` bodies, CORS for browsers, 405 with Allow for a known path and another method, 404 for the rest.
 */
export function createRoutedApp<D>(deps: D, logger: Logger, routes: EvalRoutes<D>): Koa {
  const prefixes = Object.keys(routes).filter((path) => path.endsWith('/'));
  const app = new Koa();
  app.proxy = false;
  const routeOf = (path: string) => (routes[path] === undefined ? prefixes.find((p) => path.startsWith(p)) : path);
  app.use(errorMiddleware(logger, controlApiElsewhere));
  // The route's pattern names the request in the metrics (`/ofrep/v1/evaluate/flags/:key`, never the raw path),
  // whatever answers it: the handler, a 405, CORS's preflight, an error.
  app.use(async (ctx, next) => {
    const route = routeOf(ctx.path);
    if (route !== undefined) (ctx as { _matchedRoute?: string })._matchedRoute = route.endsWith('/') ? `${route}:key` : route;
    await next();
  });
  app.use(cors);
  app.use(async (ctx) => {
    const prefix = routes[ctx.path] === undefined ? prefixes.find((p) => ctx.path.startsWith(p)) : undefined;
    const byMethod = routes[prefix ?? ctx.path];
    if (byMethod === undefined) return;
    const handler = byMethod[(ctx.method === 'HEAD' ? 'GET' : ctx.method) as 'GET' | 'POST'];
    if (handler === undefined) {
      const allow = Object.keys(byMethod).join(', ');
      ctx.status = 405;
      ctx.set('Allow', allow);
      ctx.body = { error: { code: 'invalid_input', message: `${ctx.method} is not allowed on ${ctx.path}; use ${allow}` } };
      return;
    }
    await handler(ctx, deps);
  });
  return app;
}

/** Whether an If-None-Match header names this ETag (a list, weak validators and `*` included; RFC 9110 §13.1.2). */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true;
  for (const raw of header.split(',')) {
    const token = raw.trim();
    if (token === '*' || token === etag || (token.startsWith('W/') && token.slice(2) === etag)) return true;
  }
  return false;
}
