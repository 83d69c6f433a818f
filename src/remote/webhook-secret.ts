import { createHash, timingSafeEqual } from 'node:crypto';

/** Constant-time comparison of a presented webhook secret: hashing first makes the lengths equal too. */
export function secretMatches(presented: string | undefined, secret: string): boolean {
  if (!presented) return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}
