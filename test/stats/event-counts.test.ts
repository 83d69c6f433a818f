import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvaluationCounter } from '../../src/features/stats/evaluation-counter.js';
import {
  addEventCells,
  exposureTotals,
  MAX_KEPT_TRACK_NAMES,
  TrackNameBound,
  toMicros,
  trackSeries,
} from '../../src/features/stats/event-counts.js';
import { hourStart } from '../../src/features/stats/hours.js';
import { createLogger } from '../../src/foundations/log/logger.js';
import { openControlState } from '../../src/foundations/state/index.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';

const NOW = Date.parse('2026-05-01T10:30:00.000Z');
const HOUR = Date.parse('2026-05-01T10:00:00.000Z');
const never = () => () => {};
const SCOPE = 'acme/prj_1/prod';

/** Events counted by one control plane, read back by the next one on the same state: files or PostgreSQL. */
describe.each([
  ['files', false],
  ['PostgreSQL', true],
] as const)('exposure and track counts kept in the %s state', (_, postgres) => {
  let cluster: PostgresCluster | undefined;
  let dir: string;
  const skip = postgres && POSTGRES_MISSING !== null;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-events-'));
    if (postgres && !skip) cluster = await PostgresCluster.start();
  }, 60_000);
  afterAll(async () => {
    await cluster?.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(skip)('survive a restart, apart from the evaluations, with negative and fractional sums exact', async () => {
    const databaseUrl = cluster ? await cluster.createDatabase() : undefined;
    const open = async () => {
      const state = await openControlState({ dataDir: dir, ...(databaseUrl ? { databaseUrl } : {}) });
      return { state, counter: await EvaluationCounter.open({ state, now: () => NOW, every: never }) };
    };
    const first = await open();
    first.counter.record(SCOPE, 'hero', 'blue'); // an evaluation, not an exposure
    const { accepted } = addEventCells(
      first.counter,
      new TrackNameBound(first.counter),
      SCOPE,
      [
        { flagKey: 'hero', variation: 'blue', hourStartMs: HOUR, count: 3 },
        { flagKey: 'hero', variation: 'green', hourStartMs: HOUR, count: 2 },
      ],
      [
        { name: 'purchase', hourStartMs: HOUR, count: 2, sumMicros: toMicros(19.99) + toMicros(0.01) },
        { name: 'refund', hourStartMs: HOUR, count: 1, sumMicros: toMicros(-4.5) },
      ],
    );
    expect(accepted).toBe(8);
    await first.counter.close();
    await first.state.close();

    const second = await open();
    try {
      expect(Object.fromEntries(exposureTotals(second.counter, SCOPE, 'hero', '24h', NOW))).toEqual({ blue: 3, green: 2 });
      expect(second.counter.series({ scope: SCOPE, flagKey: 'hero', period: '24h', now: NOW }).series.at(-1)?.variations).toEqual({
        blue: 1,
      });
      const track = trackSeries(second.counter, SCOPE, '24h', NOW).series;
      expect(track).toHaveLength(24);
      expect(track.at(-1)).toEqual({
        hour: new Date(HOUR).toISOString(),
        counts: { purchase: { count: 2, sum: 20 }, refund: { count: 1, sum: -4.5 } },
      });
      expect(track.slice(0, -1).every((h) => Object.keys(h.counts).length === 0)).toBe(true);
    } finally {
      await second.counter.close();
      await second.state.close();
    }
  });
});

describe('the track event names a project keeps', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-track-names-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const track = (names: string[], hourStartMs = HOUR) => names.map((name) => ({ name, hourStartMs, count: 1, sumMicros: toMicros(1) }));
  const namesFrom = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

  it(`are at most ${MAX_KEPT_TRACK_NAMES}, over its environments together; events of other names are dropped, counted and logged once an hour`, async () => {
    let now = NOW;
    const state = await openControlState({ dataDir: dir });
    const counter = await EvaluationCounter.open({ state, now: () => now, every: never });
    const warnings: string[] = [];
    const logger = createLogger({ write: (line) => warnings.push(JSON.parse(line).msg) });
    const names = new TrackNameBound(counter, { logger, now: () => now });
    try {
      expect(addEventCells(counter, names, 'acme/prj_1/dev', [], track(namesFrom('a', 600)))).toEqual({ accepted: 600, dropped: 0 });
      expect(addEventCells(counter, names, SCOPE, [], track(namesFrom('b', 600)))).toEqual({ accepted: 400, dropped: 200 });
      // A name kept goes on being counted, in any environment; a new one is dropped, in the next hour too.
      expect(addEventCells(counter, names, SCOPE, [], track(['a1', 'b1', 'c1']))).toEqual({ accepted: 2, dropped: 1 });
      now += 3_600_000;
      expect(addEventCells(counter, names, SCOPE, [], track(['b2', 'c2'], HOUR + 3_600_000))).toEqual({ accepted: 1, dropped: 1 });
      // Another project has names of its own.
      expect(addEventCells(counter, names, 'acme/prj_2/prod', [], track(['c1']))).toEqual({ accepted: 1, dropped: 0 });
      expect(warnings.filter((w) => w.includes('dropped'))).toHaveLength(2); // one per hour, not one per event

      const kept = new Set(
        ['dev', 'staging', 'prod'].flatMap((env) =>
          trackSeries(counter, `acme/prj_1/${env}`, '30d', now).series.flatMap((h) => Object.keys(h.counts)),
        ),
      );
      expect(kept.size).toBe(MAX_KEPT_TRACK_NAMES);
      expect(kept.has('c1')).toBe(false);

      // Once the counts of the names have expired, their places are free again.
      now += 30 * 24 * 3_600_000;
      await counter.flush();
      expect(addEventCells(counter, names, SCOPE, [], track(['c3'], hourStart(now)))).toEqual({ accepted: 1, dropped: 0 });
    } finally {
      await counter.close();
      await state.close();
    }
  });

  it('are read back from the counts kept after a restart', async () => {
    const restartDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-track-names-'));
    const open = async () => {
      const state = await openControlState({ dataDir: restartDir });
      const counter = await EvaluationCounter.open({ state, now: () => NOW, every: never });
      return { state, counter, names: new TrackNameBound(counter) };
    };
    const first = await open();
    addEventCells(first.counter, first.names, SCOPE, [], track(namesFrom('a', MAX_KEPT_TRACK_NAMES)));
    await first.counter.close();
    await first.state.close();
    const second = await open();
    try {
      expect(addEventCells(second.counter, second.names, SCOPE, [], track(['a7', 'new']))).toEqual({ accepted: 1, dropped: 1 });
    } finally {
      await second.counter.close();
      await second.state.close();
      await rm(restartDir, { recursive: true, force: true });
    }
  });
});
