import Router from '@koa/router';
import Koa from 'koa';
import { errorMiddleware } from '../http/error-middleware.js';
import type { ControlPlaneDeps } from './control-deps.js';
import { mountRoutes } from './http/mount-routes.js';
import type { Route } from './http/route.js';
import { CONTROL_PLANE_ROUTES } from './routes.js';

/** What another part (the dashboard, src/dashboard) adds: routes run through the same checks, and its own handlers. */
export interface ControlAppExtension {
  routes?: readonly Route[];
  register?(router: Router): void;
}

/** The control plane (service-spec §4, contract §3): /api/v1 and /healthz. Unknown routes are 404 not_found. */
export function createControlApp(deps: ControlPlaneDeps, extensions: readonly ControlAppExtension[] = []): Koa {
  const app = new Koa();
  const router = new Router();
  router.get('/healthz', (ctx) => {
    const { status, body } = deps.health();
    ctx.status = status;
    ctx.body = body;
  });
  mountRoutes(router, [...CONTROL_PLANE_ROUTES, ...extensions.flatMap((e) => e.routes ?? [])], deps);
  for (const extension of extensions) extension.register?.(router);
  app.use(errorMiddleware(deps.logger));
  app.use(router.routes());
  return app;
}
