import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { SsoHealth } from './apps/dashboard/oidc/sso-provider.js';
import type { HolderHealth, OrganisationHealth } from './apps/eval-server/snapshot-holder.js';
import { bearerToken } from './foundations/auth/key-format.js';
import type { KeyService } from './foundations/auth/key-service.js';
import { limitedToProjects, projectInScope, type Scope } from './foundations/auth/scope.js';
import { toHttpError } from './foundations/errors/http-status.js';
import { UnauthorizedError } from './foundations/errors/kinds.js';
import { deriveProjectId } from './foundations/repository/ids.js';

/** What GET /healthz answers: the status code and the body. */
export interface HealthAnswer {
  status: number;
  body: unknown;
}

export type Health = (req: IncomingMessage) => HealthAnswer;

export interface HealthOptions {
  keys: KeyService;
  /** Per organisation: the served commit, invalid files, and a storage fault if its repository has one. */
  report: () => HolderHealth;
  /** False until every organisation's current snapshot is served. */
  ready: () => boolean;
  /** FLAGOPS_METRICS_TOKEN: whoever holds it sees every organisation's details. */
  metricsToken?: string;
  /**
   * What the control plane shares with others, where it does: the database (undefined: the files of the data
   * directory) and the git remote of `org` (undefined: none). Either out of reach degrades the status.
   */
  shared?: () => SharedHealth;
  /** The id of the project an organisation serves under a slug: whose invalid files a key limited to projects sees. */
  projectIdOf?: (org: string, slug: string) => string | undefined;
  /** Single sign-on, when set up: not ready (misconfigured, or the issuer out of reach) degrades the status. */
  sso?: () => SsoHealth;
}

export interface SharedHealth {
  database?: { reachable: boolean; error?: string };
  /**
   * Guarded rollouts: how many schedules have a guard, and whether FLAGOPS_PROMETHEUS_URL is set. Guards
   * without it (a pushed file) cannot be checked, count as failing, and degrade the status.
   */
  guards?: { watched: number; prometheus: boolean };
  gitRemote?: { org: string; url: string; reachable: boolean; holdingKills: boolean; diverged: boolean; error?: string };
}

/**
 * GET /healthz of both ports: 200 once serving (503 while starting), `status` ok, degraded (an invalid file, or
 * a repository that cannot be read or written) or starting. Anyone may ask, so without a credential it answers
 * the status alone: organisation names, commits and file names are another tenant's business. An admin key
 * sees its own organisation's details; the metrics token (the operator's) sees every organisation's.
 */
export function serviceHealth(options: HealthOptions): Health {
  const tokenDigest = options.metricsToken === undefined ? undefined : digest(options.metricsToken);
  return (req) => {
    const ready = options.ready();
    const report = options.report();
    const shared = options.shared?.() ?? {};
    const sso = options.sso?.();
    const degraded =
      report.organisations.some((o) => o.invalidFiles.length > 0 || o.fault !== undefined) ||
      shared.database?.reachable === false ||
      shared.gitRemote?.reachable === false ||
      shared.gitRemote?.diverged === true ||
      (shared.guards !== undefined && shared.guards.watched > 0 && !shared.guards.prometheus) ||
      sso?.state === 'unavailable' ||
      sso?.state === 'misconfigured';
    const status = !ready ? 'starting' : degraded ? 'degraded' : 'ok';
    const code = ready ? 200 : 503;
    const presented = bearerToken(req.headers.authorization);
    if (presented === null) return { status: code, body: { status } };
    if (tokenDigest !== undefined && timingSafeEqual(digest(presented), tokenDigest))
      return { status: code, body: { status, organisations: report.organisations, ...shared, ...(sso ? { sso } : {}) } };
    try {
      const principal = options.keys.authenticateRequest(presented, req, 'control plane');
      if (principal?.kind !== 'admin') throw new UnauthorizedError(DETAILS_NEED);
      const { database, gitRemote, guards } = shared;
      // Where the database is, and why it failed, is the operator's (the metrics token's) to see.
      const own = {
        ...(database ? { database: { reachable: database.reachable } } : {}),
        ...(gitRemote?.org === principal.org ? { gitRemote } : {}),
        ...(guards ? { guards } : {}),
      };
      const organisations = report.organisations
        .filter((o) => o.org === principal.org)
        .map((o) => withinScope(o, principal.scope, options.projectIdOf));
      return { status: code, body: { status, organisations, ...own, ...(sso ? { sso } : {}) } };
    } catch (err) {
      // A wrong key counts against the address like any other (throttled: 429).
      const refused = toHttpError(err);
      return { status: refused.status, body: refused.body };
    }
  };
}

/** An organisation's health as a credential limited to projects sees it: the invalid files of those projects only. */
function withinScope(health: OrganisationHealth, scope: Scope | undefined, projectIdOf: HealthOptions['projectIdOf']): OrganisationHealth {
  if (!limitedToProjects(scope)) return health;
  const visible = (file: string) => {
    const slug = /^projects\/([^/]+)\//.exec(file)?.[1];
    if (slug === undefined) return false;
    return projectInScope(scope, { id: projectIdOf?.(health.org, slug) ?? deriveProjectId(slug), slug });
  };
  return { ...health, invalidFiles: health.invalidFiles.filter((f) => visible(f.file)) };
}

const DETAILS_NEED =
  'the details of /healthz need an admin key of the organisation or the metrics token; without a credential it answers the status alone';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
