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
  let plain: string | null = null;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (value === '') continue;
    if (name === SECURE_COOKIE) return value;
    if (name === PLAIN_COOKIE) plain ??= value;
  }
  return plain;
}
