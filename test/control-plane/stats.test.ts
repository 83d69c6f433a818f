import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { createFlag, createProject } from './fixtures.js';

describe('GET /flags/:id/environments/:env/stats', () => {
  let svc: TestService;
  let api: HttpClient;
  let flag: Json;
  beforeAll(async () => {
    svc = await startTestService();
    api = httpClient(svc.controlUrl, svc.agent);
    const admin = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(admin, 'shop');
    flag = await createFlag(admin, project.id, { key: 'checkout' });
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    const sdk = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    const evaluation = httpClient(svc.evalUrl, sdk);
    for (let i = 0; i < 3; i++)
      expect((await evaluation.post('/v1/evaluate', { key: 'checkout', context: { userId: `u${i}` } })).status).toBe(200);
  });
  afterAll(() => svc.stop());

  it('counts evaluations per hour and variation; the period defaults to 24h', async () => {
    const res = await api.get(`/api/v1/flags/${flag.id}/environments/prod/stats`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ flagId: flag.id, environment: 'prod', period: '24h' });
    expect(res.body.series).toHaveLength(24);
    const last = res.body.series[23];
    expect(last.hour).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/);
    expect(last.variations).toEqual({ on: 3 });
  });

  it('keeps environments apart', async () => {
    const res = await api.get(`/api/v1/flags/${flag.id}/environments/dev/stats?period=24h`);
    expect(res.body.series.every((h: Json) => Object.keys(h.variations).length === 0)).toBe(true);
  });

  it.each([
    ['7d', 168],
    ['30d', 720],
  ])('period %s has %i hourly entries', async (period, hours) => {
    const res = await api.get(`/api/v1/flags/${flag.id}/environments/prod/stats?period=${period}`);
    expect(res.status).toBe(200);
    expect(res.body.period).toBe(period);
    expect(res.body.series).toHaveLength(hours);
  });

  it('refuses any other period with 400 naming period, and answers 404 for unknown flags and environments', async () => {
    const bad = await api.get(`/api/v1/flags/${flag.id}/environments/prod/stats?period=1y`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('period');
    expect((await api.get(`/api/v1/flags/${flag.id}/environments/qa/stats`)).status).toBe(404);
    expect((await api.get('/api/v1/flags/flg_nope/environments/prod/stats')).status).toBe(404);
  });
});

describe('stats across a restart, with hostile count reports', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.stop());

  it('show the same numbers before and after the restart', async () => {
    const admin = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(admin, 'shop');
    const flag = await createFlag(admin, project.id, { key: 'checkout' });
    const sdk = httpClient(
      svc.evalUrl,
      (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key,
    );
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
    const counts = (count: number, times = 1) => ({
      counts: Array.from({ length: times }, () => ({ flagKey: 'checkout', variation: 'off', hour, count })),
    });
    await sdk.post('/v1/evaluate', { key: 'checkout' });
    await sdk.post('/v1/counts', counts(41));
    // What a publishable key could send to poison the chart: each is taken whole or refused whole.
    await sdk.post('/v1/counts', counts(Number.MAX_SAFE_INTEGER, 2));
    await sdk.post('/v1/counts', counts(Number.MAX_SAFE_INTEGER));
    const series = async () =>
      (await httpClient(svc.controlUrl, svc.admin).get(`/api/v1/flags/${flag.id}/environments/prod/stats`)).body.series;
    const before = await series();
    expect(before.at(-1).variations).toEqual({ off: 42 });
    await svc.restart();
    expect(await series()).toEqual(before);
  });
});
