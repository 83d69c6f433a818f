import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/foundations/config/config.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { sample } from './prometheus-text.js';

const scrape = async (url: string, authorization?: string) => {
  const res = await fetch(`${url}/metrics`, { headers: authorization ? { authorization } : {} });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
};

describe('GET /metrics of npm start (metrics on, no token)', () => {
  let svc: TestService;
  let admin: HttpClient;
  let flag: Json;
  let sdkKey: string;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    const project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout-v2' })).body;
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
  });
  afterAll(() => svc?.stop());

  it('the evaluation port counts evaluations by project slug, flag, variation and reason, beside what it serves', async () => {
    const sdk = httpClient(svc.evalUrl, sdkKey);
    for (let i = 0; i < 3; i++)
      expect((await sdk.post('/v1/evaluate', { key: 'checkout-v2', context: { userId: `u${i}` } })).status).toBe(200);
    await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'test' });
    await sdk.post('/v1/evaluate', { keys: ['checkout-v2', 'no-such-flag'] });
    const version = (await sdk.get('/v1/snapshot')).body.version;
    const { status, type, text } = await scrape(svc.evalUrl);
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    const labels = { project: 'shop', environment: 'prod', flag: 'checkout-v2', org: 'acme' };
    expect(sample(text, 'flagops_evaluations_total', { ...labels, variation: 'on', reason: 'default' })).toBe(3);
    expect(sample(text, 'flagops_evaluations_total', { ...labels, variation: 'off', reason: 'killed' })).toBe(1);
    expect(text).not.toContain('no-such-flag');
    expect(sample(text, 'flagops_snapshot_version', { project: 'shop', environment: 'prod' })).toBe(version);
    expect(sample(text, 'flagops_stream_clients')).toBe(0);
    expect(sample(text, 'flagops_invalid_files', { org: 'acme' })).toBe(0);
    expect(
      sample(text, 'flagops_http_request_duration_seconds_count', { server: 'evaluation', route: '/v1/evaluate', status: '200' }),
    ).toBe(4);
    expect(
      sample(text, 'flagops_http_request_duration_seconds_count', { server: 'evaluation', route: '/v1/snapshot', status: '200' }),
    ).toBe(1);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).not.toContain('flagops_commits_total');
  });

  it('the evaluation port names every route it has by its pattern, whatever answers it; only paths it has not are unmatched', async () => {
    const sdk = httpClient(svc.evalUrl, sdkKey);
    await fetch(`${svc.evalUrl}/healthz`);
    await sdk.get('/v1/snapshot?since=1');
    await sdk.post('/ofrep/v1/evaluate/flags', { context: { targetingKey: 'u1' } });
    await sdk.post('/ofrep/v1/evaluate/flags/checkout-v2', { context: { targetingKey: 'u1' } });
    await sdk.get('/ofrep/v1/configuration');
    await sdk.request('DELETE', '/v1/evaluate');
    await sdk.get('/no/such/path');
    const { text } = await scrape(svc.evalUrl);
    const count = (route: string, status: string) =>
      sample(text, 'flagops_http_request_duration_seconds_count', { server: 'evaluation', route, status });
    expect(count('/healthz', '200')).toBeGreaterThanOrEqual(1);
    expect(count('/v1/snapshot', '200')).toBeGreaterThanOrEqual(1);
    expect(count('/ofrep/v1/evaluate/flags', '200')).toBe(1);
    expect(count('/ofrep/v1/evaluate/flags/:key', '200')).toBe(1);
    expect(count('/ofrep/v1/configuration', '200')).toBe(1);
    expect(count('/v1/evaluate', '405')).toBe(1);
    expect(count('unmatched', '404')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('route="/no/such/path"');
  });

  it('the control port counts commits by action and times kills to being served, by route pattern', async () => {
    const before = await scrape(svc.controlUrl);
    const kills = sample(before.text, 'flagops_commits_total', { action: 'kill' }) ?? 0;
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true });
    await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, {});
    const { status, text } = await scrape(svc.controlUrl);
    expect(status).toBe(200);
    expect(sample(text, 'flagops_commits_total', { action: 'project_create' })).toBe(1);
    expect(sample(text, 'flagops_commits_total', { action: 'flag_create' })).toBe(1);
    expect(sample(text, 'flagops_commits_total', { action: 'kill' })).toBe(kills + 1);
    expect(sample(text, 'flagops_kill_propagation_seconds_count')).toBeGreaterThanOrEqual(2);
    const route = { server: 'control', route: '/api/v1/flags/:id/environments/:env/kill', status: '200' };
    expect(sample(text, 'flagops_http_request_duration_seconds_count', route)).toBeGreaterThanOrEqual(2);
    expect(text).not.toContain(flag.id);
    expect(sample(text, 'flagops_auth_failures_total', { kind: 'api_key' })).toBeDefined();
    expect(text).not.toContain('flagops_evaluations_total');
  });

  it('counts a wrong key among the failed authentications', async () => {
    const before = sample((await scrape(svc.controlUrl)).text, 'flagops_auth_failures_total', { kind: 'api_key' })!;
    expect((await httpClient(svc.controlUrl, 'svc_adm_wrongwrongwrongwrongwrong00').get('/api/v1/projects')).status).toBe(401);
    expect(sample((await scrape(svc.controlUrl)).text, 'flagops_auth_failures_total', { kind: 'api_key' })).toBe(before + 1);
  });
});

describe('FLAGOPS_METRICS_TOKEN and FLAGOPS_METRICS', () => {
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
  });

  it('are read from the environment', () => {
    expect(loadConfig({ FLAGOPS_METRICS_TOKEN: 'tok' }).metrics).toEqual({ enabled: true, token: 'tok' });
    expect(loadConfig({ FLAGOPS_METRICS: 'off' }).metrics).toEqual({ enabled: false });
    expect(() => loadConfig({ FLAGOPS_METRICS: 'sometimes' })).toThrow(/FLAGOPS_METRICS must be on or off/);
  });

  it('with a token, both ports answer 401 with the error body unless the Bearer token is that token', async () => {
    svc = await startTestService({ metrics: { enabled: true, token: 'metrics-token-1234' } });
    for (const url of [svc.controlUrl, svc.evalUrl]) {
      for (const authorization of [undefined, 'Bearer wrong-token', `Bearer ${svc.admin}`]) {
        const res = await scrape(url, authorization);
        expect(res.status, `${url} ${authorization}`).toBe(401);
        expect(JSON.parse(res.text).error.code).toBe('unauthorized');
      }
      const ok = await scrape(url, 'Bearer metrics-token-1234');
      expect(ok.status).toBe(200);
      expect(ok.text).toContain('flagops_http_request_duration_seconds');
    }
  });

  it('off: no /metrics on either port, and the API works as ever', async () => {
    svc = await startTestService({ metrics: { enabled: false } });
    expect((await scrape(svc.controlUrl)).status).toBe(404);
    expect((await scrape(svc.evalUrl)).status).toBe(404);
    expect((await httpClient(svc.controlUrl, svc.admin).post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).status).toBe(201);
  });
});
