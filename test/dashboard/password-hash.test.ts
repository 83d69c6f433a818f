import { describe, expect, it } from 'vitest';
import {
  DEFAULT_COST,
  hashingLoad,
  hashPassword,
  isPasswordHash,
  MAX_CONCURRENT_HASHES,
  MAX_WAITING_HASHES,
  verifyPassword,
} from '../../src/apps/dashboard/users/password-hash.js';
import type { FlagopsError } from '../../src/foundations/errors/kinds.js';
import { CHEAP_COST } from './helpers/temp-dir.js';

describe('password hashing (scrypt)', () => {
  it('verifies the password it hashed and refuses any other', async () => {
    const stored = await hashPassword('correct horse battery', CHEAP_COST);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
  });

  it('stores the cost with a random salt, so the same password hashes differently each time', async () => {
    const a = await hashPassword('same password', CHEAP_COST);
    const b = await hashPassword('same password', CHEAP_COST);
    expect(a).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('same password');
  });

  it('uses N = 2^15, r = 8 by default', async () => {
    expect(DEFAULT_COST).toEqual({ N: 32768, r: 8, p: 1 });
    expect(await hashPassword('pw', DEFAULT_COST, Buffer.alloc(16))).toMatch(/^scrypt\$32768\$8\$1\$/);
  });

  it('treats the same password in another Unicode normal form as the same password', async () => {
    const composed = 'caf\u00e9-password';
    const decomposed = 'cafe\u0301-password';
    expect(await verifyPassword(decomposed, await hashPassword(composed, CHEAP_COST))).toBe(true);
  });

  it('never matches a hash in an unknown or damaged form, nor one with an absurd cost', async () => {
    const good = await hashPassword('secret password', CHEAP_COST);
    const parts = good.split('$');
    const variants = [
      '',
      'plain',
      `bcrypt$${parts.slice(1).join('$')}`,
      [...parts.slice(0, 1), '1000', ...parts.slice(2)].join('$'),
      [...parts.slice(0, 1), String(2 ** 24), ...parts.slice(2)].join('$'),
      `${good}$x`,
    ];
    for (const stored of variants) {
      expect(isPasswordHash(stored), stored).toBe(false);
      expect(await verifyPassword('secret password', stored), stored).toBe(false);
    }
    expect(isPasswordHash(good)).toBe(true);
  });
});

describe('concurrent password hashing', () => {
  it('runs at most two scrypt at once; the rest wait their turn, and too many waiting are refused with 503', async () => {
    const stored = await hashPassword('pw-for-the-queue', CHEAP_COST);
    let peak = 0;
    const watch = setInterval(() => {
      peak = Math.max(peak, hashingLoad().running);
    }, 0);
    const checks = Array.from({ length: MAX_CONCURRENT_HASHES + MAX_WAITING_HASHES + 5 }, () =>
      verifyPassword('pw-for-the-queue', stored).then(
        (ok) => ({ ok }),
        (err: FlagopsError) => ({ code: err.code, retryAfter: err.details?.retryAfterSeconds }),
      ),
    );
    expect(hashingLoad()).toEqual({ running: MAX_CONCURRENT_HASHES, waiting: MAX_WAITING_HASHES });
    const results = await Promise.all(checks);
    clearInterval(watch);
    expect(peak).toBeLessThanOrEqual(MAX_CONCURRENT_HASHES);
    expect(results.filter((r) => 'ok' in r && r.ok)).toHaveLength(MAX_CONCURRENT_HASHES + MAX_WAITING_HASHES);
    expect(results.filter((r) => 'code' in r)).toEqual(Array(5).fill({ code: 'unavailable', retryAfter: 1 }));
    expect(hashingLoad()).toEqual({ running: 0, waiting: 0 });
  });
});
