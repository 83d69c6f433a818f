import { describe, expect, it } from 'vitest';
import { ago, localTime } from '../../../src/dashboard/web/logic/text.js';

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
});
