import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AuthGuard } from '../../auth/auth-guard.js';
import { InvalidInputError, UnauthorizedError } from '../../errors/kinds.js';
import { readJsonBody } from '../../http/read-json-body.js';
import { checkCsrf, requireSameOrigin } from '../http/csrf.js';
import { clearedSessionCookies, readSessionToken, sessionCookie } from '../http/session-cookie.js';
import { usernameKey } from '../users/user-input.js';
import { type CurrentSession, lookUpSession, type SessionDeps } from './current-session.js';
import { csrfTokenOf } from './session-token.js';

export const SESSION_PATH = '/dashboard/api/session';

export interface SessionRouteDeps extends SessionDeps {
  /** Throttles failed sign-ins per address and per address and username, logs and counts them. */
  guard: AuthGuard;
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

  router.get(SESSION_PATH, (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const found = lookUpSession(ctx, deps);
    if (found.kind !== 'live') {
      if (found.kind === 'invalid') clearCookies(ctx);
      throw new UnauthorizedError(found.kind === 'none' ? 'not signed in' : 'the session has expired or was signed out; sign in again');
    }
    ctx.body = sessionBody(found, deps.sessions.idleMs);
  });

  router.delete(SESSION_PATH, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const found = lookUpSession(ctx, deps);
    if (found.kind === 'live') {
      // Without this a page of another origin could sign people out at will.
      checkCsrf(ctx, found.token);
      await deps.sessions.revoke(found.token);
    }
    clearCookies(ctx);
    ctx.body = { signedOut: true };
  });
}
