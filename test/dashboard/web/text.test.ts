import { describe, expect, it } from 'vitest';
import { ago, localTime, localTimeWithZone, utcTime, when } from '../../../packages/dashboard/src/logic/text.js';

describe('times on the page', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');
  it('says how long ago a kill happened, in minutes at the finest', () => {
    expect(ago('2026-11-21T11:59:30Z', now)).toBe('just now');
    expect(ago('2026-11-21T11:57:00Z', now)).toBe('3 min ago');
    expect(ago('2026-11-21T09:00:00Z', now)).toBe('3 h ago');
    expect(ago('2026-11-19T12:00:00Z', now)).toBe('2 d ago');
  });

  it('shows local times to the second and leaves an unreadable one as it is', () => {
    expect(localTime('2026-11-21T12:00:00Z')).toMatch(/^2026-11-2[12] \d\d:\d\d:00$/);
    expect(localTime('soon')).toBe('soon');
  });

  it('says how long ago only while that reads well, the date beyond a week (not "630 d ago")', () => {
    expect(when('2026-11-19T12:00:00Z', now)).toBe('2 d ago');
    expect(when('2025-03-02T14:05:00Z', now)).toMatch(/^on [23] Mar 2025$/);
  });

  it('shows local times with the timezone, and UTC for hover titles', () => {
    expect(localTimeWithZone('2026-11-21T12:00:00Z')).toMatch(/^2026-11-2[12] \d\d:\d\d:00 \S+$/);
    expect(utcTime('2026-11-21T12:00:05.123Z')).toBe('2026-11-21 12:00:05 UTC');
  });
});
