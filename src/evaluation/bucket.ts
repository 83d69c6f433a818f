import { murmur3Absorb, murmur3Resume } from './murmur3.js';

/**
 * Contract §4: bucket = (murmur3_32("<flagKey>/<userId>") mod 10000) / 100, in [0, 100) with two decimals.
 * Division by 100 (not multiplication by 0.01) is correctly rounded, so 1234 gives exactly the double that
 * JSON prints as 12.34.
 */
export function bucket(flagKey: string, userId: string): number {
  const s = murmur3Absorb(flagKey + '/');
  return resumeBucket(s.h, s.k, s.n, s.len, userId);
}

/** The bucket of `userId` after a `"<flagKey>/"` prefix absorbed once per snapshot into (h, k, n, len). */
export function resumeBucket(h: number, k: number, n: number, len: number, userId: string): number {
  return (murmur3Resume(h, k, n, len, userId) % 10000) / 100;
}
