import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judge } from '../../src/features/guards/guard-verdict.js';
import { queryPrometheus } from '../../src/features/guards/prometheus-query.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../src/foundations/repository/serialize-file.js';
import { until } from '../helpers/deadlines.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { MetricsExporter, PROMETHEUS_MISSING, PrometheusServer } from '../helpers/prometheus.mjs';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { sample } from '../metrics/prometheus-text.js';

const at = (msFromNow: number) => new Date(Math.ceil((Date.now() + msFromNow) / 1000) * 1000).toISOString();
/** A rollout stops or a step applies within a few guard intervals; generous for a busy machine. */
const WITHIN_MS = 30_000;

/** The guard counters of one flag in prod, from the control port's /metrics (undefined: no such series yet). */
async function guardCounts(controlUrl: string, flag: string) {
  const text = await (await fetch(`${controlUrl}/metrics`)).text();
  const labels = { org: 'acme', project: 'shop', environment: 'prod', flag };
  return {
    pass: sample(text, 'flagops_guard_checks_total', { ...labels, result: 'pass' }),
    breach: sample(text, 'flagops_guard_checks_total', { ...labels, result: 'breach' }),
    error: sample(text, 'flagops_guard_checks_total', { ...labels, result: 'error' }),
    stoppedByBreach: sample(text, 'flagops_guard_stops_total', { ...labels, reason: 'breach' }),
    stoppedByErrors: sample(text, 'flagops_guard_stops_total', { ...labels, reason: 'errors' }),
  };
}

describe.skipIf(PROMETHEUS_MISSING !== null)('guarded rollouts, checked against a real Prometheus', () => {
  let exporter: MetricsExporter;
  let prometheus: PrometheusServer;
  let svc: TestService;
  let admin: HttpClient;
  let sdk: HttpClient;
  let projectId: string;

  beforeAll(async () => {
    exporter = await MetricsExporter.start();
    prometheus = await PrometheusServer.start([`127.0.0.1:${exporter.port}`]);
    svc = await startTestService({ prometheusUrl: prometheus.url });
    admin = httpClient(svc.controlUrl, svc.admin);
    projectId = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body.id;
    const key = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId, environment: 'prod' })).body.key;
    sdk = httpClient(svc.evalUrl, key);
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await prometheus?.stop();
    await exporter?.close();
  });

  async function newFlag(key: string): Promise<string> {
    const res = await admin.post(`/api/v1/projects/${projectId}/flags`, { key });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  const config = (id: string) => `/api/v1/flags/${id}/environments/prod/config`;
  const prodOf = async (id: string): Promise<Json> => (await admin.get(`/api/v1/flags/${id}`)).body.environments.prod;
  const auditOf = async (id: string): Promise<Json[]> => (await admin.get(`/api/v1/audit?flagId=${id}&environment=prod`)).body.entries;
  const evaluate = async (key: string): Promise<Json> => (await sdk.post('/v1/evaluate', { key, context: { userId: 'u1' } })).body[key];

  it('reads the first sample of a vector or a scalar, and takes anything else for a failed query', async () => {
    expect(await queryPrometheus(prometheus.url, 'scalar(vector(2.5))')).toEqual({ ok: true, value: 2.5 });
    expect(await queryPrometheus(`${prometheus.url}/`, 'vector(1) * 3')).toEqual({ ok: true, value: 3 });
    expect(await queryPrometheus(prometheus.url, 'vector(0) / 0')).toEqual({ ok: false, error: 'the query returned NaN' });
    // Errors over no requests: +Inf, above any max (and -Inf below any min), not a failed query.
    const infinite = await queryPrometheus(prometheus.url, 'vector(1) / 0');
    expect(infinite).toEqual({ ok: true, value: Number.POSITIVE_INFINITY });
    expect(judge({ query: 'errors / requests', max: 0.05 }, infinite)).toMatchObject({
      kind: 'breach',
      text: 'errors / requests = +Inf, above max 0.05',
    });
    const negative = await queryPrometheus(prometheus.url, 'vector(-1) / 0');
    expect(judge({ query: 'throughput', min: 0 }, negative)).toMatchObject({ kind: 'breach', text: 'throughput = -Inf, below min 0' });
    expect(await queryPrometheus(prometheus.url, 'absent_metric_of_no_one')).toEqual({ ok: false, error: 'the query returned no samples' });
    expect(await queryPrometheus(prometheus.url, 'up[1m]')).toMatchObject({ ok: false, error: expect.stringContaining('matrix result') });
    expect(await queryPrometheus(prometheus.url, 'sum(')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^Prometheus answered 400: bad_data: /),
    });
    expect(await queryPrometheus('http://127.0.0.1:9', 'up')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^Prometheus unreachable: /),
    });
    expect(await queryPrometheus(undefined, 'up')).toMatchObject({
      ok: false,
      error: expect.stringContaining('FLAGOPS_PROMETHEUS_URL is not set'),
    });
  });

  it('stops the rollout when the metric crosses its bound: the kill is served, the remaining steps are gone, guard_failed names query, value and bound', async () => {
    const series = 'checkout_error_ratio{flag="breach"}';
    exporter.set(series, 0.01);
    await prometheus.waitFor(series, (v) => v === 0.01);
    const id = await newFlag('breach');
    const guard = { query: series, max: 0.05, intervalSeconds: 1 };
    const schedule = [
      { at: at(600_000), set: { rolloutPct: 50 }, guard },
      { at: at(1_200_000), set: { rolloutPct: 100 }, guard },
    ];
    const res = await admin.put(config(id), { enabled: true, rolloutPct: 100, schedule });
    expect(res.status).toBe(200);
    expect(res.body.environments.prod.schedule[0].guard).toEqual(guard);
    // Within bounds: the guard is checked while the rollout runs, and its last value is shown.
    const passed = await until(
      async () => (await admin.get(`/api/v1/flags/${id}/environments/prod/guard-check`)).body.check,
      (check) => check?.result === 'pass',
      WITHIN_MS,
    );
    expect(passed).toMatchObject({ query: series, value: 0.01, stepAt: schedule[0].at, failures: 0 });
    expect((await evaluate('breach')).value).toBe(true);
    const early = await guardCounts(svc.controlUrl, 'breach');
    expect(early.pass).toBeGreaterThanOrEqual(1);
    expect(early).toMatchObject({ breach: undefined, error: undefined, stoppedByBreach: undefined });

    exporter.set(series, 0.5);
    const killed = await until(
      () => evaluate('breach'),
      (body) => body.reason === 'killed',
      WITHIN_MS,
    );
    expect(killed.value).toBe(false);
    const prod = await until(
      () => prodOf(id),
      (env) => env.schedule.length === 0,
      WITHIN_MS,
    );
    expect(prod).toMatchObject({ killed: true, killedBy: 'guard', schedule: [], nextStep: null, rolloutPct: 100 });
    const stops = (await auditOf(id)).filter((e) => e.action === 'guard_failed');
    expect(stops).toHaveLength(2);
    for (const entry of stops) {
      expect(entry.actor).toMatchObject({ type: 'scheduler', name: 'guard' });
      expect(entry.reason).toContain(series);
      expect(entry.reason).toContain('= 0.5');
      expect(entry.reason).toContain('above max 0.05');
    }
    expect((await admin.get('/api/v1/audit?action=guard_failed')).body.entries.map((e: Json) => e.flagKey)).toContain('breach');
    // Checks by result, and one stop: the rollout is stopped once, however many checks saw the breach.
    const counts = await guardCounts(svc.controlUrl, 'breach');
    expect(counts.breach).toBeGreaterThanOrEqual(1);
    expect(counts).toMatchObject({ error: undefined, stoppedByBreach: 1, stoppedByErrors: undefined });
  }, 90_000);

  it('applies guarded steps whose checks pass, each audit entry carrying the value seen', async () => {
    const series = 'checkout_error_ratio{flag="healthy"}';
    exporter.set(series, 0.02);
    await prometheus.waitFor(series, (v) => v === 0.02);
    const id = await newFlag('healthy');
    const guard = { query: series, max: 0.05, min: 0, intervalSeconds: 1 };
    const schedule = [
      { at: at(3_000), set: { enabled: true, rolloutPct: 50 }, guard },
      { at: at(5_000), set: { rolloutPct: 100 }, guard },
    ];
    expect((await admin.put(config(id), { schedule })).status).toBe(200);
    const prod = await until(
      () => prodOf(id),
      (env) => env.schedule.length === 0,
      WITHIN_MS,
    );
    expect(prod).toMatchObject({ enabled: true, rolloutPct: 100, killed: false });
    const applied = (await auditOf(id)).filter((e) => e.action === 'scheduled_change');
    expect(applied).toHaveLength(2);
    for (const entry of applied) {
      expect(entry.reason).toBe(`guard passed: ${series} = 0.02, within min 0 and max 0.05`);
      expect(entry.message).toMatch(/^scheduled step of healthy in prod: .* \(guard value 0\.02\)$/);
    }
    expect((await auditOf(id)).some((e) => e.action === 'guard_failed')).toBe(false);
    // At least the checks of the two steps as they fell due; nothing breached, nothing stopped.
    const counts = await guardCounts(svc.controlUrl, 'healthy');
    expect(counts.pass).toBeGreaterThanOrEqual(2);
    expect(counts).toMatchObject({ breach: undefined, error: undefined, stoppedByBreach: undefined, stoppedByErrors: undefined });
  }, 90_000);

  it('stops the rollout after 3 failed queries in a row (a query with no samples cannot vouch for it)', async () => {
    const id = await newFlag('unmeasured');
    const query = 'checkout_error_ratio{flag="no-such-series"}';
    const schedule = [{ at: at(600_000), set: { enabled: true, rolloutPct: 100 }, guard: { query, max: 0.05, intervalSeconds: 1 } }];
    expect((await admin.put(config(id), { enabled: true, rolloutPct: 10, schedule })).status).toBe(200);
    const prod = await until(
      () => prodOf(id),
      (env) => env.killed && env.schedule.length === 0,
      WITHIN_MS,
    );
    expect(prod.rolloutPct).toBe(10);
    const check = (await admin.get(`/api/v1/flags/${id}/environments/prod/guard-check`)).body.check;
    // The stopped rollout has no guard left to watch: its checks are forgotten.
    expect(check).toBeNull();
    const stops = (await auditOf(id)).filter((e) => e.action === 'guard_failed');
    expect(stops).toHaveLength(2);
    expect(stops[0].reason).toContain(query);
    expect(stops[0].reason).toContain('the query returned no samples');
    expect(stops[0].reason).toContain('3 failed queries in a row');
    const counts = await guardCounts(svc.controlUrl, 'unmeasured');
    expect(counts.error).toBeGreaterThanOrEqual(3);
    expect(counts).toMatchObject({ pass: undefined, breach: undefined, stoppedByErrors: 1, stoppedByBreach: undefined });
  }, 90_000);

  it('a guard changed on a watched schedule is checked at once with its new query, not when the old interval runs out', async () => {
    const calm = 'checkout_error_ratio{flag="rewatched"}';
    exporter.set(calm, 0.01);
    await prometheus.waitFor(calm, (v) => v === 0.01);
    const id = await newFlag('rewatched');
    const step = { at: at(3_600_000), set: { rolloutPct: 50 } };
    const written = await admin.put(config(id), {
      enabled: true,
      rolloutPct: 10,
      schedule: [{ ...step, guard: { query: calm, max: 0.05, intervalSeconds: 86_400 } }],
    });
    expect(written.status).toBe(200);
    await until(
      async () => (await admin.get(`/api/v1/flags/${id}/environments/prod/guard-check`)).body.check,
      (check) => check?.result === 'pass',
      WITHIN_MS,
    );
    // The same step, now guarded by a query already past its bound, still checked once a day.
    const breaching = `${calm} * 100`;
    const changed = await admin.put(config(id), {
      schedule: [{ ...step, guard: { query: breaching, max: 0.5, intervalSeconds: 86_400 } }],
    });
    expect(changed.status).toBe(200);
    const prod = await until(
      () => prodOf(id),
      (env) => env.killed && env.schedule.length === 0,
      WITHIN_MS,
    );
    expect(prod.rolloutPct).toBe(10);
    const stop = (await auditOf(id)).find((e) => e.action === 'guard_failed');
    expect(stop.reason).toContain(`${breaching} = 1, above max 0.5`);
  }, 90_000);

  it('a guard watches the rollout until its last step is applied: an applied step hands its guard to the next', async () => {
    const series = 'checkout_error_ratio{flag="handover"}';
    exporter.set(series, 0.01);
    await prometheus.waitFor(series, (v) => v === 0.01);
    const id = await newFlag('handover');
    const guard = { query: series, max: 0.05, intervalSeconds: 1 };
    const schedule = [
      { at: at(2_000), set: { enabled: true, rolloutPct: 25 }, guard },
      { at: at(3_600_000), set: { rolloutPct: 100 } },
    ];
    expect((await admin.put(config(id), { schedule })).status).toBe(200);
    const applied = await until(
      () => prodOf(id),
      (env) => env.schedule.length === 1,
      WITHIN_MS,
    );
    expect(applied).toMatchObject({ enabled: true, rolloutPct: 25, killed: false });
    expect(applied.schedule[0]).toEqual({ ...schedule[1], guard });
    exporter.set(series, 0.5);
    const stopped = await until(
      () => prodOf(id),
      (env) => env.killed && env.schedule.length === 0,
      WITHIN_MS,
    );
    expect(stopped).toMatchObject({ killedBy: 'guard', rolloutPct: 25 });
  }, 90_000);

  it('a guard that breaches when its step falls due stops the rollout instead of applying the step', async () => {
    const series = 'checkout_error_ratio{flag="due"}';
    exporter.set(series, 0.9);
    await prometheus.waitFor(series, (v) => v === 0.9);
    const id = await newFlag('due');
    // A long interval: the check that stops it is the one made when the step falls due (or the first, at once).
    const schedule = [
      { at: at(2_000), set: { enabled: true, rolloutPct: 100 }, guard: { query: series, max: 0.5, intervalSeconds: 3600 } },
    ];
    expect((await admin.put(config(id), { schedule })).status).toBe(200);
    const prod = await until(
      () => prodOf(id),
      (env) => env.schedule.length === 0 && env.killed,
      WITHIN_MS,
    );
    expect(prod).toMatchObject({ enabled: false, rolloutPct: 0 });
    expect((await auditOf(id)).some((e) => e.action === 'scheduled_change')).toBe(false);
    expect(await guardCounts(svc.controlUrl, 'due')).toMatchObject({ pass: undefined, stoppedByBreach: 1 });
  }, 90_000);
});

describe('guards without FLAGOPS_PROMETHEUS_URL', () => {
  let svc: TestService;
  let admin: HttpClient;
  let flagId: string;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    const projectId = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body.id;
    flagId = (await admin.post(`/api/v1/projects/${projectId}/flags`, { key: 'checkout' })).body.id;
  });
  afterAll(() => svc?.stop());

  it('refuses a guarded schedule or rollout plan with 400 naming the setting, and commits nothing', async () => {
    const guard = { query: 'up', min: 1 };
    const put = await admin.put(`/api/v1/flags/${flagId}/environments/prod/config`, {
      schedule: [
        { at: at(600_000), set: { rolloutPct: 50 } },
        { at: at(1_200_000), set: { rolloutPct: 100 }, guard },
      ],
    });
    expect(put.status).toBe(400);
    expect(put.body.error).toMatchObject({ code: 'invalid_input' });
    expect(put.body.error.message).toContain('schedule[1].guard');
    expect(put.body.error.message).toContain('FLAGOPS_PROMETHEUS_URL');
    const plan = await admin.post(`/api/v1/flags/${flagId}/environments/prod/rollout-plan`, {
      startPct: 5,
      stepPct: 45,
      every: '1h',
      guard,
    });
    expect(plan.status).toBe(400);
    expect(plan.body.error.message).toContain('FLAGOPS_PROMETHEUS_URL');
    expect((await admin.get(`/api/v1/flags/${flagId}`)).body.environments.prod).toMatchObject({ version: 1, schedule: [] });
  });

  it('keeps a guard that arrives in a commit (a merged pull request), reports it in /healthz, and fails safe: the rollout stops', async () => {
    const flag = (await admin.get(`/api/v1/flags/${flagId}`)).body;
    const prod = flag.environments.prod;
    const guard = { query: 'up', min: 1, intervalSeconds: 1 };
    const config = {
      enabled: true,
      rolloutPct: 10,
      valueOn: prod.valueOn,
      valueOff: prod.valueOff,
      version: prod.version + 1,
      rules: [],
      schedule: [{ at: at(600_000), set: { rolloutPct: 100 }, guard }],
    };
    const repo = await svc.service.repos.get('acme');
    await repo.update(() => ({
      changes: [
        { path: layout.configFile('shop', 'prod', 'checkout'), content: serializeRepositoryFile({ kind: 'config', value: config }) },
      ],
      meta: { action: 'change', summary: 'merge pull request: guarded rollout', actor: { type: 'git', name: 'Erin Engineer' } },
      result: null,
    }));
    const health = await until(
      async () => (await admin.get('/healthz')).body,
      (body) => body.guards?.watched === 1,
    );
    expect(health).toMatchObject({ status: 'degraded', guards: { watched: 1, prometheus: false } });
    const stopped = await until(
      async () => (await admin.get(`/api/v1/flags/${flagId}`)).body.environments.prod,
      (env) => env.killed && env.schedule.length === 0,
      WITHIN_MS,
    );
    expect(stopped).toMatchObject({ rolloutPct: 10, killedBy: 'guard' });
    const entries = (await admin.get(`/api/v1/audit?flagId=${flagId}&action=guard_failed`)).body.entries;
    expect(entries).toHaveLength(2);
    expect(entries[0].reason).toContain('FLAGOPS_PROMETHEUS_URL is not set');
    expect(entries[0].reason).toContain('3 failed queries in a row');
    expect((await admin.get('/healthz')).body).toMatchObject({ status: 'ok', guards: { watched: 0 } });
    // The failed queries and the stop are counted on the control port, for an alert on stopped rollouts.
    const counts = await guardCounts(svc.controlUrl, 'checkout');
    expect(counts.error).toBeGreaterThanOrEqual(3);
    expect(counts).toMatchObject({ pass: undefined, breach: undefined, stoppedByErrors: 1, stoppedByBreach: undefined });
  });

  it('refuses a guard without a bound, or with min above max, naming the field', async () => {
    for (const [guard, field] of [
      [{ query: 'up' }, 'schedule[0].guard'],
      [{ query: 'up', min: 2, max: 1 }, 'schedule[0].guard.min'],
      [{ query: '', max: 1 }, 'schedule[0].guard.query'],
      [{ query: 'up', max: 1, intervalSeconds: 0 }, 'schedule[0].guard.intervalSeconds'],
    ] as const) {
      const res = await admin.put(`/api/v1/flags/${flagId}/environments/prod/config`, {
        schedule: [{ at: at(600_000), set: { rolloutPct: 50 }, guard }],
      });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(field);
    }
  });
});
