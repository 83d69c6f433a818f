import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AuthGuard, SsoVerdict } from '../../../foundations/auth/auth-guard.js';
import { roleOfGroups } from '../../../foundations/auth/group-roles.js';
import type { Role } from '../../../foundations/auth/roles.js';
import { RateLimitedError } from '../../../foundations/errors/kinds.js';
import type { Logger } from '../../../foundations/log/logger.js';
import { ownOrigin, readSessionToken, sessionCookie } from '../sessions/session-cookie.js';
import type { SessionService } from '../sessions/session-service.js';
import { OIDC_USER } from '../sessions/session-user.js';
import { clearedLoginFlowCookie, type LoginFlow, type LoginFlowSealer, loginFlowCookie, readLoginFlowCookie } from './login-flow-cookie.js';
import { type PageLine, sendSsoPage } from './sso-pages.js';
import { SsoCodeRefused, SsoFailure, type SsoIdentity, type SsoProvider, SsoUnavailable } from './sso-provider.js';

export const OIDC_LOGIN_PATH = '/auth/oidc/login';
export const OIDC_CALLBACK_PATH = '/auth/oidc/callback';

export interface OidcRouteDeps {
  sso: SsoProvider;
  sealer: LoginFlowSealer;
  sessions: SessionService;
  /** FLAGOPS_OIDC_ROLES. */
  groupRoles: ReadonlyMap<string, Role>;
  /** Throttles, logs and counts refused sign-ins like wrong passwords. */
  guard: AuthGuard;
  logger: Logger;
  now?: () => number;
}

/** A refused sign-in: what the log says, and the page the person sees. */
interface Refusal {
  status: number;
  title: string;
  lines: PageLine[];
}

const AGAIN: PageLine = { text: 'Back to the sign-in page', href: '/' };

const EXPIRED: Refusal = {
  status: 400,
  title: 'Sign-in expired',
  lines: ['This sign-in was already used, or took more than 10 minutes. Start again.', AGAIN],
};

/** Callbacks already used (state → until when it would have been valid), at most this many remembered. */
const MAX_SPENT = 100_000;

/**
 * GET /auth/oidc/login starts a sign-in with the OpenID Connect provider; the provider sends the browser back to
 * GET /auth/oidc/callback, which signs the person in with a session cookie like a password sign-in, with the role
 * their groups map to (FLAGOPS_OIDC_ROLES), or refuses with a page that says why.
 */
export function registerOidcRoutes(router: Router, deps: OidcRouteDeps): void {
  const now = deps.now ?? Date.now;
  const spent = new Map<string, number>();

  router.get(OIDC_LOGIN_PATH, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    let begun: { url: string; flow: LoginFlow };
    try {
      // The origin the browser sees (behind trusted proxies, their X-Forwarded-Proto and -Host): the redirect URI.
      begun = await deps.sso.begin(`${ownOrigin(ctx)}${OIDC_CALLBACK_PATH}`);
    } catch (err) {
      if (!(err instanceof SsoUnavailable)) throw err;
      return sendSsoPage(ctx, 503, 'Single sign-on is unavailable', [
        `Single sign-on cannot be used now: ${err.message}.`,
        'Sign in with a username and password, or try again later.',
        AGAIN,
      ]);
    }
    ctx.set('Set-Cookie', loginFlowCookie(deps.sealer.seal(begun.flow), ctx.secure));
    ctx.redirect(begun.url);
  });

  router.get(OIDC_CALLBACK_PATH, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const clearFlow = clearedLoginFlowCookie(ctx.secure);
    /**
     * Whether the answer is the one of this browser's sign-in, which it ends (used or refused). Another answer
     * (stale, forged, even sent by another site's link) leaves the sign-in in progress alone.
     */
    let ownAnswer = false;
    let refusal: Refusal | undefined;
    const refuse = (reason: string, page: Refusal, username?: string): SsoVerdict<never> => {
      refusal = page;
      return { refused: reason, ...(username ? { username } : {}) };
    };
    let verdict: SsoVerdict<{ identity: SsoIdentity; role: string; groups: string[] }>;
    try {
      verdict = await deps.guard.checkSso(ctx.req, async () => {
        const flow = flowOf(ctx, deps.sealer);
        const state = ctx.query.state;
        if (flow === null || typeof state !== 'string' || state !== flow.state) {
          return refuse(
            flow === null ? 'no sign-in was started in this browser' : 'the state does not match the sign-in this browser started',
            {
              status: 400,
              title: 'Sign-in not recognised',
              lines: ['This answer from the sign-in provider does not belong to a sign-in started in this browser.', AGAIN],
            },
          );
        }
        ownAnswer = true;
        if (flow.expiresAt <= now() || spent.has(state)) {
          return refuse(spent.has(state) ? 'the state was already used (a replayed callback)' : 'the sign-in took too long', EXPIRED);
        }
        remember(spent, state, flow.expiresAt, now());
        const error = ctx.query.error;
        if (typeof error === 'string') {
          const said = typeof ctx.query.error_description === 'string' ? ctx.query.error_description : error;
          return refuse(`the provider refused: ${said}`, {
            status: 401,
            title: 'Sign-in refused',
            lines: [`The sign-in provider refused the sign-in: ${said}.`, AGAIN],
          });
        }
        let identity: SsoIdentity;
        try {
          identity = await deps.sso.finish(flow, new URLSearchParams(ctx.querystring));
        } catch (err) {
          if (!(err instanceof SsoFailure)) throw err;
          // Used states are remembered per process: one used before a restart or elsewhere is refused by the provider.
          if (err instanceof SsoCodeRefused)
            return refuse(`the provider refused the code, already used or expired: ${err.message}`, EXPIRED);
          return refuse(err.message, {
            status: 401,
            title: 'Sign-in failed',
            lines: ['The answer of the sign-in provider could not be verified, so nobody was signed in.', AGAIN],
          });
        }
        const who = identity.email ?? identity.username ?? identity.subject;
        const mapped = roleOfGroups(deps.groupRoles, identity.groups);
        if (mapped === null) {
          const groups = identity.groups.length === 0 ? 'the provider sent no groups' : `your groups: ${identity.groups.join(', ')}`;
          return refuse(
            `no mapped group (${groups})`,
            {
              status: 403,
              title: 'No access to flagops',
              lines: [
                `You signed in as ${who}, but none of your groups has a role in flagops (${groups}).`,
                'An administrator gives a group a role with the FLAGOPS_OIDC_ROLES setting. You are not signed in to flagops.',
                AGAIN,
              ],
            },
            who,
          );
        }
        return { signedIn: { identity, ...mapped } };
      });
    } catch (err) {
      if (ownAnswer) ctx.set('Set-Cookie', clearFlow);
      if (err instanceof RateLimitedError) {
        const seconds = Number(err.details?.retryAfterSeconds ?? 1);
        ctx.set('Retry-After', String(seconds));
        return sendSsoPage(ctx, 429, 'Too many failed sign-ins', [
          `Too many failed sign-ins from this address. Try again in ${seconds} s.`,
          AGAIN,
        ]);
      }
      if (err instanceof SsoUnavailable) {
        deps.logger.warn('single sign-on failed: the provider could not be reached', { error: err.message });
        return sendSsoPage(ctx, 503, 'Single sign-on is unavailable', [`${err.message}.`, 'Try again later.', AGAIN]);
      }
      throw err;
    }
    if ('refused' in verdict) {
      if (ownAnswer) ctx.set('Set-Cookie', clearFlow);
      const page = refusal as Refusal;
      return sendSsoPage(ctx, page.status, page.title, page.lines);
    }
    const { identity, role, groups } = verdict.signedIn;
    const previous = readSessionToken(ctx.get('cookie'));
    if (previous !== null) await deps.sessions.revoke(previous);
    const { token, session } = await deps.sessions.create(
      { id: `${OIDC_USER}${identity.subject}`, org: deps.sso.org },
      { role, ...(identity.email ? { email: identity.email } : {}), ...(identity.username ? { username: identity.username } : {}) },
    );
    deps.logger.info('signed in with openid connect', { user: identity.email ?? identity.username ?? identity.subject, role, groups });
    const maxAgeSeconds = (Date.parse(session.expiresAt) - Date.parse(session.createdAt)) / 1000;
    ctx.set('Set-Cookie', [sessionCookie(token, { secure: ctx.secure, maxAgeSeconds }), clearFlow]);
    ctx.status = 303;
    ctx.redirect('/');
  });
}

function flowOf(ctx: Context, sealer: LoginFlowSealer): LoginFlow | null {
  const sealed = readLoginFlowCookie(ctx.get('cookie'));
  return sealed === null ? null : sealer.unseal(sealed);
}

/** Marks a callback's state used until its flow would have expired; forgets the expired, and the oldest beyond the bound. */
function remember(spent: Map<string, number>, state: string, until: number, now: number): void {
  for (const [old, expiresAt] of spent) {
    if (expiresAt > now && spent.size < MAX_SPENT) break; // oldest first: the rest are younger
    spent.delete(old);
  }
  spent.set(state, until);
}
