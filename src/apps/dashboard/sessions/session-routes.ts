import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AuthGuard } from '../../../foundations/auth/auth-guard.js';
import { grantsOf } from '../../../foundations/auth/permissions.js';
import type { Principal } from '../../../foundations/auth/principal.js';
import { formatRole, roleOf, scopeOfRole } from '../../../foundations/auth/roles.js';
import { InvalidInputError, UnauthorizedError } from '../../../foundations/errors/kinds.js';
import { readJsonBody } from '../../../foundations/http/read-json-body.js';
import { usernameKey } from '../../../foundations/state/index.js';
import type { PrincipalResolver } from '../../control-plane/principal-resolvers.js';
import { OIDC_LOGIN_PATH } from '../oidc/oidc-routes.js';
import type { SsoHealth } from '../oidc/sso-provider.js';
import type { UserService, UserView } from '../users/user-service.js';
import {
  changesState,
  checkCsrf,
  clearedSessionCookies,
  csrfTokenOf,
  readSessionToken,
  requireSameOrigin,
  sessionCookie,
} from './session-cookie.js';
import type { SessionRecord, SessionService } from './session-service.js';
import { isOidcSession, userOfSession } from './session-user.js';

export interface SessionDeps {
  sessions: SessionService;
  users: UserService;
}

export interface CurrentSession {
  token: string;
  session: SessionRecord;
  user: UserView;
}

export type SessionLookup = { kind: 'none' } | { kind: 'invalid'; token: string } | ({ kind: 'live' } & CurrentSession);

/**
 * What the request's cookie says: no cookie, a cookie that no longer signs anyone in, or a live session. A
 * request that changes something has its session checked against the store, so a sign-out through another
 * control plane stops it at once.
 */
export async function lookUpSession(ctx: Context, deps: SessionDeps): Promise<SessionLookup> {
  const token = readSessionToken(ctx.get('cookie'));
  return token === null ? { kind: 'none' } : sessionOfToken(token, deps, { confirm: changesState(ctx.method) });
}

/** What a session token stands for now (a live event stream checks its token again at every heartbeat). */
export async function sessionOfToken(token: string, deps: SessionDeps, options: { confirm?: boolean } = {}): Promise<SessionLookup> {
  const session = await deps.sessions.resolve(token, options);
  // A removed user's sessions are revoked too; checking here also covers a user removed by hand from the file.
  const user = session && userOfSession(session, deps.users);
  if (!session || !user || user.org !== session.org) return { kind: 'invalid', token };
  return { kind: 'live', token, session, user };
}

/**
 * The principal of a session: acts as its person. `prefix` carries the username, the one non-secret identifier a
 * session has; the actor (src/apps/control-plane/http/actor.ts) makes it the commit author's address.
 */
export function sessionPrincipal({ session, user }: CurrentSession): Principal {
  const role = roleOf(session.role);
  const principal: Principal = {
    org: session.org,
    kind: 'session',
    keyId: session.id,
    prefix: user.username,
    name: user.name,
    role: role.name,
    roleText: formatRole(role),
  };
  const scope = scopeOfRole(role);
  if (scope !== undefined) principal.scope = scope;
  return Object.freeze(principal);
}

/**
 * The session cookie as a control-plane credential (it may do what an admin key may, except manage keys).
 * Plugged in after the bearer resolver, so it is consulted only for requests without Authorization. A
 * state-changing request must pass the CSRF checks before anything reads its body or acts on it.
 */
export function sessionResolver(deps: SessionDeps): PrincipalResolver {
  return async (ctx) => {
    const found = await lookUpSession(ctx, deps);
    if (found.kind === 'none') return null;
    if (found.kind === 'invalid') throw new UnauthorizedError('the session has expired or was signed out; sign in again');
    checkCsrf(ctx, found.token);
    return sessionPrincipal(found);
  };
}

export const SESSION_PATH = '/dashboard/api/session';

export const SIGN_IN_OPTIONS_PATH = '/dashboard/api/sign-in-options';

/** Single sign-on as the sign-in page and sign-out see it. */
export interface SignInSso {
  /** What the button names: the provider's host. */
  label: string;
  health(): SsoHealth;
  /** The provider's own sign-out page, when it has one. */
  signOutUrl(): string | undefined;
}

export interface SessionRouteDeps extends SessionDeps {
  /** Throttles failed sign-ins per address and per address and username, logs and counts them. */
  guard: AuthGuard;
  /** Single sign-on, when FLAGOPS_OIDC_* set it up. */
  sso?: SignInSso;
}

/** What the page learns about its session: who, until when, and the CSRF token to send with changes. */
function sessionBody({ token, session, user }: CurrentSession, idleMs: number) {
  const principal = sessionPrincipal({ token, session, user });
  return {
    user: { id: user.id, username: user.username, name: user.name, org: user.org },
    // The page offers only what the role may do (the API refuses the rest anyway).
    role: principal.roleText,
    ...grantsOf(principal),
    signedInWith: isOidcSession(session) ? 'oidc' : 'password',
    csrfToken: csrfTokenOf(token),
    expiresAt: session.expiresAt,
    idleTimeoutSeconds: Math.floor(idleMs / 1000),
  };
}

function signInInput(body: unknown): { username: string; password: string } {
  const input = (body ?? {}) as Record<string, unknown>;
  if (typeof body !== 'object' || Array.isArray(body)) throw new InvalidInputError('the body must be a JSON object');
  if (typeof input.username !== 'string' || input.username === '') throw new InvalidInputError('username: required', 'username');
  if (typeof input.password !== 'string' || input.password === '') throw new InvalidInputError('password: required', 'password');
  return { username: input.username, password: input.password };
}

function clearCookies(ctx: Context): void {
  ctx.set('Set-Cookie', clearedSessionCookies(ctx.secure));
}

/** Sign in (POST), who am I (GET), sign out (DELETE), at /dashboard/api/session. */
export function registerSessionRoutes(router: Router, deps: SessionRouteDeps): void {
  router.post(SESSION_PATH, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    // Login CSRF: another site must not sign a visitor into an account of its choosing.
    requireSameOrigin(ctx);
    const { username, password } = signInInput(await readJsonBody(ctx.req));
    // Reserved before the password is checked, so concurrent guesses cannot all pass a throttle still counting.
    const user = await deps.guard.checkPassword(
      ctx.req,
      usernameKey(username),
      () => deps.users.verify(username, password),
      (name) => deps.users.hasUsername(name),
    );
    if (!user) throw new UnauthorizedError('unknown username or wrong password');
    const previous = readSessionToken(ctx.get('cookie'));
    if (previous !== null) await deps.sessions.revoke(previous);
    const { token, session } = await deps.sessions.create(user);
    const maxAgeSeconds = (Date.parse(session.expiresAt) - Date.parse(session.createdAt)) / 1000;
    ctx.set('Set-Cookie', sessionCookie(token, { secure: ctx.secure, maxAgeSeconds }));
    ctx.body = sessionBody({ token, session, user }, deps.sessions.idleMs);
  });

  router.get(SESSION_PATH, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const found = await lookUpSession(ctx, deps);
    if (found.kind !== 'live') {
      if (found.kind === 'invalid') clearCookies(ctx);
      throw new UnauthorizedError(found.kind === 'none' ? 'not signed in' : 'the session has expired or was signed out; sign in again');
    }
    ctx.body = sessionBody(found, deps.sessions.idleMs);
  });

  router.delete(SESSION_PATH, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const found = await lookUpSession(ctx, deps);
    let providerSignOut: string | undefined;
    if (found.kind === 'live') {
      // Without this a page of another origin could sign people out at will.
      checkCsrf(ctx, found.token);
      await deps.sessions.revoke(found.token);
      if (isOidcSession(found.session)) providerSignOut = deps.sso?.signOutUrl();
    }
    clearCookies(ctx);
    // The provider's session lives on: the page links to the provider's sign-out, for shared computers.
    ctx.body = { signedOut: true, ...(providerSignOut ? { providerSignOutUrl: providerSignOut } : {}) };
  });

  /** How the sign-in page offers to sign in: the password form always, single sign-on when it is set up. */
  router.get(SIGN_IN_OPTIONS_PATH, (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const sso = deps.sso;
    const state = sso?.health().state;
    ctx.body = {
      password: true,
      sso: sso ? { label: sso.label, loginUrl: OIDC_LOGIN_PATH, available: state === 'ready' || state === 'discovering' } : null,
    };
  });
}
