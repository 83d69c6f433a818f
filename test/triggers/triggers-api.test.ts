import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

/** What Prometheus Alertmanager posts to a webhook receiver (version 4 of its payload). */
function alertmanagerPayload(status: 'firing' | 'resolved', summary: string): Json {
  return {
    version: '4',
    groupKey: '{}:{alertname="CheckoutErrorRate"}',
    truncatedAlerts: 0,
    status,
    receiver: 'flagops',
    groupLabels: { alertname: 'CheckoutErrorRate' },
    commonLabels: { alertname: 'CheckoutErrorRate', severity: 'page' },
    commonAnnotations: { summary },
    externalURL: 'http://alertmanager:9093',
    alerts: [
      {
        status,
        labels: { alertname: 'CheckoutErrorRate', severity: 'page' },
        annotations: { summary },
        startsAt: '2026-11-24T09:12:03.157Z',
        endsAt: status === 'resolved' ? '2026-11-24T09:30:00Z' : '0001-01-01T00:00:00Z',
        generatorURL: 'http://prometheus:9090/graph',
        fingerprint: 'c6eadffa33fcdf37',
      },
    ],
  };
}

describe('triggers', () => {
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let anonymous: HttpClient;
  let sdk: HttpClient;
  let flagId: string;
  const triggers = (env = 'prod', id = flagId) => `/api/v1/flags/${id}/environments/${env}/triggers`;
  const hookPath = (url: string) => new URL(url).pathname;
  const head = () => git(svc.gitdir(), 'rev-parse', 'main');
  const evaluate = async () => (await sdk.post('/v1/evaluate', { key: 'checkout-v2', context: { userId: 'u-42' } })).body['checkout-v2'];

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    anonymous = httpClient(svc.controlUrl);
    const projectId = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body.id;
    flagId = (await admin.post(`/api/v1/projects/${projectId}/flags`, { key: 'checkout-v2' })).body.id;
    await admin.put(`/api/v1/flags/${flagId}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    sdk = httpClient(svc.evalUrl, (await admin.post('/api/v1/keys', { kind: 'sdk', projectId, environment: 'prod' })).body.key);
  });
  afterAll(() => svc?.stop());

  it('are created by admin keys with a URL shown once; agent keys may list them but not create or delete them', async () => {
    const created = await admin.post(triggers(), { name: 'checkout error rate' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^trg_/),
      name: 'checkout error rate',
      action: 'kill',
      url: expect.stringMatching(new RegExp(`^${svc.controlUrl}/hooks/triggers/trg_[A-Za-z0-9]+/[A-Za-z0-9_-]{43}$`)),
      createdAt: expect.any(String),
    });
    const listed = await agent.get(triggers());
    expect(listed.status).toBe(200);
    expect(listed.body.triggers).toEqual([
      { id: created.body.id, name: 'checkout error rate', action: 'kill', createdAt: created.body.createdAt },
    ]);
    expect((await agent.get(triggers('dev'))).body.triggers).toEqual([]);
    expect((await agent.post(triggers(), {})).status).toBe(403);
    expect((await agent.delete(`/api/v1/triggers/${created.body.id}`)).status).toBe(403);
    const file = join(svc.dataDir, 'state', 'triggers.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain(hookPath(created.body.url).split('/').pop());
    expect(git(svc.gitdir(), 'ls-tree', '-r', '--name-only', 'main')).not.toContain('trigger');
    await admin.delete(`/api/v1/triggers/${created.body.id}`);
  });

  it('refuse an unknown flag, an unknown environment and unknown fields', async () => {
    const before = head();
    expect((await admin.post(triggers('prod', 'flg_missing'), {})).status).toBe(404);
    expect((await admin.post(triggers('qa'), {})).status).toBe(404);
    const bad = await admin.post(triggers(), { name: 'x', action: 'enable' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('action') });
    expect(head()).toBe(before);
  });

  it('kill the flag in their environment when an Alertmanager payload is posted, with the alert summary as the reason', async () => {
    const { url, name } = (await admin.post(triggers(), { name: 'checkout error rate' })).body;
    expect(await evaluate()).toMatchObject({ value: true });
    const fired = await anonymous.post(hookPath(url), alertmanagerPayload('firing', 'checkout error rate above 5 %'));
    expect(fired.status).toBe(202);
    expect(fired.body).toEqual({ outcome: 'killed' });
    expect(await evaluate()).toMatchObject({ value: false, reason: 'killed' });
    const prod = (await admin.get(`/api/v1/flags/${flagId}`)).body.environments.prod;
    expect(prod).toMatchObject({ killed: true, killedBy: name, killReason: 'checkout error rate above 5 %' });
    const entry = (await admin.get(`/api/v1/audit?flagId=${flagId}&limit=1`)).body.entries[0];
    expect(entry).toMatchObject({
      action: 'kill',
      environment: 'prod',
      actor: { type: 'trigger', name },
      reason: 'checkout error rate above 5 %',
    });
    const again = await anonymous.post(hookPath(url), alertmanagerPayload('firing', 'still failing'));
    expect(again.body).toEqual({ outcome: 'already_killed' });
    await admin.put(`/api/v1/flags/${flagId}/environments/prod/config`, { clearKill: true });
  });

  it('change nothing for a resolved alert, and take the body’s reason first, else "trigger <name>"', async () => {
    const { url } = (await admin.post(triggers(), { name: 'latency' })).body;
    const before = head();
    const resolved = await anonymous.post(hookPath(url), alertmanagerPayload('resolved', 'all good'));
    expect([resolved.status, resolved.body]).toEqual([202, { outcome: 'resolved' }]);
    expect(head()).toBe(before);
    await anonymous.post(hookPath(url), { reason: 'p99 above 2 s', commonAnnotations: { summary: 'ignored' } });
    expect((await admin.get(`/api/v1/flags/${flagId}`)).body.environments.prod.killReason).toBe('p99 above 2 s');
    await admin.put(`/api/v1/flags/${flagId}/environments/prod/config`, { clearKill: true });
    await anonymous.post(hookPath(url), {});
    expect((await admin.get(`/api/v1/flags/${flagId}`)).body.environments.prod.killReason).toBe('trigger latency');
    await admin.put(`/api/v1/flags/${flagId}/environments/prod/config`, { clearKill: true });
  });

  it('answer 404 to a wrong secret and to a deleted trigger, and refuse a body that is not JSON', async () => {
    const { id, url } = (await admin.post(triggers(), {})).body;
    const path = hookPath(url);
    const wrong = path.replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A'));
    const before = head();
    const res = await anonymous.post(wrong, {});
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect((await anonymous.post(`/hooks/triggers/trg_unknown/${path.split('/').pop()}`, {})).status).toBe(404);
    const text = await anonymous.request('POST', path, { rawBody: 'fire', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(head()).toBe(before);
    const deleted = await admin.delete(`/api/v1/triggers/${id}`);
    expect(deleted.status).toBe(200);
    expect((await anonymous.post(path, {})).status).toBe(404);
    expect((await admin.delete(`/api/v1/triggers/${id}`)).status).toBe(404);
    expect(head()).toBe(before);
  });

  it('throttle an address that keeps guessing secrets, like failed keys', async () => {
    const { url } = (await admin.post(triggers(), {})).body;
    const path = hookPath(url).replace(/[^/]+$/, 'x'.repeat(43));
    const statuses = new Set<number>();
    for (let i = 0; i < 130 && !statuses.has(429); i++) statuses.add((await anonymous.post(path, {})).status);
    expect(statuses).toEqual(new Set([404, 429]));
  });
});
