import { describe, expect, it } from 'vitest';
import { backoffMs, signature } from '../../src/webhooks/webhook-sender.js';

describe('backoffMs', () => {
  it('doubles with each failed attempt up to the cap, with jitter between half and all of the wait', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 1000, 60_000, () => 1))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffMs(3, 1000, 60_000, () => 0)).toBe(2000);
    expect(backoffMs(20, 1000, 60_000, () => 1)).toBe(60_000);
  });
});

describe('signature', () => {
  it('is sha256= and the hex HMAC-SHA256 of the body (RFC 4231 test case 2)', () => {
    expect(signature('Jefe', 'what do ya want for nothing?')).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });
});
