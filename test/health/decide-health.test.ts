import type { EnvironmentName } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { decideHealth, expiryTime, type FlagHealthInput, type HealthSettings } from '../../src/features/health/decide-health.js';
import { oneValue, type ServedSummary } from '../../src/features/health/served-summary.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-26T12:00:00Z');
const settings: HealthSettings = { now: NOW, staleAfterDays: 30, countsKeptDays: 30 };
const MIXED: ServedSummary = { kind: 'mixed', key: 'mixed' };

function everywhere(served: ServedSummary, since: number | undefined): FlagHealthInput['environments'] {
  const env = { served, since };
  return { dev: env, staging: env, prod: env };
}

function flag(over: Partial<FlagHealthInput> = {}): FlagHealthInput {
  return {
    key: 'checkout',
    type: 'release',
    createdAt: NOW - 100 * DAY,
    environments: everywhere(MIXED, NOW - 100 * DAY),
    lastEvaluatedAt: NOW - DAY,
    ...over,
  };
}

describe('decideHealth', () => {
  it('calls a flag that is evaluated and serves different values active, with no reasons', () => {
    expect(decideHealth(flag(), settings)).toEqual({ key: 'checkout', status: 'active', reasons: [] });
  });

  describe('rolled_out', () => {
    it('is stale when every environment has served one value to everyone for staleAfterDays, saying which and since when', () => {
      const since = Date.parse('2026-10-01T08:00:00Z');
      const health = decideHealth(flag({ environments: everywhere(oneValue(true), since) }), settings);
      expect(health.status).toBe('stale');
      expect(health.reasons).toEqual([
        { code: 'rolled_out', message: 'rolled out: every environment has served true to everyone since 2026-10-01' },
      ]);
    });

    it('counts from the environment that reached that value last', () => {
      const environments = { ...everywhere(oneValue(true), NOW - 90 * DAY), prod: { served: oneValue(true), since: NOW - 10 * DAY } };
      expect(decideHealth(flag({ environments }), settings).status).toBe('active');
      expect(decideHealth(flag({ environments }), { ...settings, staleAfterDays: 10 }).status).toBe('stale');
    });

    it('is not rolled out while environments serve different values, or one serves more than one', () => {
      const split = { ...everywhere(oneValue(true), NOW - 90 * DAY), dev: { served: oneValue(false), since: NOW - 90 * DAY } };
      expect(decideHealth(flag({ environments: split }), settings).reasons).toEqual([]);
      const mixed = { ...everywhere(oneValue(true), NOW - 90 * DAY), prod: { served: MIXED, since: NOW - 90 * DAY } };
      expect(decideHealth(flag({ environments: mixed }), settings).reasons).toEqual([]);
    });

    it('compares values by content, whatever the order of their keys', () => {
      const a = oneValue({ theme: 'dark', size: 2 });
      const b = oneValue({ size: 2, theme: 'dark' });
      const environments = {
        dev: { served: a, since: NOW - 90 * DAY },
        staging: { served: b, since: NOW - 90 * DAY },
        prod: { served: a, since: NOW - 90 * DAY },
      };
      expect(decideHealth(flag({ environments }), settings).reasons.map((r) => r.code)).toEqual(['rolled_out']);
    });

    it('is not decided when history does not say since when an environment serves its value', () => {
      const environments = { ...everywhere(oneValue(true), NOW - 90 * DAY), staging: { served: oneValue(true), since: undefined } };
      expect(decideHealth(flag({ environments }), settings).status).toBe('active');
    });

    it.each(['release', 'experiment'] as const)('applies to %s flags', (type) => {
      expect(decideHealth(flag({ type, environments: everywhere(oneValue(false), NOW - 90 * DAY) }), settings).status).toBe('stale');
    });

    it.each(['operational', 'permission', 'kill-switch'] as const)('never applies to %s flags', (type) => {
      expect(decideHealth(flag({ type, environments: everywhere(oneValue(false), NOW - 90 * DAY) }), settings)).toEqual({
        key: 'checkout',
        status: 'active',
        reasons: [],
      });
    });

    it('holds with staleAfterDays 0 as soon as every environment serves one value', () => {
      expect(decideHealth(flag({ environments: everywhere(oneValue(true), NOW) }), { ...settings, staleAfterDays: 0 }).status).toBe(
        'stale',
      );
    });
  });

  describe('expired', () => {
    it('is stale once past expiresAt, a date meaning the end of that day in UTC', () => {
      const lastDay = { ...settings, now: Date.parse('2026-11-26T23:59:59Z') };
      expect(decideHealth(flag({ expiresAt: '2026-11-26' }), lastDay).status).toBe('active');
      const next = { ...settings, now: Date.parse('2026-11-27T00:00:00Z') };
      expect(decideHealth(flag({ expiresAt: '2026-11-26' }), next)).toEqual({
        key: 'checkout',
        status: 'stale',
        reasons: [{ code: 'expired', message: 'expired: it was due to be removed by 2026-11-26' }],
      });
    });

    it('takes a date-time as that moment, for every type of flag', () => {
      const at = '2026-11-26T11:00:00+01:00';
      expect(decideHealth(flag({ type: 'permission', expiresAt: at }), settings).status).toBe('stale');
      expect(decideHealth(flag({ type: 'permission', expiresAt: '2026-11-26T13:00:00Z' }), settings).status).toBe('active');
    });

    it('reads nothing into an unreadable expiry', () => {
      expect(expiryTime('soon')).toBeUndefined();
      expect(expiryTime(undefined)).toBeUndefined();
      expect(expiryTime('2027-03-31')).toBe(Date.parse('2027-04-01T00:00:00Z'));
    });
  });

  describe('no_evaluations', () => {
    it('is potentially stale when nothing evaluated an old flag for staleAfterDays', () => {
      const health = decideHealth(flag({ lastEvaluatedAt: undefined }), settings);
      expect(health).toEqual({
        key: 'checkout',
        status: 'potentially_stale',
        reasons: [{ code: 'no_evaluations', message: 'no evaluations: not evaluated in any environment in the last 30 days' }],
      });
    });

    it('names the last evaluation when the counts still hold it', () => {
      const health = decideHealth(flag({ lastEvaluatedAt: Date.parse('2026-10-20T10:00:00Z') }), { ...settings, staleAfterDays: 14 });
      expect(health.reasons).toEqual([
        { code: 'no_evaluations', message: 'no evaluations: not evaluated in any environment since 2026-10-20' },
      ]);
    });

    it('spares a flag younger than staleAfterDays, and one whose age history does not know', () => {
      expect(decideHealth(flag({ lastEvaluatedAt: undefined, createdAt: NOW - 29 * DAY }), settings).status).toBe('active');
      expect(decideHealth(flag({ lastEvaluatedAt: undefined, createdAt: undefined }), settings).status).toBe('active');
    });

    it('says when the window reaches past the counts kept', () => {
      const health = decideHealth(flag({ lastEvaluatedAt: undefined, createdAt: NOW - 400 * DAY }), { ...settings, staleAfterDays: 90 });
      expect(health.reasons[0].message).toBe(
        'no evaluations: not evaluated in any environment in the last 30 days (evaluation counts are kept for 30 days)',
      );
    });

    it('says a window under a day in hours or minutes, and one under a minute as this hour, never "0 days"', () => {
      const message = (staleAfterDays: number) =>
        decideHealth(flag({ lastEvaluatedAt: undefined, createdAt: NOW - 400 * DAY }), { ...settings, staleAfterDays }).reasons[0].message;
      expect(message(0.25)).toBe('no evaluations: not evaluated in any environment in the last 6 hours');
      expect(message(1 / 96)).toBe('no evaluations: not evaluated in any environment in the last 15 minutes');
      expect(message(0.0001)).toBe('no evaluations: not evaluated in any environment this hour');
      expect(message(0)).toBe('no evaluations: not evaluated in any environment this hour');
      expect(message(1.5)).toBe('no evaluations: not evaluated in any environment in the last 1.5 days');
    });

    it('counts an evaluation in the current hour as recent, even with staleAfterDays 0', () => {
      expect(decideHealth(flag({ lastEvaluatedAt: NOW }), { ...settings, staleAfterDays: 0 }).status).toBe('active');
    });
  });

  it('lists every reason that holds, stale ones first, and is stale when any stale reason holds', () => {
    const health = decideHealth(
      flag({ expiresAt: '2026-01-01', environments: everywhere(oneValue(false), NOW - 90 * DAY), lastEvaluatedAt: undefined }),
      settings,
    );
    expect(health.status).toBe('stale');
    expect(health.reasons.map((r) => r.code)).toEqual(['expired', 'rolled_out', 'no_evaluations']);
  });

  it('is the same for the same input (no clock of its own)', () => {
    const input = flag({ environments: everywhere(oneValue(true), NOW - 31 * DAY) });
    expect(decideHealth(input, settings)).toEqual(decideHealth(input, settings));
    const envs: EnvironmentName[] = ['dev', 'staging', 'prod'];
    expect(envs.every((e) => input.environments[e].served.kind === 'one')).toBe(true);
  });
});
