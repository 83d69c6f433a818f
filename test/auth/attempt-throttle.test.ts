import { describe, expect, it } from 'vitest';
import { type Admission, AttemptThrottle, type ThrottleOptions } from '../../src/foundations/auth/attempt-throttle.js';

function throttle(options: ThrottleOptions = {}) {
  let now = 0;
  const t = new AttemptThrottle({
    now: () => now,
    freeFailures: 3,
    baseDelayMs: 1000,
    maxDelayMs: 30_000,
    forgetAfterMs: 15 * 60_000,
    maxEntries: 3,
    ...options,
  });
  /** One attempt, begun and failed at once (as a synchronous key check does). */
  const fail = (key = 'k') => {
    const admission = t.begin(key);
    if (admission.admitted) t.settle(key, true);
    return admission;
  };
  return { t, fail, advance: (ms: number) => (now += ms) };
}

const waitOf = (a: Admission) => (a.admitted ? 0 : a.retryAfterMs);

describe('the attempt throttle', () => {
  it('allows three failures, then makes each further attempt wait 1 s, 2 s, 4 s … up to 30 s', () => {
    const { fail, advance } = throttle();
    expect([fail(), fail(), fail()].map(waitOf)).toEqual([0, 0, 0]);
    expect(waitOf(fail())).toBe(1000);
    for (const wait of [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]) {
      advance(wait);
      expect(waitOf(fail())).toBe(0); // the one attempt after the wait is checked, and fails
      expect(waitOf(fail())).toBe(2 * wait > 30_000 ? 30_000 : 2 * wait);
    }
  });

  it('counts attempts in flight: a burst of 100 concurrent attempts lets only 3 be checked', () => {
    const { t } = throttle();
    const admitted = Array.from({ length: 100 }, () => t.begin('k')).filter((a) => a.admitted);
    expect(admitted).toHaveLength(3);
    for (const _ of admitted) t.settle('k', true);
    expect(waitOf(t.begin('k'))).toBe(1000);
  });

  it('after the free failures, lets one attempt at a time through', () => {
    const { t, fail, advance } = throttle();
    fail();
    fail();
    expect(t.begin('k').admitted).toBe(true); // the third, still in flight
    expect(t.begin('k').admitted).toBe(false);
    t.settle('k', true);
    advance(1000);
    expect(t.begin('k').admitted).toBe(true);
    expect(t.begin('k').admitted).toBe(false);
  });

  it('a success forgets the failures, unless told to keep them (the per-address budget)', () => {
    const resetting = throttle();
    for (let i = 0; i < 2; i++) resetting.fail();
    resetting.t.begin('k');
    resetting.t.settle('k', false);
    expect(resetting.t.size).toBe(0);
    const keeping = throttle({ resetOnSuccess: false });
    for (let i = 0; i < 2; i++) keeping.fail();
    keeping.t.begin('k');
    keeping.t.settle('k', false);
    expect(waitOf(keeping.fail())).toBe(0);
    expect(waitOf(keeping.fail())).toBe(1000);
  });

  it('says when a failure starts a wait', () => {
    const { t } = throttle();
    const settle = () => {
      t.begin('k');
      return t.settle('k', true);
    };
    expect([settle(), settle(), settle()]).toEqual([false, false, true]);
  });

  it('forgets failures after 15 quiet minutes', () => {
    const { fail, advance } = throttle();
    for (let i = 0; i < 3; i++) fail();
    advance(15 * 60_000);
    expect(waitOf(fail())).toBe(0);
    expect(waitOf(fail())).toBe(0);
  });

  it('with decay, forgets one failure every decayMs, so only a burst reaches the limit', () => {
    const { fail, advance } = throttle({ freeFailures: 3, decayMs: 5_000 });
    for (let i = 0; i < 30; i++) {
      expect(waitOf(fail())).toBe(0); // one failure every 5 s never adds up
      advance(5_000);
    }
    expect([fail(), fail(), fail(), fail()].map(waitOf)).toEqual([0, 0, 0, 1000]);
  });

  it('keys are independent, and memory stays bounded (oldest forgotten first)', () => {
    const { t, fail } = throttle();
    for (const key of ['a', 'b', 'c', 'd']) for (let i = 0; i < 3; i++) fail(key);
    expect(t.size).toBe(3);
    expect(waitOf(t.begin('d'))).toBe(1000);
    expect(waitOf(t.begin('b'))).toBe(1000);
    expect(t.begin('a').admitted).toBe(true); // dropped: only three keys are kept
  });
});
