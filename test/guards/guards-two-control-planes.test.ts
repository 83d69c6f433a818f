import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../cluster/cluster.js';
import { hostActions } from '../cluster/cluster-client.js';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { until } from '../helpers/deadlines.js';
import type { Json } from '../helpers/http-client.js';
import { POSTGRES_MISSING } from '../helpers/postgres.js';
import { MetricsExporter, PROMETHEUS_MISSING, PrometheusServer } from '../helpers/prometheus.mjs';
import { StalledPrometheus } from '../helpers/stalled-prometheus.js';
import { sample } from '../metrics/prometheus-text.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const at = (msFromNow: number) => new Date(Math.ceil((Date.now() + msFromNow) / 1000) * 1000).toISOString();

/** Instant queries Prometheus has answered so far, from its own /metrics. */
async function queriesAnswered(prometheus: PrometheusServer): Promise<number> {
  const text = await (await fetch(`${prometheus.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('prometheus_http_requests_total{') && l.includes('handler="/api/v1/query"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** A guard counter of the flag `shared` summed over the control planes' /metrics, as a sum by (…) over instances would. */
async function guardCount(urls: string[], name: string, labels: Record<string, string>): Promise<number> {
  let total = 0;
  for (const url of urls) {
    const text = await (await fetch(`${url}/metrics`)).text();
    total += sample(text, name, { org: 'acme', project: 'shop', environment: 'prod', flag: 'shared', ...labels }) ?? 0;
  }
  return total;
}

describe.skipIf(POSTGRES_MISSING !== null || PROMETHEUS_MISSING !== null)('a guarded rollout on two control planes', () => {
  let exporter: MetricsExporter;
  let prometheus: PrometheusServer;
  let cluster: Cluster;

  beforeAll(async () => {
    exporter = await MetricsExporter.start();
    prometheus = await PrometheusServer.start([`127.0.0.1:${exporter.port}`]);
    cluster = await startCluster({ controlPlanes: 2, env: { FLAGOPS_PROMETHEUS_URL: prometheus.url } });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    await prometheus?.stop();
    await exporter?.close();
  }, 60_000);

  it('is checked once per interval between them, and stopped once: one kill and one removal on the git remote', async () => {
    const [a, b] = cluster.controlPlanes;
    const series = 'checkout_error_ratio{flag="shared"}';
    exporter.set(series, 0.01);
    await prometheus.waitFor(series, (v) => v === 0.01);
    const project = await createProject(a.api, 'shop');
    const flag = await createFlag(a.api, project.id, { key: 'shared' });
    const guard = { query: series, max: 0.05, intervalSeconds: 1 };
    const schedule = [
      { at: at(600_000), set: { rolloutPct: 50 }, guard },
      { at: at(1_200_000), set: { rolloutPct: 100 }, guard },
    ];
    expect((await a.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 10, schedule })).status).toBe(
      200,
    );
    // Both watch it once b has the schedule too.
    await until(
      async () => (await b.api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.schedule.length,
      (n) => n === 2,
    );
    // Over a few intervals, each check is run by one of them: about one query a second, not two.
    const urls = [a.url, b.url];
    const passes = () => guardCount(urls, 'flagops_guard_checks_total', { result: 'pass' });
    const [before, passesBefore] = [await queriesAnswered(prometheus), await passes()];
    const started = Date.now();
    await sleep(6_000);
    const queries = (await queriesAnswered(prometheus)) - before;
    const counted = (await passes()) - passesBefore;
    const seconds = (Date.now() - started) / 1000;
    expect(queries).toBeGreaterThan(0);
    expect(queries).toBeLessThan(seconds * 1.5);
    // Each check is counted by the control plane that ran it: summed over both, the counters match the queries
    // (give or take a check in flight as each end of the window was read).
    expect(Math.abs(counted - queries)).toBeLessThanOrEqual(2);

    exporter.set(series, 0.5);
    for (const cp of [a, b])
      await until(
        async () => (await cp.api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod as Json,
        (prod) => prod.killed && prod.schedule.length === 0,
        30_000,
      );
    // Each decision is one commit on the remote, whichever control plane made it.
    await until(
      async () => hostActions(cluster.gitHost.gitdir).filter((line) => line.endsWith('shared prod')),
      (lines) => lines.filter((l) => l.startsWith('guard_failed')).length === 2,
      10_000,
    );
    await sleep(3_000);
    const actions = hostActions(cluster.gitHost.gitdir).filter((line) => line.endsWith('shared prod'));
    expect(actions.filter((l) => l.startsWith('guard_failed'))).toEqual(['guard_failed shared prod', 'guard_failed shared prod']);
    expect(actions.filter((l) => l.startsWith('kill'))).toEqual([]);
    // One stop, counted by the control plane whose commit removed the steps.
    expect(await guardCount(urls, 'flagops_guard_stops_total', { reason: 'breach' })).toBe(1);
    expect(await guardCount(urls, 'flagops_guard_checks_total', { result: 'breach' })).toBeGreaterThanOrEqual(1);
  }, 120_000);
});

describe.skipIf(POSTGRES_MISSING !== null)('a guard whose query hangs, on two control planes', () => {
  let prometheus: StalledPrometheus;
  let cluster: Cluster;

  beforeAll(async () => {
    prometheus = await StalledPrometheus.start();
    cluster = await startCluster({ controlPlanes: 2, logLevel: 'info', env: { FLAGOPS_PROMETHEUS_URL: prometheus.url } });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    await prometheus?.close();
  }, 60_000);

  /** The log lines of every control plane with this message, about the flag `hanging`. */
  const logged = (msg: string) =>
    cluster.controlPlanes
      .flatMap((cp) => cp.process.stderr.join('').split('\n'))
      .filter((line) => line.includes(`"msg":"${msg}`) && line.includes('"flag":"hanging"'));

  it('is queried by one of them at a time, and its late result after a cancel kills nothing', async () => {
    const [a, b] = cluster.controlPlanes;
    const project = await createProject(a.api, 'shop');
    const flag = await createFlag(a.api, project.id, { key: 'hanging' });
    const schedule = [{ at: at(3_600_000), set: { rolloutPct: 50 }, guard: { query: 'up', max: 1, intervalSeconds: 1 } }];
    const path = `/api/v1/flags/${flag.id}/environments/prod/config`;
    expect((await a.api.put(path, { enabled: true, rolloutPct: 5, schedule })).status).toBe(200);
    await until(
      async () => prometheus.held.length,
      (n) => n === 1,
    );
    // Intervals pass on both while the query hangs (short of its 5-second timeout): no second query starts.
    await sleep(3_000);
    expect(prometheus.maxHeld).toBe(1);

    const cancelled = await b.api.put(path, { schedule: [] });
    expect(cancelled.body.environments.prod).toMatchObject({ schedule: [], nextStep: null });
    const answered = prometheus.fail();
    // Each answer is dropped, or counted as one failure by a control plane that had not yet heard of the cancel.
    await until(
      async () => ({
        handled: logged('late guard check dropped').length + logged('guard query failed').length,
        killed: (await a.api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.killed,
      }),
      (seen) => seen.handled >= answered || seen.killed,
    );
    for (const cp of [a, b]) {
      expect((await cp.api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod).toMatchObject({ killed: false, schedule: [] });
      expect((await cp.api.get(`/api/v1/flags/${flag.id}/environments/prod/guard-check`)).body.check).toBeNull();
    }
    expect(hostActions(cluster.gitHost.gitdir).filter((line) => line.startsWith('guard_failed'))).toEqual([]);
    expect(logged('guarded rollout stopped')).toEqual([]);
  }, 120_000);
});
