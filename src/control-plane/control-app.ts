import type { IncomingMessage } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import type { AuditRegistry } from '../audit/audit-registry.js';
import type { KeyService } from '../auth/key-service.js';
import type { SnapshotHolder } from '../eval-server/snapshot-holder.js';
import { errorMiddleware } from '../http/error-middleware.js';
import type { KillSwitch } from '../kill/kill-switch.js';
import type { Logger } from '../log/logger.js';
import { invalidFile } from '../repository/held-units.js';
import type { EvaluationCounter } from '../stats/evaluation-counter.js';
import type { RepositoryRegistry } from '../storage/index.js';
import type { TriggerService } from '../triggers/trigger-service.js';
import { auditRoutes } from './audit.js';
import { environmentRoutes } from './environments.js';
import { flagRoutes } from './flags.js';
import { keyRoutes } from './keys.js';
import { previewRoutes } from './preview.js';
import { projectRoutes } from './projects.js';
import { proposalRoutes } from './proposals.js';
import { mountRoutes, type Route, route } from './route-table.js';
import { segmentRoutes } from './segments.js';
import { statsRoutes } from './stats.js';
import { triggerRoutes } from './triggers.js';
import type { PrincipalResolver } from './workspace.js';

/** Everything the control plane's routes and services are given by the composition root (src/service.ts). */
export interface ControlPlaneDeps {
  keys: KeyService;
  repos: RepositoryRegistry;
  holder: SnapshotHolder;
  killSwitch: KillSwitch;
  counter: EvaluationCounter;
  /** The audit trail of each organisation, read from main's git log. */
  audit: AuditRegistry;
  logger: Logger;
  planProjectLimit: number;
  /** Trigger URLs (hashed secrets) of every organisation. */
  triggers: TriggerService;
  health: (req: IncomingMessage) => { status: number; body: unknown };
  clock?: () => Date;
  /**
   * Extra ways to authenticate a request that carries no `Authorization` header, tried in order (the
   * dashboard's session cookie plugs in here). Bearer keys are always accepted.
   */
  principalResolvers?: readonly PrincipalResolver[];
}

/** What another part (the dashboard, src/dashboard) adds: routes run through the same checks, and its own handlers. */
export interface ControlAppExtension {
  routes?: readonly Route[];
  register?(router: Router): void;
}

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
      const { commit, issues } = await ws.repo.readServed();
      return { body: { commit, invalidFiles: issues.map(invalidFile) } };
    },
  }),
];

/** Every control-plane route (docs/api.md), each with the permission it needs. */
export const CONTROL_PLANE_ROUTES: readonly Route[] = [
  ...projectRoutes,
  ...flagRoutes,
  ...environmentRoutes,
  ...segmentRoutes,
  ...statsRoutes,
  ...keyRoutes,
  ...auditRoutes,
  ...invalidFilesRoutes,
  ...triggerRoutes,
  ...proposalRoutes,
  ...previewRoutes,
];

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
  app.use(errorMiddleware(deps.logger));
  app.use(router.routes());
  return app;
}
