import { describe, expect, it } from 'vitest';
import { expandRolloutPlan } from '../../src/features/schedule/rollout-plan.js';
import { validateBody } from '../../src/foundations/validation/index.js';
import { refusal } from '../validation/fixtures.js';

const NOW = new Date('2026-11-24T09:00:00Z');

describe('a progressive rollout plan', () => {
  it('is "5 % now, then +20 % every hour to 100 %": 5 now, then 25, 45, 65, 85 and 100 hourly', () => {
    const plan = expandRolloutPlan({ startPct: 5, stepPct: 20, every: '1h' }, NOW);
    expect(plan.now).toEqual({ enabled: true, rolloutPct: 5 });
    expect(plan.schedule).toEqual([
      { at: '2026-11-24T10:00:00Z', set: { rolloutPct: 25 } },
      { at: '2026-11-24T11:00:00Z', set: { rolloutPct: 45 } },
      { at: '2026-11-24T12:00:00Z', set: { rolloutPct: 65 } },
      { at: '2026-11-24T13:00:00Z', set: { rolloutPct: 85 } },
      { at: '2026-11-24T14:00:00Z', set: { rolloutPct: 100 } },
    ]);
  });

  it('puts its guard on every step, so the rollout is watched until its last step', () => {
    const guard = { query: 'sum(rate(http_errors_total[5m]))', max: 0.05, intervalSeconds: 30 };
    const plan = expandRolloutPlan({ startPct: 10, stepPct: 45, every: '1h', guard }, NOW);
    expect(plan.schedule).toEqual([
      { at: '2026-11-24T10:00:00Z', set: { rolloutPct: 55 }, guard },
      { at: '2026-11-24T11:00:00Z', set: { rolloutPct: 100 }, guard },
    ]);
    expect(plan.schedule[0].guard).not.toBe(plan.schedule[1].guard);
  });

  it('starts at startAt with a step that enables the flag, and stops at maxPct', () => {
    const plan = expandRolloutPlan({ startPct: 10, stepPct: 15, every: '30m', maxPct: 50, startAt: '2026-11-25T09:00:00Z' }, NOW);
    expect(plan.now).toBeUndefined();
    expect(plan.schedule).toEqual([
      { at: '2026-11-25T09:00:00Z', set: { enabled: true, rolloutPct: 10 } },
      { at: '2026-11-25T09:30:00Z', set: { rolloutPct: 25 } },
      { at: '2026-11-25T10:00:00Z', set: { rolloutPct: 40 } },
      { at: '2026-11-25T10:30:00Z', set: { rolloutPct: 50 } },
    ]);
    expect(expandRolloutPlan({ startPct: 100, stepPct: 10, every: '1d' }, NOW).schedule).toEqual([]);
  });

  it('counts a plan that starts now from the next whole second', () => {
    const plan = expandRolloutPlan({ startPct: 50, stepPct: 50, every: '30s' }, new Date('2026-11-24T09:00:00.713Z'));
    expect(plan.schedule).toEqual([{ at: '2026-11-24T09:00:31Z', set: { rolloutPct: 100 } }]);
  });

  it('refuses a plan of more than 50 steps, a maxPct below startPct, a past startAt and a bad duration, naming the field', () => {
    const field = (run: () => unknown) => refusal(run).field;
    expect(field(() => expandRolloutPlan({ startPct: 0, stepPct: 1, every: '1m' }, NOW))).toBe('stepPct');
    expect(expandRolloutPlan({ startPct: 0, stepPct: 2, every: '1m' }, NOW).schedule).toHaveLength(50);
    expect(field(() => expandRolloutPlan({ startPct: 50, stepPct: 10, every: '1h', maxPct: 20 }, NOW))).toBe('maxPct');
    expect(field(() => expandRolloutPlan({ startPct: 5, stepPct: 10, every: '1h', startAt: '2026-11-24T09:00:00Z' }, NOW))).toBe('startAt');
    expect(field(() => validateBody('rollout-plan', { startPct: 5, stepPct: 10, every: 'hourly' }))).toBe('every');
    expect(field(() => validateBody('rollout-plan', { startPct: 5, stepPct: 0, every: '1h' }))).toBe('stepPct');
  });
});
