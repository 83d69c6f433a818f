import { auditRoutes } from './audit/audit-routes.js';
import { environmentRoutes } from './environments/environment-routes.js';
import { flagRoutes } from './flags/flag-routes.js';
import type { Route } from './http/route.js';
import { invalidFilesRoutes } from './invalid-files/invalid-files-routes.js';
import { keyRoutes } from './keys/key-routes.js';
import { projectRoutes } from './projects/project-routes.js';
import { statsRoutes } from './stats/stats-routes.js';

/** Every control-plane route (service-spec §4, contract §3), each with the permission it needs. */
export const CONTROL_PLANE_ROUTES: readonly Route[] = [
  ...projectRoutes,
  ...flagRoutes,
  ...environmentRoutes,
  ...statsRoutes,
  ...keyRoutes,
  ...auditRoutes,
  ...invalidFilesRoutes,
];
