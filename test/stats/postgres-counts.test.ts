import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvaluationCounter } from '../../src/features/stats/evaluation-counter.js';
import { type ControlState, openControlState } from '../../src/foundations/state/index.js';
import { until } from '../helpers/deadlines.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';

const NOW = Date.parse('2026-05-01T10:30:00.000Z');
const never = () => () => {};

describe.skipIf(POSTGRES_MISSING !== null)('evaluation counts of control planes sharing one database', () => {
  let cluster: PostgresCluster;
  beforeAll(async () => {
    cluster = await PostgresCluster.start();
  }, 60_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  it("are in every control plane's stats answer, each counted once", async () => {
    const databaseUrl = await cluster.createDatabase();
    const states: ControlState[] = [
      await openControlState({ dataDir: '/nonexistent', databaseUrl }),
      await openControlState({ dataDir: '/nonexistent', databaseUrl }),
    ];
    const [first, second] = await Promise.all(states.map((state) => EvaluationCounter.open({ state, now: () => NOW, every: never })));
    try {
      for (let i = 0; i < 3; i++) first.record('acme/p1/prod', 'checkout', 'on');
      for (let i = 0; i < 2; i++) second.record('acme/p1/prod', 'checkout', 'off');
      second.record('acme/p1/prod', 'checkout', 'on');
      await first.flush();
      await second.flush();
      const lastHour = (counter: EvaluationCounter) =>
        Promise.resolve(counter.series({ scope: 'acme/p1/prod', flagKey: 'checkout', period: '24h', now: NOW }).series.at(-1)?.variations);
      expect(
        await until(
          () => lastHour(first),
          (v) => v?.off === 2,
        ),
      ).toEqual({ on: 4, off: 2 });
      expect(
        await until(
          () => lastHour(second),
          (v) => v?.on === 4,
        ),
      ).toEqual({ on: 4, off: 2 });
    } finally {
      await Promise.all([first.close(), second.close()]);
      await Promise.all(states.map((state) => state.close()));
    }
  });
});
