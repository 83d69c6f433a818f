import { describe, expect, it } from 'vitest';
import { checkText, guardText, timeline } from '../../../packages/dashboard/src/schedule/schedule-model.js';

const NOW = Date.parse('2026-11-24T09:00:00Z');
const guard = { query: 'sum(rate(errors[5m]))', max: 0.05, intervalSeconds: 30 };

describe('the schedule timeline with guards', () => {
  it('words a guard with its query, bounds and interval (60 s when not given)', () => {
    expect(guardText(guard)).toBe('guard: sum(rate(errors[5m])) ≤ 0.05, every 30 s');
    expect(guardText({ query: 'up', min: 1 })).toBe('guard: up ≥ 1, every 60 s');
  });

  it('puts the last check on the step it was made for, and only there', () => {
    const steps = [
      { at: '2026-11-24T10:00:00Z', set: { rolloutPct: 50 }, guard },
      { at: '2026-11-24T11:00:00Z', set: { rolloutPct: 100 }, guard },
    ];
    const check = {
      stepAt: '2026-11-24T10:00:00Z',
      query: guard.query,
      checkedAt: '2026-11-24T09:00:00Z',
      result: 'pass' as const,
      value: 0.01,
      failures: 0,
    };
    const entries = timeline(steps, { enabled: true, rolloutPct: 10 }, NOW, check);
    expect(entries.map((e) => e.guard)).toEqual([guardText(guard), guardText(guard)]);
    expect(entries[0].lastCheck).toMatchObject({ ok: true });
    expect(entries[0].lastCheck?.text).toMatch(/^last check 0\.01: within bounds/);
    expect(entries[1].lastCheck).toBeUndefined();
  });

  it('says a failing check is failing, with the count that stops the rollout', () => {
    const failed = checkText({
      stepAt: '2026-11-24T10:00:00Z',
      query: 'up',
      checkedAt: '2026-11-24T09:00:00Z',
      result: 'error',
      error: 'the query returned no samples',
      failures: 2,
    });
    expect(failed.ok).toBe(false);
    expect(failed.text).toMatch(/^last check failed \(2 in a row; 3 stop the rollout\): the query returned no samples/);
    expect(checkText({ stepAt: '', query: 'up', checkedAt: '2026-11-24T09:00:00Z', result: 'breach', value: 7, failures: 0 }).ok).toBe(
      false,
    );
  });
});
