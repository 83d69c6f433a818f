import type { AuthGuard } from '../../foundations/auth/auth-guard.js';
import type { KeyService } from '../../foundations/auth/key-service.js';
import type { Logger } from '../../foundations/log/logger.js';
import type { ControlState } from '../../foundations/state/index.js';
import type { RepositoryRegistry } from '../../foundations/storage/index.js';
import type { PrincipalResolver } from '../control-plane/principal-resolvers.js';
import type { ControlAppExtension } from '../control-plane/route-table.js';
import { validateConfigRoute } from './config-draft.js';
import { keyNamesRoute } from './key-names.js';
import { LiveEvents } from './live-events.js';
import { AssetFiles, registerPageRoutes } from './page-routes.js';
import { registerSessionRoutes, sessionResolver } from './sessions/session-routes.js';
import { SessionService } from './sessions/session-service.js';
import type { ScryptCost } from './users/password-hash.js';
import { userRoutes } from './users/user-routes.js';
import { UserService } from './users/user-service.js';

export interface DashboardOptions {
  /** Where users and their sessions are kept. */
  state: Pick<ControlState, 'users' | 'sessions'>;
  /** Throttles, logs and counts failed sign-ins, sharing each address's budget with failed API keys. */
  guard: AuthGuard;
  logger: Logger;
  /** The organisations' repositories: their moves of main are announced to open pages. */
  repos: Pick<RepositoryRegistry, 'get'>;
  /** The organisations' keys, whose names the page shows beside their prefixes. */
  keys: Pick<KeyService, 'listKeys'>;
  /** Open live-update streams at most (default 500). */
  maxLiveStreams?: number;
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
  users: UserService;
  sessions: SessionService;
  /** The open pages' live-update streams: ended first at stop, so the servers can close at once. */
  live: LiveEvents;
  close(): Promise<void>;
}

/** The dashboard (docs/dashboard.md): users, sessions, the CSRF guard and the page, wired together. */
export async function createDashboard(options: DashboardOptions): Promise<Dashboard> {
  const now = options.now ?? (() => new Date());
  const users = await UserService.open({ state: options.state, now, ...(options.passwordCost ? { cost: options.passwordCost } : {}) });
  const sessions = await SessionService.open({
    state: options.state,
    logger: options.logger,
    idleMs: options.idleMs,
    absoluteMs: options.absoluteMs,
    now,
  });
  const assets = new AssetFiles(options.assetsDir);
  const live = new LiveEvents({
    sessions,
    users,
    repository: (org) => options.repos.get(org),
    logger: options.logger,
    ...(options.maxLiveStreams === undefined ? {} : { maxStreams: options.maxLiveStreams }),
  });
  return {
    resolver: sessionResolver({ sessions, users }),
    extension: {
      routes: [...userRoutes({ users, sessions }), validateConfigRoute, keyNamesRoute(options.keys)],
      register(router) {
        registerSessionRoutes(router, { sessions, users, guard: options.guard });
        live.register(router);
        registerPageRoutes(router, assets);
      },
    },
    users,
    sessions,
    live,
    close: async () => {
      live.close();
      await sessions.close();
    },
  };
}
