import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

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
