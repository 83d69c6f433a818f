import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '../control-plane/fixtures.js';
import { until } from '../helpers/deadlines.js';
import { httpClient } from '../helpers/http-client.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { receiver } from '../webhooks/webhook-harness.js';

describe.skipIf(POSTGRES_MISSING !== null)('the service with its state in PostgreSQL, the database down', () => {
  let cluster: PostgresCluster;
  let svc: TestService;
  beforeAll(async () => {
    cluster = await PostgresCluster.start();
    svc = await startTestService({ databaseUrl: await cluster.createDatabase() });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await cluster?.destroy();
  });

  it('keeps evaluating with known keys, answers control-plane writes 503 unavailable, and writes again once it is back', async () => {
    const admin = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(admin, 'shop');
    const sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    const evaluate = () => httpClient(svc.evalUrl, sdkKey).post('/v1/evaluate', { key: 'checkout' });
    expect((await evaluate()).status).toBe(200);
    const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
    expect((await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    const payments = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'payments' })).body;
    const hook = await receiver();
    const webhook = (await admin.post('/api/v1/webhooks', { url: hook.url, actions: ['kill', 'clear_kill'] })).body;

    await cluster.stopServer();
    try {
      expect((await evaluate()).status).toBe(200);
      const refused = await admin.post('/api/v1/keys', { kind: 'agent', name: 'while-down' });
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatchObject({
        code: 'unavailable',
        message: expect.stringMatching(/^the database at .* cannot be reached: /),
      });
      // A change to the flags would not reach the other control planes: refused too, and nothing changed.
      const change = await admin.put(`/api/v1/flags/${payments.id}/environments/prod/config`, { rolloutPct: 50 });
      expect(change.status).toBe(503);
      expect(change.body.error.code).toBe('unavailable');
      expect((await admin.get(`/api/v1/flags/${payments.id}`)).body.environments.prod.rolloutPct).toBe(0);
      expect((await admin.get('/healthz')).body).toMatchObject({ status: 'degraded', database: { reachable: false } });
      // A kill is never refused for the database.
      expect((await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`)).status).toBe(200);
      expect((await evaluate()).body.checkout).toMatchObject({ value: false, reason: 'killed' });
      // Nor is clearing one.
      expect((await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true })).status).toBe(200);
      expect((await evaluate()).body.checkout).toMatchObject({ value: true });
    } finally {
      await cluster.startServer();
    }
    // The kill and its clearing made while it was down are delivered now, with nothing else changed meanwhile.
    const deliveries = await until(
      async () => (await admin.get(`/api/v1/webhooks/${webhook.id}/deliveries`)).body.deliveries,
      (log: Array<{ status: string; action: string }>) => log.length === 2 && log.every((d) => d.status === 'delivered'),
    );
    expect(deliveries.map((d) => d.action)).toEqual(['clear_kill', 'kill']);
    expect(hook.received).toHaveLength(2);
    const created = await until(
      () => admin.post('/api/v1/keys', { kind: 'agent', name: 'after' }),
      (res) => res.status === 201,
    );
    expect(created.body.key).toMatch(/^svc_agt_/);
    expect((await admin.get('/healthz')).body).toMatchObject({ status: 'ok', database: { reachable: true } });
    expect((await evaluate()).status).toBe(200);
  });
});
