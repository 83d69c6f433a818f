import type Router from '@koa/router';
import type { Context } from 'koa';
import { InvalidInputError, UnauthorizedError } from '../../errors/kinds.js';
import { readJsonBody } from '../../http/read-json-body.js';
import { checkCsrf, requireSameOrigin } from '../http/csrf.js';
import { clientAddress, isSecureRequest, type OriginSettings } from '../http/request-origin.js';
import { clearedSessionCookies, readSessionToken, sessionCookie } from '../http/session-cookie.js';
import { usernameKey } from '../users/user-input.js';
import { type CurrentSession, lookUpSession, type SessionDeps } from './current-session.js';
import { csrfTokenOf } from './session-token.js';
import type { SignInThrottle } from './sign-in-throttle.js';

export const SESSION_PATH = '/dashboard/api/session';

export interface SessionRouteDeps extends SessionDeps {
  origin: OriginSettings;
  throttle: SignInThrottle;
}

/** What the page learns about its session: who, until when, and the CSRF token to send with changes. */
function sessionBody({ token, session, user }: CurrentSession, idleMs: number) {
  return {
    user: { id: user.id, username: user.username, name: user.name, org: user.org },
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

function clearCookies(ctx: Context, deps: SessionRouteDeps): void {
  ctx.set('Set-Cookie', clearedSessionCookies(isSecureRequest(ctx, deps.origin)));
}

/** Sign in (POST), who am I (GET), sign out (DELETE), at /dashboard/api/session. */
export function registerSessionRoutes(router: Router, deps: SessionRouteDeps): void {
  router.post(SESSION_PATH, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    // Login CSRF: another site must not sign a visitor into an account of its choosing.
    requireSameOrigin(ctx, deps.origin);
    const { username, password } = signInInput(await readJsonBody(ctx.req));
    const throttleKey = `${clientAddress(ctx, deps.origin)}\n${usernameKey(username)}`;
    const waitMs = deps.throttle.retryAfterMs(throttleKey);
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000);
      ctx.status = 429;
      ctx.set('Retry-After', String(seconds));
      ctx.body = { error: { code: 'rate_limited', message: `too many failed sign-ins; try again in ${seconds} s` } };
      return;
    }
    const user = await deps.users.verify(username, password);
    if (!user) {
      deps.throttle.failed(throttleKey);
      throw new UnauthorizedError('unknown username or wrong password');
    }
    deps.throttle.succeeded(throttleKey);
    const previous = readSessionToken(ctx.get('cookie'));
    if (previous !== null) await deps.sessions.revoke(previous);
    const { token, session } = await deps.sessions.create(user);
    const maxAgeSeconds = (Date.parse(session.expiresAt) - Date.parse(session.createdAt)) / 1000;
    ctx.set('Set-Cookie', sessionCookie(token, { secure: isSecureRequest(ctx, deps.origin), maxAgeSeconds }));
    ctx.body = sessionBody({ token, session, user }, deps.sessions.idleMs);
  });

  router.get(SESSION_PATH, (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const found = lookUpSession(ctx, deps);
    if (found.kind !== 'live') {
      if (found.kind === 'invalid') clearCookies(ctx, deps);
      throw new UnauthorizedError(found.kind === 'none' ? 'not signed in' : 'the session has expired or was signed out; sign in again');
    }
    ctx.body = sessionBody(found, deps.sessions.idleMs);
  });

  router.delete(SESSION_PATH, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const found = lookUpSession(ctx, deps);
    if (found.kind === 'live') {
      // Without this a page of another origin could sign people out at will.
      checkCsrf(ctx, found.token, deps.origin);
      await deps.sessions.revoke(found.token);
    }
    clearCookies(ctx, deps);
    ctx.body = { signedOut: true };
  });
}
