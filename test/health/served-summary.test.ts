import type { EnvironmentConfig } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { summarizeServed } from '../../src/features/health/served-summary.js';

const base: EnvironmentConfig = { enabled: true, rolloutPct: 100, valueOn: true, valueOff: false, version: 1, rules: [] };
const config = (over: Partial<EnvironmentConfig>): EnvironmentConfig => ({ ...base, ...over });
const served = (c: EnvironmentConfig, killed = false) => {
  const s = summarizeServed(c, killed);
  return s.kind === 'one' ? { one: s.value } : 'mixed';
};

describe('what an environment serves to everyone', () => {
  it('is valueOn when on at 100 % without rules', () => expect(served(base)).toEqual({ one: true }));
  it('is valueOff when disabled, or at 0 %', () => {
    expect(served(config({ enabled: false }))).toEqual({ one: false });
    expect(served(config({ rolloutPct: 0 }))).toEqual({ one: false });
  });
  it('is valueOff when killed, whatever the config says', () => expect(served(base, true)).toEqual({ one: false }));
  it('is more than one value in the middle of a rollout', () => expect(served(config({ rolloutPct: 50 }))).toBe('mixed'));
  it('is more than one value when a rule serves otherwise', () => {
    const rules = [{ id: 'r1', conditions: [], serve: 'off' as const }];
    expect(served(config({ rules }))).toBe('mixed');
  });
  it('stays one value when every rule serves what the rollout serves', () => {
    const rules = [{ id: 'r1', conditions: [{ attribute: 'plan', op: 'eq' as const, value: 'pro' }], serve: 'on' as const }];
    expect(served(config({ rules }))).toEqual({ one: true });
  });
  it('is one value when the values on and off are equal', () =>
    expect(served(config({ rolloutPct: 50, valueOff: true }))).toEqual({ one: true }));
  it('is more than one value with several weighted variants, one with a single one', () => {
    const two = [
      { name: 'a', value: 'x', weight: 50 },
      { name: 'b', value: 'y', weight: 50 },
    ];
    expect(served(config({ valueOn: 'x', valueOff: 'z', variants: two }))).toBe('mixed');
    const one = [
      { name: 'a', value: 'x', weight: 100 },
      { name: 'b', value: 'y', weight: 0 },
    ];
    expect(served(config({ valueOn: 'q', valueOff: 'z', variants: one }))).toEqual({ one: 'x' });
  });
  it('counts valueOff in when prerequisites may fail', () =>
    expect(served(config({ prerequisites: [{ flag: 'other', variation: 'on' }] }))).toBe('mixed'));
  it('is never one value while a schedule is pending, disabled included (a step may turn it on); killed, it is valueOff', () => {
    const schedule = [{ at: '2030-01-01T00:00:00Z', set: { rolloutPct: 50 } }];
    expect(served(config({ schedule }))).toBe('mixed');
    expect(served(config({ enabled: false, schedule: [{ at: '2030-01-01T00:00:00Z', set: { enabled: true } }] }))).toBe('mixed');
    expect(served(config({ enabled: false, schedule }))).toBe('mixed');
    // Steps falling due while killed are skipped.
    expect(served(config({ schedule }), true)).toEqual({ one: false });
  });
});
