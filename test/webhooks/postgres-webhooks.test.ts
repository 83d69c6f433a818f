import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlState, openControlState } from '../../src/foundations/state/index.js';
import { until } from '../helpers/deadlines.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { receiver, recordingLogger, setup } from './webhook-harness.js';

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

  /** The state of two control planes sharing a new database. */
  async function twoStatesOnOneDatabase(): Promise<[ControlState, ControlState]> {
    const databaseUrl = await cluster.createDatabase();
    const pair: [ControlState, ControlState] = [
      await openControlState({ dataDir: '/nonexistent', databaseUrl }),
      await openControlState({ dataDir: '/nonexistent', databaseUrl }),
    ];
    states.push(...pair);
    return pair;
  }

  it('deliver each audit entry once between them', async () => {
    const [stateA, stateB] = await twoStatesOnOneDatabase();
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

  it('deliver a kill made while the database was down once, when it is back, without another change', async () => {
    const [stateA, stateB] = await twoStatesOnOneDatabase();
    const hook = await receiver();
    const { open, change } = await setup();
    const logger = recordingLogger();
    const first = await open(undefined, { state: stateA, logger });
    await first.create('acme', { url: hook.url });
    await open(undefined, { state: stateB });

    await cluster.stopServer();
    let kill: string;
    try {
      // Committed and served as always; its deliveries cannot be recorded while the database is down.
      kill = await change('kill');
      await until(
        async () => logger.lines,
        (lines) => lines.some((l) => l.msg.startsWith('webhooks: reading the audit trail failed')),
      );
    } finally {
      await cluster.startServer();
    }
    // Nothing moves main from here on: the kill goes out because the database answers again.
    const received = await until(
      async () => hook.received,
      (got) => got.length === 1,
    );
    expect(JSON.parse(received[0].body).entry).toMatchObject({ id: kill, action: 'kill' });
    await until(
      async () => (await stateA.webhooks.read()).deliveries,
      (deliveries) => deliveries.length === 1 && deliveries[0].status === 'delivered',
    );
    // Both control planes read the trail again; one made the delivery, and it came once.
    expect(hook.received).toHaveLength(1);
  }, 40_000);

  it('a webhook made through one is listed and delivered by the other, which goes on delivering when the first stops', async () => {
    const [stateA, stateB] = await twoStatesOnOneDatabase();
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
  it("shows a delivery the other made as delivered at once, not when that attempt's claim runs out", async () => {
    const [stateA, stateB] = await twoStatesOnOneDatabase();
    // The first attempt hangs until released, so the other instance finds it claimed while it is under way.
    const hook = await receiver(() => null);
    // An attempt's claim lasts its timeout and a margin: half a minute, past every wait below.
    const { open, change } = await setup({ baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 25_000 });
    const first = await open(undefined, { state: stateA });
    const made = await first.create('acme', { url: hook.url });
    const second = await open(undefined, { state: stateB });
    await change();
    await Promise.all([first.catchUp('acme'), second.catchUp('acme')]);
    await until(
      async () => hook.received,
      (received) => received.length === 1,
    );
    // One instance sends; the other found the attempt claimed and waits for the claim to run out.
    const waitingForClaim = (service: typeof first) =>
      service
        .deliveriesHeld('acme', made.id)
        .some((d) => d.status === 'pending' && Date.parse(d.nextAttemptAt ?? '') > Date.now() + 10_000);
    await until(
      async () => waitingForClaim(first) || waitingForClaim(second),
      (waiting) => waiting,
    );
    hook.release(200);
    for (const service of [first, second]) {
      const log = await until(
        () => service.deliveriesOf('acme', made.id),
        (deliveries) => deliveries.length === 1 && deliveries[0].status === 'delivered',
        5_000,
      );
      expect(log[0].attempts).toBe(1);
      // Nor is it attempted again once the claim runs out: it is finished here too.
      expect(service.deliveriesHeld('acme', made.id)[0].status).toBe('delivered');
    }
    expect(hook.received).toHaveLength(1);
  });
});
