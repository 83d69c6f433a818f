import type { KillsFile, SnapshotFlag } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { applyKills } from '../../src/features/kill/apply-kills.js';

const flag: SnapshotFlag = {
  enabled: true,
  rolloutPct: 100,
  valueOn: true,
  valueOff: false,
  rules: [],
  killed: false,
  archived: false,
  defaultValue: false,
};
const flags: Record<string, SnapshotFlag> = { checkout: flag, search: flag };
const entry = { killedAt: '2025-01-02T03:04:05.000Z', killedBy: 'svc_agt_3kq9x2ab', reason: 'error rate' };

describe('applyKills: a kills file over the flags a view serves', () => {
  it('kills the flags the file names, keeping who killed them, when and why', () => {
    const kills: KillsFile = { kills: { checkout: entry } };
    const overlay = applyKills(flags, kills, 7, 'c0ffee');
    expect([...overlay.killed]).toEqual(['checkout']);
    expect(overlay.kills).toEqual({ kills: { checkout: entry } });
  });

  it('leaves every flag unkilled under an empty kills file (a cleared kill)', () => {
    const overlay = applyKills(flags, { kills: {} }, 8, 'c1');
    expect(overlay.killed.size).toBe(0);
    expect(overlay.kills).toEqual({ kills: {} });
  });

  it('drops a kill of a flag the view does not serve: it is neither killed nor listed', () => {
    const kills: KillsFile = { kills: { search: entry, 'no-such-flag': entry } };
    const overlay = applyKills(flags, kills, 9, 'c2');
    expect([...overlay.killed]).toEqual(['search']);
    expect(overlay.kills).toEqual({ kills: { search: entry } });
    expect(kills.kills['no-such-flag']).toEqual(entry); // the file given is left as it is
  });

  it('does not take a key inherited from Object.prototype for a served flag', () => {
    const overlay = applyKills(flags, { kills: { toString: entry } }, 9, 'c2');
    expect(overlay.killed.size).toBe(0);
  });

  it('carries the version, its ETag and the commit the kills were read from', () => {
    const overlay = applyKills(flags, { kills: { checkout: entry } }, 42, 'abc123');
    expect(overlay).toMatchObject({ version: 42, etag: '"v42"', commit: 'abc123' });
    expect(applyKills(flags, { kills: {} }, 0, null)).toMatchObject({ version: 0, etag: '"v0"', commit: null });
  });
});
