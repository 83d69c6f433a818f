import Router from '@koa/router';
import Koa from 'koa';
import { errorMiddleware } from '../http/error-middleware.js';
import type { ControlPlaneDeps } from './control-deps.js';

/** The control plane (service-spec §4, contract §3): /api/v1 and /healthz. */
export function createControlApp(deps: ControlPlaneDeps): Koa {
  const app = new Koa();
  const router = new Router();
  router.get('/healthz', (ctx) => {
    const { status, body } = deps.health();
    ctx.status = status;
    ctx.body = body;
  });
  app.use(errorMiddleware(deps.logger));
  app.use(router.routes());
  return app;
}
