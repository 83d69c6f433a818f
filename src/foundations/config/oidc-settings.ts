import { parseGroupRoles } from '../auth/group-roles.js';
import type { Role } from '../auth/roles.js';

/** Single sign-on with an OpenID Connect provider (docs/dashboard.md#single-sign-on). */
export interface OidcSettings {
  /** FLAGOPS_OIDC_ISSUER: https://, or http:// on a loopback address. */
  issuer: URL;
  /** FLAGOPS_OIDC_CLIENT_ID and FLAGOPS_OIDC_CLIENT_SECRET: the client registered with the provider. */
  clientId: string;
  clientSecret: string;
  /** FLAGOPS_OIDC_ROLES: `groups` claim values to roles. */
  groupRoles: ReadonlyMap<string, Role>;
  /** FLAGOPS_OIDC_ORG: the organisation people sign in to; absent: the installation's only one. */
  org?: string;
  /** FLAGOPS_OIDC_SCOPES: asked of the provider (default `openid email profile groups`). */
  scopes: string;
}

/**
 * What the settings say: SSO set up, or set up wrongly (the problem, in words naming the variable). A wrong
 * setting does not stop the service: flags keep being served and password sign-in works, while the log and
 * /healthz say that single sign-on is off and why. A problem found once the issuer was read carries it, so the
 * sign-in page and /healthz still name the provider.
 */
export type OidcConfig = { settings: OidcSettings } | { problem: string; issuer?: URL };

const NAMES = ['FLAGOPS_OIDC_ISSUER', 'FLAGOPS_OIDC_CLIENT_ID', 'FLAGOPS_OIDC_CLIENT_SECRET', 'FLAGOPS_OIDC_ROLES'] as const;

/** The OIDC settings, or undefined when none of the FLAGOPS_OIDC_ variables is set. */
export function parseOidcSettings(env: NodeJS.ProcessEnv): OidcConfig | undefined {
  const set = NAMES.filter((name) => (env[name] ?? '').trim() !== '');
  if (set.length === 0 && !env.FLAGOPS_OIDC_ORG) return undefined;
  const missing = NAMES.filter((name) => !set.includes(name));
  if (missing.length > 0) return { problem: `single sign-on needs ${missing.join(', ')} too (set: ${set.join(', ') || 'none'})` };
  let issuer: URL;
  try {
    issuer = new URL((env.FLAGOPS_OIDC_ISSUER as string).trim());
  } catch {
    return { problem: `FLAGOPS_OIDC_ISSUER must be the provider's issuer URL, e.g. https://sso.example.com/realms/acme` };
  }
  const issuerProblem = checkIssuer(issuer);
  if (issuerProblem) return { problem: issuerProblem };
  let groupRoles: ReadonlyMap<string, Role>;
  try {
    groupRoles = parseGroupRoles(env.FLAGOPS_OIDC_ROLES as string);
  } catch (err) {
    return { problem: `FLAGOPS_OIDC_ROLES ${(err as Error).message}`, issuer };
  }
  const scopes = (env.FLAGOPS_OIDC_SCOPES ?? '').trim() || 'openid email profile groups';
  if (!scopes.split(/\s+/).includes('openid')) return { problem: 'FLAGOPS_OIDC_SCOPES must include openid', issuer };
  return {
    settings: {
      issuer,
      clientId: (env.FLAGOPS_OIDC_CLIENT_ID as string).trim(),
      clientSecret: env.FLAGOPS_OIDC_CLIENT_SECRET as string,
      groupRoles,
      scopes,
      ...(env.FLAGOPS_OIDC_ORG ? { org: env.FLAGOPS_OIDC_ORG.trim() } : {}),
    },
  };
}

/** The issuer is https://; http:// only on a loopback address, where nobody else can read or change the traffic. */
export function checkIssuer(issuer: URL): string | undefined {
  if (issuer.search !== '' || issuer.hash !== '') return 'FLAGOPS_OIDC_ISSUER must be the issuer URL without ? or #';
  if (issuer.protocol === 'https:') return undefined;
  if (issuer.protocol === 'http:' && isLoopback(issuer.hostname)) return undefined;
  return `FLAGOPS_OIDC_ISSUER must be an https:// URL (http:// only on a loopback address, for local development), got ${issuer.protocol}//${issuer.host}`;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
