import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { ForbiddenError } from '../../../foundations/errors/kinds.js';

/** 32 random bytes, base64url: the cookie's value. */
export function newSessionToken(random: (size: number) => Buffer = randomBytes): string {
  return random(32).toString('base64url');
}

export function isSessionToken(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}

/** What the session file keeps of a token. */
export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The session's CSRF token, derived from the cookie's secret: the server needs to store nothing more, and a
 * page of another origin can neither read the HttpOnly cookie nor the answer that carries this token.
 */
export function csrfTokenOf(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('flagops csrf v1').digest('base64url');
}

export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * The session cookie. Over https it is `__Host-flagops_session`: browsers accept that name only with Secure,
 * Path=/ and no Domain, so no sibling subdomain can plant or shadow it.
 */
export const PLAIN_COOKIE = 'flagops_session';
export const SECURE_COOKIE = `__Host-${PLAIN_COOKIE}`;

export interface CookieOptions {
  secure: boolean;
  maxAgeSeconds: number;
}

/** `Set-Cookie` for a session: HttpOnly (no script reads it), SameSite=Strict (no other site sends it). */
export function sessionCookie(token: string, options: CookieOptions): string {
  const name = options.secure ? SECURE_COOKIE : PLAIN_COOKIE;
  const parts = [`${name}=${token}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/** `Set-Cookie` values that make the browser drop the session cookie under either name. */
export function clearedSessionCookies(secure: boolean): string[] {
  const cleared = [`${PLAIN_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`];
  if (secure) cleared.push(`${SECURE_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure`);
  return cleared;
}

/** The session token of a `Cookie` header, or null. The __Host- cookie wins when both are present. */
export function readSessionToken(cookieHeader: string): string | null {
  return readHostPrefixedCookie(cookieHeader, SECURE_COOKIE, PLAIN_COOKIE);
}

/**
 * The value of a cookie set as `secureName` (`__Host-…`, over https) or `plainName` (plain http on loopback)
 * in a `Cookie` header, or null; the __Host- one wins when both are present.
 */
export function readHostPrefixedCookie(cookieHeader: string, secureName: string, plainName: string): string | null {
  let plain: string | null = null;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (value === '') continue;
    if (name === secureName) return value;
    if (name === plainName) plain ??= value;
  }
  return plain;
}

/** The header the dashboard sends its session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function changesState(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

/**
 * The origin the browser sees for this server, what a same-origin request carries in its Origin header. Behind
 * trusted proxies (FLAGOPS_TRUST_PROXY, Koa's app.proxy) the scheme and host are X-Forwarded-Proto and
 * X-Forwarded-Host; otherwise the socket's and the Host header.
 */
export function ownOrigin(ctx: Context): string {
  return `${ctx.protocol}://${ctx.host.toLowerCase()}`;
}

/**
 * Refuses a request that a browser marks as coming from another origin. Sec-Fetch-Site and Origin are set by
 * the browser and cannot be forged by a page; SameSite=Strict alone is not enough, because another port of
 * the same host (or a sibling subdomain) is the same *site* and does get the cookie.
 */
export function requireSameOrigin(ctx: Context): void {
  const site = ctx.get('sec-fetch-site').toLowerCase();
  if (site !== '' && site !== 'same-origin') {
    throw new ForbiddenError(
      `cross-origin request refused: the dashboard accepts changes only from its own pages (Sec-Fetch-Site: ${site})`,
    );
  }
  const origin = ctx.get('origin').toLowerCase();
  if (origin !== '' && origin !== ownOrigin(ctx)) {
    throw new ForbiddenError(`cross-origin request refused: Origin ${origin} is not this dashboard's origin`);
  }
}

/**
 * Every state-changing request authenticated by the session cookie: same origin, and the session's CSRF
 * token in X-CSRF-Token, which only a page of our origin can have read.
 */
export function checkCsrf(ctx: Context, sessionToken: string): void {
  if (!changesState(ctx.method)) return;
  requireSameOrigin(ctx);
  const sent = ctx.get(CSRF_HEADER);
  if (sent === '' || !sameSecret(sent, csrfTokenOf(sessionToken))) {
    throw new ForbiddenError(`a change made with the session cookie needs the session's CSRF token in the ${CSRF_HEADER} header`);
  }
}
