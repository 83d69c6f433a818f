/**
 * How a password is stored: `scrypt$N$r$p$<salt base64>$<hash base64>`. The cost travels with the hash, so it
 * can be raised later; src/apps/dashboard/users/password-hash.ts makes and checks them.
 */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

export interface ParsedPasswordHash {
  cost: ScryptCost;
  salt: Buffer;
  key: Buffer;
}

export const PASSWORD_KEY_BYTES = 32;
/** A tampered or future file must not make one sign-in burn minutes of CPU. */
const MAX_N = 2 ** 20;

export function formatPasswordHash(cost: ScryptCost, salt: Buffer, key: Buffer): string {
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** The parts of a stored hash, or null when it is not one flagops can check. */
export function parsePasswordHash(stored: string): ParsedPasswordHash | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const powerOfTwo = Number.isInteger(N) && N > 1 && (N & (N - 1)) === 0;
  if (!powerOfTwo || N > MAX_N || !Number.isInteger(r) || r < 1 || r > 32 || !Number.isInteger(p) || p < 1 || p > 16) return null;
  const salt = Buffer.from(parts[4], 'base64');
  const key = Buffer.from(parts[5], 'base64');
  if (salt.length < 8 || key.length !== PASSWORD_KEY_BYTES) return null;
  return { cost: { N, r, p }, salt, key };
}

/** Whether `stored` is a hash flagops can check (users.json is checked with it when read). */
export function isPasswordHash(stored: unknown): stored is string {
  return typeof stored === 'string' && parsePasswordHash(stored) !== null;
}
