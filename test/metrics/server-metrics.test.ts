import Router from '@koa/router';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/foundations/http/serve.js';
import { EvaluationTotals } from '../../src/foundations/metrics/evaluation-totals.js';
import { instrumentApp } from '../../src/foundations/metrics/metrics-http.js';
import { ServerMetrics } from '../../src/foundations/metrics/server-metrics.js';
import { ControlFamilies, registerServingFamilies } from '../../src/foundations/metrics/service-families.js';
import { sample } from './prometheus-text.js';

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function serve(metrics: ServerMetrics): Promise<string> {
  const app = new Koa();
  const router = new Router();
  router.get('/api/v1/flags/:id', (ctx) => {
    ctx.body = { id: ctx.params.id };
  });
  app.use(router.routes());
  instrumentApp(app, metrics);
  const server = await listen(app, '127.0.0.1', 0);
  running.push(server);
  return server.url;
}

describe('GET /metrics', () => {
  it('answers Prometheus text with process metrics and request durations labelled by route pattern, never the raw path', async () => {
    const url = await serve(new ServerMetrics('control'));
    expect((await fetch(`${url}/api/v1/flags/flg_123`)).status).toBe(200);
    expect((await fetch(`${url}/nowhere/secret-path`)).status).toBe(404);
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    const labels = { server: 'control', route: '/api/v1/flags/:id', status: '200' };
    expect(sample(text, 'flagops_http_request_duration_seconds_count', labels)).toBe(1);
    // Buckets are cumulative: the one request is in every bucket from its own up to +Inf.
    expect(sample(text, 'flagops_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(1);
    expect(sample(text, 'flagops_http_request_duration_seconds_bucket', { ...labels, le: '10' })).toBe(1);
    expect(sample(text, 'flagops_http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
    expect(text).toContain('# TYPE flagops_http_request_duration_seconds histogram');
    expect(sample(text, 'flagops_http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).toBe(1);
    expect(text).not.toContain('flg_123');
    expect(text).not.toContain('secret-path');
    expect(sample(text, 'flagops_auth_failures_total', { kind: 'api_key' })).toBeGreaterThanOrEqual(0);
  });

  it('with a token set, answers 401 with the error body unless the Bearer token is the one set', async () => {
    const url = await serve(new ServerMetrics('evaluation', 's3cret-token'));
    for (const authorization of [undefined, 'Bearer wrong', 'Basic czNjcmV0LXRva2Vu', 'Bearer s3cret-token-and-more']) {
      const res = await fetch(`${url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('unauthorized');
      expect(body.error.message).toMatch(/FLAGOPS_METRICS_TOKEN/);
    }
    const ok = await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer s3cret-token' } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('flagops_http_request_duration_seconds');
  });
});

describe('the flagops families', () => {
  it('flagops_evaluations_total counts per project slug, environment, flag, variation and reason', async () => {
    const metrics = new ServerMetrics('evaluation');
    const totals = new EvaluationTotals();
    totals.register(metrics.registry);
    const prod = totals.counter('acme', 'shop', 'prod');
    prod('checkout-v2', 'on', 'rollout');
    prod('checkout-v2', 'on', 'rollout');
    prod('checkout-v2', 'off', 'killed');
    totals.counter('acme', 'shop', 'prod')('checkout-v2', 'on', 'rollout'); // the same scope again
    totals.counter('acme', 'shop', 'dev')('checkout-v2', 'on', 'default');
    const text = await metrics.text();
    const labels = { project: 'shop', environment: 'prod', flag: 'checkout-v2', variation: 'on', reason: 'rollout', org: 'acme' };
    expect(sample(text, 'flagops_evaluations_total', labels)).toBe(3);
    expect(sample(text, 'flagops_evaluations_total', { environment: 'prod', variation: 'off', reason: 'killed' })).toBe(1);
    expect(sample(text, 'flagops_evaluations_total', { environment: 'dev', reason: 'default' })).toBe(1);
    prod('checkout-v2', 'on', 'rollout');
    expect(sample(await metrics.text(), 'flagops_evaluations_total', labels)).toBe(4);
  });

  it('serving gauges are read at scrape time; commits and kill propagation are counted', async () => {
    const metrics = new ServerMetrics('control');
    let version = 3;
    registerServingFamilies(metrics.registry, {
      snapshots: () => [{ org: 'acme', projectSlug: 'shop', environment: 'prod', version }],
      streamClients: () => 2,
      invalidFiles: () => [{ org: 'acme', count: 1 }],
    });
    const control = new ControlFamilies(metrics.registry);
    control.countCommit('kill');
    control.countCommit('kill');
    control.countCommit('config_update');
    control.observeKillPropagation(0.004);
    version = 4;
    const text = await metrics.text();
    expect(sample(text, 'flagops_snapshot_version', { project: 'shop', environment: 'prod' })).toBe(4);
    expect(sample(text, 'flagops_stream_clients')).toBe(2);
    expect(sample(text, 'flagops_invalid_files', { org: 'acme' })).toBe(1);
    expect(sample(text, 'flagops_commits_total', { action: 'kill' })).toBe(2);
    expect(sample(text, 'flagops_commits_total', { action: 'config_update' })).toBe(1);
    expect(sample(text, 'flagops_kill_propagation_seconds_count')).toBe(1);
    expect(sample(text, 'flagops_kill_propagation_seconds_bucket', { le: '0.005' })).toBe(1);
  });
});
