import { describe, expect, it } from 'vitest';
import { SignInThrottle } from '../../src/dashboard/sessions/sign-in-throttle.js';

function throttle() {
  let now = 0;
  const t = new SignInThrottle({ now: () => now, freeFailures: 3, baseDelayMs: 1000, maxDelayMs: 30_000, forgetAfterMs: 15 * 60_000, maxEntries: 3 });
  return { t, advance: (ms: number) => (now += ms) };
}

describe('sign-in throttling', () => {
  it('allows three failures, then makes each further attempt wait 1 s, 2 s, 4 s … up to 30 s', () => {
    const { t } = throttle();
    t.failed('k');
    t.failed('k');
    expect(t.retryAfterMs('k')).toBe(0);
    t.failed('k');
    expect(t.retryAfterMs('k')).toBe(1000);
    t.failed('k');
    expect(t.retryAfterMs('k')).toBe(2000);
    t.failed('k');
    expect(t.retryAfterMs('k')).toBe(4000);
    for (let i = 0; i < 10; i++) t.failed('k');
    expect(t.retryAfterMs('k')).toBe(30_000);
  });

  it('lets the wait run out, and a success forgets the failures', () => {
    const { t, advance } = throttle();
    for (let i = 0; i < 4; i++) t.failed('k');
    advance(1500);
    expect(t.retryAfterMs('k')).toBe(500);
    advance(500);
    expect(t.retryAfterMs('k')).toBe(0);
    t.succeeded('k');
    t.failed('k');
    expect(t.retryAfterMs('k')).toBe(0);
  });

  it('forgets failures after 15 quiet minutes', () => {
    const { t, advance } = throttle();
    for (let i = 0; i < 3; i++) t.failed('k');
    advance(15 * 60_000);
    t.failed('k');
    expect(t.retryAfterMs('k')).toBe(0);
  });

  it('keys are independent, and memory stays bounded (oldest forgotten first)', () => {
    const { t } = throttle();
    for (const key of ['a', 'b', 'c', 'd']) for (let i = 0; i < 3; i++) t.failed(key);
    expect(t.retryAfterMs('a')).toBe(0); // dropped: only three keys are kept
    expect(t.retryAfterMs('d')).toBe(1000);
    expect(t.retryAfterMs('b')).toBe(1000);
  });
});
