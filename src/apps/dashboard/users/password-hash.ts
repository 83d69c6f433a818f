import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { FlagopsError } from '../../../foundations/errors/kinds.js';
import {
  formatPasswordHash,
  isPasswordHash,
  PASSWORD_KEY_BYTES,
  parsePasswordHash,
  type ScryptCost,
} from '../../../foundations/state/index.js';
import { createLimiter } from '../../../foundations/storage/git/limiter.js';

export { isPasswordHash, type ScryptCost };

/**
 * scrypt cost. N = 2^15, r = 8 needs 32 MiB and ~50–100 ms per check: people choose passwords, so a copy
 * of users.json must make every guess expensive (unlike API keys, which are random and use a fast HMAC).
 */
export const DEFAULT_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 1 };
const SALT_BYTES = 16;
/** Node refuses scrypt above `maxmem` (default 32 MiB); 128·N·r of the default cost sits exactly on it. */
const MAX_MEMORY = 256 * 1024 * 1024;

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
    scrypt(password.normalize('NFC'), salt, PASSWORD_KEY_BYTES, { N: cost.N, r: cost.r, p: cost.p, maxmem: MAX_MEMORY }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** `scrypt$N$r$p$<salt base64>$<hash base64>`: the cost travels with the hash, so it can be raised later. */
export async function hashPassword(password: string, cost: ScryptCost = DEFAULT_COST, salt = randomBytes(SALT_BYTES)): Promise<string> {
  return formatPasswordHash(cost, salt, await derive(password, salt, cost));
}

/** Whether `password` matches `stored`; a hash in a form we do not know never matches. Constant-time compare. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parsePasswordHash(stored);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.cost);
  return timingSafeEqual(key, parsed.key);
}
