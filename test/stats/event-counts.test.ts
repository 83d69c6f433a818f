import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvaluationCounter } from '../../src/features/stats/evaluation-counter.js';
import { addEventCells, exposureTotals, toMicros, trackSeries } from '../../src/features/stats/event-counts.js';
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
    const accepted = addEventCells(
      first.counter,
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
