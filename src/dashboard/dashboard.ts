import type { AuthGuard } from '../auth/auth-guard.js';
import type { ControlAppExtension } from '../control-plane/control-app.js';
import type { PrincipalResolver } from '../control-plane/workspace.js';
import type { Logger } from '../log/logger.js';
import { validateConfigRoute } from './config-draft.js';
import { AssetFiles, registerPageRoutes } from './page-routes.js';
import { registerSessionRoutes, sessionResolver } from './sessions/session-routes.js';
import { SessionStore } from './sessions/session-store.js';
import type { ScryptCost } from './users/password-hash.js';
import { userRoutes } from './users/user-routes.js';
import { UserStore } from './users/user-store.js';

export interface DashboardOptions {
  dataDir: string;
  /** Throttles, logs and counts failed sign-ins, sharing each address's budget with failed API keys. */
  guard: AuthGuard;
  logger: Logger;
  /** The built page (default dist/dashboard-web). */
  assetsDir?: string;
  idleMs?: number;
  absoluteMs?: number;
  passwordCost?: ScryptCost;
  now?: () => Date;
}

export interface Dashboard {
  /** The session cookie as a control-plane credential: ControlPlaneDeps.principalResolvers. */
  resolver: PrincipalResolver;
  /** Its routes and page, for createControlApp. */
  extension: ControlAppExtension;
  users: UserStore;
  sessions: SessionStore;
  close(): Promise<void>;
}

/** The dashboard (docs/dashboard.md): users, sessions, the CSRF guard and the page, wired together. */
export async function createDashboard(options: DashboardOptions): Promise<Dashboard> {
  const now = options.now ?? (() => new Date());
  const users = await UserStore.open({ dataDir: options.dataDir, now, ...(options.passwordCost ? { cost: options.passwordCost } : {}) });
  const sessions = await SessionStore.open({
    dataDir: options.dataDir,
    logger: options.logger,
    idleMs: options.idleMs,
    absoluteMs: options.absoluteMs,
    now,
  });
  const assets = new AssetFiles(options.assetsDir);
  return {
    resolver: sessionResolver({ sessions, users }),
    extension: {
      routes: [...userRoutes({ users, sessions }), validateConfigRoute],
      register(router) {
        registerSessionRoutes(router, { sessions, users, guard: options.guard });
        registerPageRoutes(router, assets);
      },
    },
    users,
    sessions,
    close: () => sessions.close(),
  };
}
