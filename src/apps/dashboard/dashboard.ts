import type { AuthGuard } from '../../foundations/auth/auth-guard.js';
import type { KeyService } from '../../foundations/auth/key-service.js';
import type { OidcConfig } from '../../foundations/config/oidc-settings.js';
import type { Logger } from '../../foundations/log/logger.js';
import type { ControlState } from '../../foundations/state/index.js';
import type { RepositoryRegistry } from '../../foundations/storage/index.js';
import type { PrincipalResolver } from '../control-plane/principal-resolvers.js';
import type { ControlAppExtension } from '../control-plane/route-table.js';
import { validateConfigRoute } from './config-draft.js';
import { keyNamesRoute } from './key-names.js';
import { LiveEvents } from './live-events.js';
import { LoginFlowSealer } from './oidc/login-flow-cookie.js';
import { registerOidcRoutes } from './oidc/oidc-routes.js';
import { type SsoHealth, SsoProvider } from './oidc/sso-provider.js';
import { AssetFiles, registerPageRoutes } from './page-routes.js';
import { registerSessionRoutes, sessionResolver } from './sessions/session-routes.js';
import { SessionService } from './sessions/session-service.js';
import type { ScryptCost } from './users/password-hash.js';
import { userRoutes } from './users/user-routes.js';
import { UserService } from './users/user-service.js';

export interface DashboardOptions {
  /** Where users and their sessions are kept, and the pepper single sign-on's login cookie is sealed under. */
  state: Pick<ControlState, 'users' | 'sessions' | 'pepper'>;
  /** Throttles, logs and counts failed sign-ins, sharing each address's budget with failed API keys. */
  guard: AuthGuard;
  logger: Logger;
  /** The organisations' repositories: their moves of main are announced to open pages. */
  repos: Pick<RepositoryRegistry, 'get'>;
  /** The organisations' keys, whose names the page shows beside their prefixes; the organisations there are. */
  keys: Pick<KeyService, 'listKeys' | 'organisations'>;
  /** Single sign-on (FLAGOPS_OIDC_*), when set. */
  oidc?: OidcConfig;
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
  /** Single sign-on's state for /healthz; undefined when it is not set up. */
  sso?: () => SsoHealth;
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
  const sso = options.oidc
    ? new SsoProvider({ oidc: options.oidc, organisations: options.keys.organisations().map((o) => o.name), logger: options.logger })
    : undefined;
  // Registered even when the settings are wrong: /auth/oidc/login then answers a page that says why.
  const oidcRoutes =
    sso && options.oidc
      ? {
          sso,
          sealer: new LoginFlowSealer(await options.state.pepper.get({ mayCreate: false })),
          groupRoles: 'settings' in options.oidc ? options.oidc.settings.groupRoles : new Map(),
          sessions,
          guard: options.guard,
          logger: options.logger,
        }
      : undefined;
  return {
    resolver: sessionResolver({ sessions, users }),
    extension: {
      routes: [...userRoutes({ users, sessions }), validateConfigRoute, keyNamesRoute(options.keys)],
      register(router) {
        registerSessionRoutes(router, { sessions, users, guard: options.guard, ...(sso ? { sso } : {}) });
        if (oidcRoutes) registerOidcRoutes(router, oidcRoutes);
        live.register(router);
        registerPageRoutes(router, assets);
      },
    },
    users,
    sessions,
    live,
    ...(sso ? { sso: () => sso.health() } : {}),
    close: async () => {
      sso?.close();
      live.close();
      await sessions.close();
    },
  };
}
