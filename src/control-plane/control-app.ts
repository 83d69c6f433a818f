import Router from '@koa/router';
import Koa from 'koa';
import { errorMiddleware } from '../http/error-middleware.js';
import type { ControlPlaneDeps } from './control-deps.js';
import { mountRoutes } from './http/mount-routes.js';
import { CONTROL_PLANE_ROUTES } from './routes.js';

/** The control plane (service-spec §4, contract §3): /api/v1 and /healthz. Unknown routes are 404 not_found. */
export function createControlApp(deps: ControlPlaneDeps): Koa {
  const app = new Koa();
  const router = new Router();
  router.get('/healthz', (ctx) => {
    const { status, body } = deps.health();
    ctx.status = status;
    ctx.body = body;
  });
  mountRoutes(router, CONTROL_PLANE_ROUTES, deps);
  app.use(errorMiddleware(deps.logger));
  app.use(router.routes());
  return app;
}
