import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlState, openControlState } from '../../src/foundations/state/index.js';
import { until } from '../helpers/deadlines.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { receiver, setup } from './webhook-harness.js';

describe.skipIf(POSTGRES_MISSING !== null)('webhooks of two control planes on one database', () => {
  let cluster: PostgresCluster;
  const states: ControlState[] = [];
  beforeAll(async () => {
    cluster = await PostgresCluster.start();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(states.map((state) => state.close()));
    await cluster?.destroy();
  });

  it('deliver each audit entry once between them', async () => {
    const databaseUrl = await cluster.createDatabase();
    const [stateA, stateB] = [
      await openControlState({ dataDir: '/nonexistent', databaseUrl }),
      await openControlState({ dataDir: '/nonexistent', databaseUrl }),
    ];
    states.push(stateA, stateB);
    const hook = await receiver();
    const { open, change } = await setup();
    const first = await open(undefined, { state: stateA });
    await first.create('acme', { url: hook.url });
    const second = await open(undefined, { state: stateB });

    // Both follow the same main, as two control planes on one git remote do.
    const commits: string[] = [];
    for (let i = 0; i < 5; i++) commits.push(await change());
    await Promise.all([first.catchUp('acme'), second.catchUp('acme')]);
    await until(
      async () => (await stateA.webhooks.read()).deliveries,
      (deliveries) => deliveries.length === 5 && deliveries.every((d) => d.status === 'delivered'),
    );
    // Once every delivery is recorded delivered, no claim of one can succeed again: what came is all that comes.
    expect(hook.received).toHaveLength(5);
    expect(new Set(hook.received.map((r) => r.headers['x-flagops-delivery'])).size).toBe(5);
    expect(hook.received.map((r) => JSON.parse(r.body).entry.id).sort()).toEqual([...commits].sort());
  });

  it('a webhook made through one is listed and delivered by the other, which goes on delivering when the first stops', async () => {
    const databaseUrl = await cluster.createDatabase();
    const [stateA, stateB] = [
      await openControlState({ dataDir: '/nonexistent', databaseUrl }),
      await openControlState({ dataDir: '/nonexistent', databaseUrl }),
    ];
    states.push(stateA, stateB);
    const hook = await receiver();
    const { open, change } = await setup();
    const first = await open(undefined, { state: stateA });
    const second = await open(undefined, { state: stateB });
    const made = await first.create('acme', { url: hook.url });
    await until(
      async () => second.list('acme'),
      (listed) => listed.some((w) => w.id === made.id),
      1_000,
    );
    await first.close();
    const commit = await change();
    await second.catchUp('acme');
    await until(
      async () => hook.received,
      (received) => received.length === 1,
    );
    expect(JSON.parse(hook.received[0].body).entry.id).toBe(commit);
  });
});
