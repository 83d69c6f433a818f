import Koa from 'koa';
import { errorMiddleware } from '../http/error-middleware.js';
import type { Logger } from '../log/logger.js';
import { cors } from './cors.js';
import { OFREP_FLAG_PREFIX } from './ofrep/ofrep-paths.js';

export type EvalHandler<D> = (ctx: Koa.Context, deps: D) => Promise<void> | void;

/** Path → method → handler. */
export type EvalRoutes<D> = Record<string, Partial<Record<'GET' | 'POST', EvalHandler<D>>>>;

/**
 * A Koa app serving an evaluation route table (the main server's or a replica's): errors as contract §3
 * bodies, CORS for browsers, 405 with Allow for a known path and another method, 404 for the rest.
 */
export function createRoutedApp<D>(deps: D, logger: Logger, routes: EvalRoutes<D>): Koa {
  const app = new Koa();
  app.proxy = false;
  app.use(errorMiddleware(logger));
  app.use(cors);
  app.use(async (ctx) => {
    // OFREP puts the flag key in the path: the one prefix route.
    const byMethod = routes[ctx.path] ?? (ctx.path.startsWith(OFREP_FLAG_PREFIX) ? routes[OFREP_FLAG_PREFIX] : undefined);
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
