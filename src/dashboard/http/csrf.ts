import type { Context } from 'koa';
import { ForbiddenError } from '../../errors/kinds.js';
import { csrfTokenOf, sameSecret } from '../sessions/session-token.js';

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
