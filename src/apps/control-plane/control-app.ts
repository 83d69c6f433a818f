import Router from '@koa/router';
import Koa from 'koa';
import { errorMiddleware } from '../../foundations/http/error-middleware.js';
import { refuseMalformedPath } from '../../foundations/http/well-formed-path.js';
import { invalidFile } from '../../foundations/repository/held-units.js';
import { auditRoutes } from './audit.js';
import { budgetRoutes } from './budgets.js';
import type { ControlPlaneDeps } from './deps.js';
import { environmentRoutes } from './environments.js';
import { flagHealthRoutes } from './flag-health.js';
import { flagRoutes } from './flags.js';
import { guardCheckRoutes } from './guard-checks.js';
import { keyRoutes } from './keys.js';
import { previewRoutes } from './preview.js';
import { projectRoutes } from './projects.js';
import { proposalRoutes } from './proposals.js';
import { type ControlAppExtension, mountRoutes, type Route, route } from './route-table.js';
import { segmentRoutes } from './segments.js';
import { statsRoutes } from './stats.js';
import { triggerRoutes } from './triggers.js';

/**
 * The invalid files on main of the caller's organisation: what /healthz lists per organisation, for one
 * organisation and behind its credentials (the dashboard's banner reads it). Empty when everything is valid.
 */
const invalidFilesRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/invalid-files',
    permission: 'read',
    body: 'none',
    handle: async ({ ws }) => {
      const { commit, issues } = await ws.readServed();
      return { body: { commit, invalidFiles: issues.map(invalidFile) } };
    },
  }),
];

/** Every control-plane route (docs/api.md), each with the permission it needs. */
export const CONTROL_PLANE_ROUTES: readonly Route[] = [
  ...projectRoutes,
  ...budgetRoutes,
  ...flagHealthRoutes,
  ...flagRoutes,
  ...environmentRoutes,
  ...guardCheckRoutes,
  ...segmentRoutes,
  ...statsRoutes,
  ...keyRoutes,
  ...auditRoutes,
  ...invalidFilesRoutes,
  ...triggerRoutes,
  ...proposalRoutes,
  ...previewRoutes,
];

/** An application's SDK pointed at the control port by mistake: its 404 says where the evaluation API is. */
function evaluationApiElsewhere(path: string): string | undefined {
  return path.startsWith('/v1/') || path.startsWith('/ofrep/')
    ? 'the evaluation API is served on the evaluation port (FLAGOPS_EVAL_PORT, 4001 unless set), not the control port'
    : undefined;
}

/** The control plane: /api/v1 and /healthz. Unknown routes are 404 not_found. */
export function createControlApp(deps: ControlPlaneDeps, extensions: readonly ControlAppExtension[] = []): Koa {
  const app = new Koa();
  const router = new Router();
  router.get('/healthz', (ctx) => {
    const { status, body } = deps.health(ctx.req);
    ctx.status = status;
    ctx.body = body;
  });
  mountRoutes(router, [...CONTROL_PLANE_ROUTES, ...extensions.flatMap((e) => e.routes ?? [])], deps);
  for (const extension of extensions) extension.register?.(router);
  app.use(errorMiddleware(deps.logger, evaluationApiElsewhere));
  app.use(refuseMalformedPath);
  app.use(router.routes());
  return app;
}
