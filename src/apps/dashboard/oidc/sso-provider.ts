import * as client from 'openid-client';
import type { OidcConfig, OidcSettings } from '../../../foundations/config/oidc-settings.js';
import type { Logger } from '../../../foundations/log/logger.js';
import { oneLine } from '../../../foundations/validation/one-line.js';
import { LOGIN_FLOW_MS, type LoginFlow } from './login-flow-cookie.js';

/** What /healthz says of single sign-on. */
export interface SsoHealth {
  issuer?: string;
  /** `ready`; `discovering` (at start); `unavailable` (the issuer could not be discovered, retried); `misconfigured`. */
  state: 'ready' | 'discovering' | 'unavailable' | 'misconfigured';
  error?: string;
}

/** Who the provider says signed in, from the verified ID token (and the userinfo endpoint for missing groups). */
export interface SsoIdentity {
  subject: string;
  email?: string;
  username?: string;
  groups: string[];
}

/** A sign-in the provider or its tokens refused: counted and logged as a failed sign-in. */
export class SsoFailure extends Error {}

/**
 * The provider refused the code as no longer valid (`invalid_grant`): codes are single use and short-lived, so
 * mostly an answer used already, here before a restart or through another control plane.
 */
export class SsoCodeRefused extends SsoFailure {}

/** Single sign-on cannot be used now (misconfigured, or the issuer cannot be reached): no failure of the person. */
export class SsoUnavailable extends Error {}

type Discovery =
  | { kind: 'misconfigured'; problem: string }
  | { kind: 'discovering'; done: Promise<void> }
  | { kind: 'ready'; config: client.Configuration }
  | { kind: 'unavailable'; error: string; at: number };

export interface SsoProviderOptions {
  oidc: OidcConfig;
  /** The organisations there are: people sign in to FLAGOPS_OIDC_ORG, or to the only one. */
  organisations: readonly string[];
  logger: Logger;
  now?: () => number;
  /** First wait before discovering again after a failure; doubles up to 5 min (default 5 s). */
  retryMs?: number;
}

const MAX_RETRY_MS = 5 * 60 * 1000;
/** A sign-in attempt while the issuer is unreachable tries again at once, at most this often. */
const ON_DEMAND_MS = 5_000;
/** Seconds any request to the provider may take. */
const REQUEST_TIMEOUT_S = 10;
/** How far the provider's clock may be from ours when the ID token's `iat` is checked. */
const IAT_TOLERANCE_MS = 60_000;

/**
 * The OpenID Connect provider, through openid-client: discovery, the authorization request (code flow with PKCE,
 * state and nonce) and the callback (code exchange; the ID token's signature checked against the issuer's JWKS,
 * its issuer, audience, expiry and nonce). Discovery runs in the background from the start: a provider that is
 * slow or down never delays serving flags; it is retried with backoff, and at once when someone tries to sign in.
 */
export class SsoProvider {
  readonly issuer: string;
  /** The organisation people sign in to. */
  readonly org: string;
  private discovery: Discovery;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private retryMs: number;
  private closed = false;
  private readonly now: () => number;
  private readonly logger: Logger;

  constructor(private readonly options: SsoProviderOptions) {
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
    this.retryMs = options.retryMs ?? 5_000;
    const { oidc } = options;
    this.issuer = 'settings' in oidc ? oidc.settings.issuer.href : (oidc.issuer?.href ?? '');
    const problem = 'problem' in oidc ? oidc.problem : orgProblem(oidc.settings, options.organisations);
    this.org = 'settings' in oidc ? (oidc.settings.org ?? options.organisations[0] ?? '') : '';
    if (problem !== undefined) {
      this.discovery = { kind: 'misconfigured', problem };
      this.logger.error('single sign-on is off: its settings are wrong; password sign-in works', { problem });
    } else {
      this.discovery = { kind: 'discovering', done: this.discover() };
    }
  }

  private get settings(): OidcSettings {
    return (this.options.oidc as { settings: OidcSettings }).settings;
  }

  /** What the sign-in button says: the issuer's host. */
  get label(): string {
    return this.issuer === '' ? '' : new URL(this.issuer).host;
  }

  health(): SsoHealth {
    const issuer = this.issuer === '' ? {} : { issuer: this.issuer };
    switch (this.discovery.kind) {
      case 'misconfigured':
        return { ...issuer, state: 'misconfigured', error: this.discovery.problem };
      case 'unavailable':
        return { ...issuer, state: 'unavailable', error: this.discovery.error };
      default:
        return { ...issuer, state: this.discovery.kind };
    }
  }

  /** The discovered provider; throws SsoUnavailable saying why not. */
  async configuration(): Promise<client.Configuration> {
    if (this.discovery.kind === 'unavailable' && this.now() - this.discovery.at >= ON_DEMAND_MS) {
      clearTimeout(this.retryTimer);
      this.discovery = { kind: 'discovering', done: this.discover() };
    }
    if (this.discovery.kind === 'discovering') await this.discovery.done;
    const found = this.discovery;
    if (found.kind === 'ready') return found.config;
    if (found.kind === 'misconfigured') throw new SsoUnavailable(found.problem);
    throw new SsoUnavailable(found.kind === 'unavailable' ? found.error : 'the provider is being discovered');
  }

  /** Starts a sign-in: where to send the browser, and what the callback must find again. */
  async begin(redirectUri: string): Promise<{ url: string; flow: LoginFlow }> {
    const config = await this.configuration();
    const flow: LoginFlow = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      redirectUri,
      expiresAt: this.now() + LOGIN_FLOW_MS,
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: this.settings.scopes,
      response_type: 'code',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, flow };
  }

  /**
   * Finishes a sign-in from the callback's query: exchanges the code (with the PKCE verifier) and verifies the
   * ID token. Throws SsoFailure when the provider or its tokens refuse the sign-in, SsoUnavailable when the
   * provider cannot be reached.
   */
  async finish(flow: LoginFlow, query: URLSearchParams): Promise<SsoIdentity> {
    const config = await this.configuration();
    const currentUrl = new URL(flow.redirectUri);
    for (const [name, value] of query) currentUrl.searchParams.append(name, value);
    try {
      const tokens = await client.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims) throw new SsoFailure('the provider answered without an ID token');
      checkIssuedAt(claims.iat, flow.expiresAt - LOGIN_FLOW_MS, this.now());
      let info: Record<string, unknown> = claims;
      // Some providers put the groups only in the userinfo answer (scope claims with an access token).
      if (claims.groups === undefined && config.serverMetadata().userinfo_endpoint) {
        info = { ...(await client.fetchUserInfo(config, tokens.access_token, claims.sub)), ...claims };
      }
      return identityOf(claims.sub, info);
    } catch (err) {
      throw classify(err);
    }
  }

  /** The provider's sign-out page for this client, when it has one (end_session_endpoint). */
  signOutUrl(): string | undefined {
    if (this.discovery.kind !== 'ready' || !this.discovery.config.serverMetadata().end_session_endpoint) return undefined;
    return client.buildEndSessionUrl(this.discovery.config, {}).href;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
  }

  private async discover(): Promise<void> {
    const { issuer, clientId, clientSecret } = this.settings;
    try {
      const config = await client.discovery(issuer, clientId, undefined, client.ClientSecretBasic(clientSecret), {
        timeout: REQUEST_TIMEOUT_S,
        ...(issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {}),
      });
      client.enableNonRepudiationChecks(config); // the ID token's signature is checked against the issuer's JWKS
      this.discovery = { kind: 'ready', config };
      this.retryMs = this.options.retryMs ?? 5_000;
      this.logger.info('single sign-on ready', { issuer: this.issuer, org: this.org });
    } catch (err) {
      const error = `${this.issuer} could not be discovered: ${describe(err)}`;
      this.discovery = { kind: 'unavailable', error, at: this.now() };
      this.logger.error('single sign-on is unavailable; password sign-in works', {
        error,
        retryInSeconds: Math.round(this.retryMs / 1000),
      });
      if (!this.closed) {
        this.retryTimer = setTimeout(() => {
          if (this.discovery.kind === 'unavailable') this.discovery = { kind: 'discovering', done: this.discover() };
        }, this.retryMs);
        this.retryTimer.unref();
        this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
      }
    }
  }
}

function orgProblem(settings: OidcSettings, organisations: readonly string[]): string | undefined {
  if (settings.org !== undefined) {
    return organisations.includes(settings.org)
      ? undefined
      : `FLAGOPS_OIDC_ORG names the organisation ${JSON.stringify(settings.org)}, which does not exist (there are: ${organisations.join(', ')})`;
  }
  if (organisations.length === 1) return undefined;
  return `FLAGOPS_OIDC_ORG must name the organisation people sign in to: there are ${organisations.length} (${organisations.join(', ')})`;
}

/**
 * openid-client checks only that `iat` is there. A token issued in the future, or before this sign-in started,
 * was not issued for it: refused, allowing for clock skew.
 */
function checkIssuedAt(iat: number, startedAt: number, now: number): void {
  const issuedAt = iat * 1000;
  if (issuedAt > now + IAT_TOLERANCE_MS) throw new SsoFailure(`the ID token's "iat" (${iat}) is in the future`);
  if (issuedAt < startedAt - IAT_TOLERANCE_MS) throw new SsoFailure(`the ID token's "iat" (${iat}) is before the sign-in started`);
}

function identityOf(subject: string, claims: Record<string, unknown>): SsoIdentity {
  // Claims name the author of the person's commits: one line of printable text, or absent.
  const text = (value: unknown) => (typeof value === 'string' && oneLine(value) !== '' ? oneLine(value) : undefined);
  // An address the provider says it did not verify could name anybody; the audit trail must not show it.
  // Some providers send the claim as a string (userinfo answers especially).
  const unverified =
    claims.email_verified === false || (typeof claims.email_verified === 'string' && claims.email_verified.toLowerCase() === 'false');
  const email = unverified ? undefined : text(claims.email);
  const username = text(claims.preferred_username);
  const raw = claims.groups;
  const groups = Array.isArray(raw) ? raw.filter((g): g is string => typeof g === 'string') : typeof raw === 'string' ? [raw] : [];
  return { subject, groups, ...(email ? { email } : {}), ...(username ? { username } : {}) };
}

/** A refusal of the sign-in (SsoFailure) or the provider out of reach (SsoUnavailable); anything else as is. */
function classify(err: unknown): Error {
  if (err instanceof SsoFailure || err instanceof SsoUnavailable) return err;
  if (err instanceof client.ResponseBodyError && err.error === 'invalid_grant') return new SsoCodeRefused(describe(err));
  if (err instanceof client.ClientError || err instanceof client.ResponseBodyError || err instanceof client.AuthorizationResponseError) {
    return new SsoFailure(describe(err));
  }
  if (err instanceof client.WWWAuthenticateChallengeError) return new SsoFailure(describe(err));
  if (isUnreachable(err)) return new SsoUnavailable(`the provider could not be reached: ${describe(err)}`);
  return err instanceof Error ? err : new Error(String(err));
}

function isUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return err.message === 'fetch failed' || err.name === 'TimeoutError' || err.name === 'AbortError';
}

/** An error and its causes in one line (openid-client wraps the precise reason in `cause`). */
function describe(err: unknown): string {
  const parts: string[] = [];
  let at: unknown = err;
  while (at instanceof Error && parts.length < 4) {
    const extra =
      at instanceof client.ResponseBodyError || at instanceof client.AuthorizationResponseError
        ? ` (${at.error_description ?? at.error})`
        : '';
    parts.push(`${at.message}${extra}`);
    at = at.cause;
  }
  if (parts.length === 0) parts.push(String(err));
  return [...new Set(parts)].join(': ');
}
