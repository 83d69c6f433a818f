import type { SnapshotFlag } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { ReplicaHolder, type ViewBody } from '../../src/apps/replica/replica-holder.js';
import type { KillChange } from '../../src/apps/replica/view-change.js';

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
const body: ViewBody = {
  projectId: 'prj_shop',
  projectSlug: 'shop',
  environment: 'prod',
  version: 3,
  commit: 'c3',
  flags: { checkout: flag },
  kills: { kills: {} },
};
const kill = (baseVersion: number, version: number): KillChange => ({
  type: 'kill',
  projectId: 'prj_shop',
  projectSlug: 'shop',
  environment: 'prod',
  version,
  baseVersion,
  commit: `c${version}`,
  kills: { kills: { checkout: { killedAt: '2025-01-02T03:04:05.000Z', killedBy: 'ops' } } },
});

describe('a replica holder given a kill change', () => {
  it('serves it over the view of its base version, with the same compiled flags, and tells its listeners', () => {
    const holder = new ReplicaHolder();
    holder.put('acme', body);
    const before = holder.view('acme', 'prj_shop', 'prod')!;
    const heard: number[] = [];
    holder.onChange((views) => heard.push(...views.map((v) => v.version)));
    const after = holder.applyKill('acme', kill(3, 4))!;
    expect(holder.view('acme', 'prj_shop', 'prod')).toBe(after);
    expect(after.compiled).toBe(before.compiled);
    expect([...after.killed]).toEqual(['checkout']);
    expect(after).toMatchObject({ version: 4, etag: '"v4"', commit: 'c4' });
    expect(heard).toEqual([4]);
  });

  it('leaves the view alone when it does not serve the base version, so the replica fetches the view', () => {
    const holder = new ReplicaHolder();
    holder.put('acme', body);
    const before = holder.view('acme', 'prj_shop', 'prod');
    expect(holder.applyKill('acme', kill(2, 4))).toBeUndefined();
    expect(holder.applyKill('other-org', kill(3, 4))).toBeUndefined();
    expect(holder.view('acme', 'prj_shop', 'prod')).toBe(before);
  });

  it('has nothing to apply a kill to before the view is served', () => {
    expect(new ReplicaHolder().applyKill('acme', kill(3, 4))).toBeUndefined();
  });
});
