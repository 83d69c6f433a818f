import type { SnapshotFlag } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { EnvironmentView } from '../../src/apps/eval-server/environment-view.js';
import { type AnnouncedChange, PATCH_MAX_BYTES, SnapshotChanges, type ViewHolder } from '../../src/apps/eval-server/snapshot-changes.js';

const entry = (valueOn: unknown): SnapshotFlag =>
  ({
    enabled: true,
    rolloutPct: 100,
    valueOn,
    valueOff: false,
    rules: [],
    killed: false,
    archived: false,
    defaultValue: null,
  }) as SnapshotFlag;

/** A holder of one environment's views that swaps them in as the real holders do: view first, then listeners. */
class OneEnvironment implements ViewHolder {
  private current: EnvironmentView | undefined;
  private readonly listeners = new Set<(views: EnvironmentView[]) => void>();
  onChange(listener: (views: EnvironmentView[]) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  view() {
    return this.current;
  }
  serve(version: number, flags: Record<string, SnapshotFlag>, killed: string[] = []): EnvironmentView {
    const kills = { kills: Object.fromEntries(killed.map((k) => [k, { killedAt: '2026-01-01T00:00:00.000Z', killedBy: 'test' }])) };
    return this.swapIn(EnvironmentView.build('acme', 'prj_1', 'one', 'prod', flags, kills, version, null, {}));
  }
  swapIn(view: EnvironmentView): EnvironmentView {
    this.current = view;
    for (const listener of this.listeners) listener([view]);
    return view;
  }
}

describe('the window of recent changes (docs/evaluation-server.md, "Deltas")', () => {
  it('keeps the last N versions: a delta since an older one is unknown', () => {
    const holder = new OneEnvironment();
    const changes = new SnapshotChanges(holder, { versions: 3 });
    let view = holder.serve(1, { a: entry(1) });
    for (let v = 2; v <= 6; v++) view = holder.serve(v, { a: entry(v) });
    expect([1, 2].map((since) => changes.delta(view, since))).toEqual([undefined, undefined]);
    for (const since of [3, 4, 5])
      expect(JSON.parse(changes.delta(view, since)!)).toMatchObject({ since, version: 6, flags: { a: { valueOn: 6 } } });
    expect(changes.delta(view, 6)).toBeUndefined();
    expect(changes.delta(view, 7)).toBeUndefined();
  });

  it('keeps no more than its byte budget of changes, and none when one change alone is bigger', () => {
    const holder = new OneEnvironment();
    const changes = new SnapshotChanges(holder, { bytes: 2_500 });
    let view = holder.serve(1, { a: entry('x') });
    for (let v = 2; v <= 5; v++) view = holder.serve(v, { a: entry('x'.repeat(1_000 + v)) });
    // About 1,050 bytes a change: the last two fit in 2,500.
    expect(changes.delta(view, 2)).toBeUndefined();
    expect(changes.delta(view, 3)).toBeDefined();
    view = holder.serve(6, { a: entry('y'.repeat(3_000)) });
    expect(changes.delta(view, 5)).toBeUndefined();
  });

  it('announces each change with its patch once, and without one over 64 KiB', () => {
    const holder = new OneEnvironment();
    const changes = new SnapshotChanges(holder);
    const heard: AnnouncedChange[] = [];
    changes.onChange((announced) => heard.push(...announced));
    holder.serve(1, { a: entry(1), b: entry(2) });
    holder.serve(2, { a: entry(1), b: entry(3) });
    holder.serve(3, { a: entry('z'.repeat(PATCH_MAX_BYTES)), b: entry(3) });
    expect(heard.map(({ since, patch }) => ({ since, patch: patch && JSON.parse(patch) }))).toEqual([
      { since: null, patch: null },
      { since: 1, patch: { flags: { b: entry(3) }, segments: {} } },
      { since: 2, patch: null },
    ]);
  });

  it('sees a kill without comparing the flags, and marks the entry killed as the snapshot does', () => {
    const holder = new OneEnvironment();
    const changes = new SnapshotChanges(holder);
    const flags = { a: entry(1), b: entry(2) };
    const first = holder.serve(1, flags);
    const killed = holder.swapIn(first.withKills({ kills: { b: { killedAt: '2026-01-01T00:00:00.000Z', killedBy: 'test' } } }, 2, null));
    const delta = JSON.parse(changes.delta(killed, 1)!);
    expect(delta.flags).toEqual({ b: { ...entry(2), killed: true } });
    expect(JSON.parse(killed.snapshotJson()).flags.b).toEqual(delta.flags.b);
  });

  it('forgets every version when history goes back (a reset main), since a version may then name other content', () => {
    const holder = new OneEnvironment();
    const changes = new SnapshotChanges(holder);
    holder.serve(5, { a: entry(1) });
    holder.serve(6, { a: entry(2) });
    const back = holder.serve(4, { a: entry(3) });
    expect(changes.delta(back, 5)).toBeUndefined();
    const next = holder.serve(7, { a: entry(4) });
    expect(JSON.parse(changes.delta(next, 4)!).flags).toEqual({ a: entry(4) });
  });
});
