import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { FlagopsError } from '../../errors/kinds.js';
import { createLimiter } from '../../storage/git/limiter.js';

/**
 * scrypt cost. N = 2^15, r = 8 needs 32 MiB and ~50–100 ms per check: people choose passwords, so a copy
 * of users.json must make every guess expensive (unlike API keys, which are random and use a fast HMAC).
 */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

export const DEFAULT_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 1 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Node refuses scrypt above `maxmem` (default 32 MiB); 128·N·r of the default cost sits exactly on it. */
const MAX_MEMORY = 256 * 1024 * 1024;
/** A tampered or future file must not make one sign-in burn minutes of CPU. */
const MAX_N = 2 ** 20;

/**
 * scrypt runs at most this many at once, in the whole process: each holds 128·N·r bytes (32 MiB at the default
 * cost), so a burst of sign-ins must queue rather than add up to hundreds of MiB.
 */
export const MAX_CONCURRENT_HASHES = 2;
/** Beyond this many waiting, a password check is refused (503 with Retry-After) instead of queued. */
export const MAX_WAITING_HASHES = 32;

const hashing = createLimiter(MAX_CONCURRENT_HASHES, {
  maxWaiting: MAX_WAITING_HASHES,
  refuse: () => new FlagopsError('unavailable', 'too many password checks at once; try again in a moment', { retryAfterSeconds: 1 }),
});

/** How many password hashes run and wait now. */
export function hashingLoad(): { running: number; waiting: number } {
  return { running: hashing.running, waiting: hashing.waiting };
}

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  return hashing(() => deriveNow(password, salt, cost));
}

function deriveNow(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // NFC: the same password typed on two systems can arrive as different code point sequences.
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, { N: cost.N, r: cost.r, p: cost.p, maxmem: MAX_MEMORY }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** `scrypt$N$r$p$<salt base64>$<hash base64>`: the cost travels with the hash, so it can be raised later. */
export async function hashPassword(password: string, cost: ScryptCost = DEFAULT_COST, salt = randomBytes(SALT_BYTES)): Promise<string> {
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$');
}

interface ParsedHash {
  cost: ScryptCost;
  salt: Buffer;
  key: Buffer;
}

function parseHash(stored: string): ParsedHash | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const powerOfTwo = Number.isInteger(N) && N > 1 && (N & (N - 1)) === 0;
  if (!powerOfTwo || N > MAX_N || !Number.isInteger(r) || r < 1 || r > 32 || !Number.isInteger(p) || p < 1 || p > 16) return null;
  const salt = Buffer.from(parts[4], 'base64');
  const key = Buffer.from(parts[5], 'base64');
  if (salt.length < 8 || key.length !== KEY_BYTES) return null;
  return { cost: { N, r, p }, salt, key };
}

/** Whether `password` matches `stored`; a hash in a form we do not know never matches. Constant-time compare. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.cost);
  return timingSafeEqual(key, parsed.key);
}

/** Whether `stored` is a hash this module can check (used to validate users.json on load). */
export function isPasswordHash(stored: unknown): stored is string {
  return typeof stored === 'string' && parseHash(stored) !== null;
}
