import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/foundations/log/logger.js';
import { until } from '../helpers/deadlines.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { StalledPrometheus } from '../helpers/stalled-prometheus.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { ManualClock } from '../schedule/manual-clock.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const T0 = Date.parse('2026-11-24T08:00:00Z');

const stores = [
  { name: 'with the state in files', postgres: false },
  { name: 'with the state in PostgreSQL', postgres: true },
].filter((store) => !store.postgres || POSTGRES_MISSING === null);

describe.each(stores)('a guard whose query hangs, $name', ({ postgres }) => {
  const clock = new ManualClock(T0);
  const logs: Json[] = [];
  let prometheus: StalledPrometheus;
  let cluster: PostgresCluster | undefined;
  let svc: TestService;
  let admin: HttpClient;
  let projectId: string;

  beforeAll(async () => {
    prometheus = await StalledPrometheus.start();
    if (postgres) cluster = await PostgresCluster.start();
    const logger = createLogger({ level: 'info', write: (line) => void logs.push(JSON.parse(line)) });
    svc = await startTestService({
      clock,
      logger,
      prometheusUrl: prometheus.url,
      ...(cluster ? { databaseUrl: await cluster.createDatabase() } : {}),
    });
    admin = httpClient(svc.controlUrl, svc.admin);
    projectId = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body.id;
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await prometheus?.close();
    await cluster?.destroy();
  });
  beforeEach(() => {
    prometheus.maxHeld = 0;
  });

  const at = (msFromNow: number) => new Date(clock.now().getTime() + msFromNow).toISOString();
  const hanging = { query: 'up', max: 1, intervalSeconds: 1 };
  const passing = { query: 'vector(0)', max: 1, intervalSeconds: 60 };
  const config = (id: string) => `/api/v1/flags/${id}/environments/prod/config`;
  const prodOf = async (id: string): Promise<Json> => (await admin.get(`/api/v1/flags/${id}`)).body.environments.prod;
  const checkOf = async (id: string): Promise<Json> => (await admin.get(`/api/v1/flags/${id}/environments/prod/guard-check`)).body.check;
  const stopsOf = async (id: string): Promise<Json[]> =>
    (await admin.get(`/api/v1/audit?flagId=${id}&environment=prod&action=guard_failed`)).body.entries;
  const logsOf = (flag: string, msg: string) => logs.filter((l) => l.flag === flag && String(l.msg).startsWith(msg));

  async function newFlag(key: string): Promise<string> {
    const res = await admin.post(`/api/v1/projects/${projectId}/flags`, { key });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  /** Moves the service's clock by `ms` until `check` holds of what `read` answers (timers fire as the clock passes them). */
  const advanceUntil = <T>(ms: number, read: () => Promise<T> | T, check: (value: T) => boolean) =>
    until(async () => {
      clock.advance(ms);
      return read();
    }, check);

  /** Lets intervals of the hanging guard pass while its first query is held. */
  async function intervalsPass(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      clock.advance(1000);
      // Time for a check started by that interval to reach Prometheus.
      await sleep(200);
    }
  }

  /** Answers the held queries with errors, and waits until each was dropped as late or the flag was killed. */
  async function failLateQueries(flag: string, id: string): Promise<void> {
    const dropped = logsOf(flag, 'late guard check dropped').length;
    const answered = prometheus.fail();
    await until(
      async () => ({ dropped: logsOf(flag, 'late guard check dropped').length - dropped, killed: (await prodOf(id)).killed }),
      (seen) => seen.dropped >= answered || seen.killed,
    );
  }

  it('drops the late result of a cancelled rollout: no kill, and no check shown', async () => {
    const id = await newFlag('cancelled');
    const step = { at: at(3_600_000), set: { rolloutPct: 50 }, guard: hanging };
    expect((await admin.put(config(id), { enabled: true, rolloutPct: 5, schedule: [step] })).status).toBe(200);
    await advanceUntil(
      0,
      () => prometheus.held.length,
      (n) => n === 1,
    );
    await intervalsPass(3);
    const cancelled = await admin.put(config(id), { schedule: [] });
    expect(cancelled.body.environments.prod).toMatchObject({ schedule: [], nextStep: null });

    await failLateQueries('cancelled', id);
    expect(await prodOf(id)).toMatchObject({ killed: false, enabled: true, rolloutPct: 5, schedule: [] });
    expect(await stopsOf(id)).toEqual([]);
    expect(await checkOf(id)).toBeNull();
    // While the query hung, the intervals that passed started no second query of the guard.
    expect(prometheus.maxHeld).toBe(1);
  });

  it('drops the late result of a replaced guard: the new guard is judged by its own checks only', async () => {
    const id = await newFlag('replaced');
    const step = { at: at(3_600_000), set: { rolloutPct: 50 } };
    expect((await admin.put(config(id), { enabled: true, rolloutPct: 5, schedule: [{ ...step, guard: hanging }] })).status).toBe(200);
    await advanceUntil(
      0,
      () => prometheus.held.length,
      (n) => n === 1,
    );
    await intervalsPass(3);
    expect((await admin.put(config(id), { schedule: [{ ...step, guard: passing }] })).status).toBe(200);
    // The new guard is checked at once.
    await advanceUntil(
      0,
      () => checkOf(id),
      (check) => check?.query === 'vector(0)',
    );

    await failLateQueries('replaced', id);
    expect(await prodOf(id)).toMatchObject({ killed: false, schedule: [{ ...step, guard: passing }] });
    expect(await stopsOf(id)).toEqual([]);
    expect(await checkOf(id)).toMatchObject({ query: 'vector(0)', result: 'pass', value: 0, failures: 0 });
    expect(prometheus.maxHeld).toBe(1);
  });

  it('stops a rollout once after 3 failed queries, and a new rollout is not stopped by the old guard', async () => {
    const id = await newFlag('restarted');
    const first = { at: at(3_600_000), set: { rolloutPct: 50 }, guard: hanging };
    expect((await admin.put(config(id), { enabled: true, rolloutPct: 5, schedule: [first] })).status).toBe(200);
    await advanceUntil(
      0,
      () => prometheus.held.length,
      (n) => n === 1,
    );
    await intervalsPass(5);
    // The queries fail one by one until 3 in a row stop the rollout.
    for (let failures = 0; failures < 3; ) {
      if (prometheus.held.length === 0)
        await advanceUntil(
          1000,
          () => prometheus.held.length,
          (n) => n > 0,
        );
      const logged = logsOf('restarted', 'guard query failed').length;
      prometheus.fail(1);
      const failed = await until(
        async () => logsOf('restarted', 'guard query failed'),
        (lines) => lines.length > logged,
      );
      failures = failed.at(-1)?.failures;
    }
    await until(
      async () => logsOf('restarted', 'guarded rollout stopped').length,
      (n) => n > 0,
    );
    const stopped = await until(
      () => prodOf(id),
      (env) => env.schedule.length === 0,
    );
    expect(stopped).toMatchObject({ killed: true, killedBy: 'guard', rolloutPct: 5 });
    expect(await stopsOf(id)).toHaveLength(2);

    // A new rollout, its kill cleared, watched by a guard that passes.
    const second = { at: at(7_200_000), set: { rolloutPct: 50 }, guard: passing };
    const restarted = await admin.put(config(id), { schedule: [second], clearKill: true });
    expect(restarted.body.environments.prod).toMatchObject({ killed: false, schedule: [second] });
    await advanceUntil(
      0,
      () => checkOf(id),
      (check) => check?.query === 'vector(0)',
    );

    await failLateQueries('restarted', id);
    expect(await prodOf(id)).toMatchObject({ killed: false, schedule: [second] });
    expect(await stopsOf(id)).toHaveLength(2);
    expect(logsOf('restarted', 'guarded rollout stopped')).toHaveLength(1);
    expect(await checkOf(id)).toMatchObject({ query: 'vector(0)', result: 'pass', failures: 0 });
    expect(prometheus.maxHeld).toBe(1);
  });
});
