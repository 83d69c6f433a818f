import { createHmac } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, sessionHeaders, signIn } from '../dashboard/helpers/dashboard-session.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

interface Received {
  body: string;
  signature: string;
}

async function until<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('/api/v1/webhooks on a running service', () => {
  let svc: TestService;
  let admin: HttpClient;
  let project: Json;
  let flag: Json;
  const received: Received[] = [];
  let receiver: http.Server;
  let receiverUrl: string;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ body, signature: String(req.headers['x-flagops-signature']) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    svc = await startTestService({ orgs: ['acme', 'globex'] });
    admin = httpClient(svc.controlUrl, svc.admin);
    project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout-v2' })).body;
  });
  afterAll(async () => {
    await svc?.stop();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('an admin key creates one (201, the secret shown once), lists it without the secret, and sees its deliveries', async () => {
    const created = await admin.post('/api/v1/webhooks', { url: receiverUrl, actions: ['kill', 'config_update'] });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^whk_/),
      url: receiverUrl,
      actions: ['kill', 'config_update'],
      secret: expect.stringMatching(/^whsec_/),
      createdAt: expect.any(String),
    });
    const list = await admin.get('/api/v1/webhooks');
    expect(list.body).toEqual({
      webhooks: [{ id: created.body.id, url: receiverUrl, actions: ['kill', 'config_update'], createdAt: created.body.createdAt }],
    });

    const kill = await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'errors' });
    expect(kill.status).toBe(200);
    const got = await until(() => received.find((r) => JSON.parse(r.body).entry.action === 'kill'), 'the kill delivery');
    expect(got.signature).toBe(`sha256=${createHmac('sha256', created.body.secret).update(got.body).digest('hex')}`);
    expect(JSON.parse(got.body)).toMatchObject({
      event: 'audit',
      entry: {
        action: 'kill',
        projectSlug: 'shop',
        flagKey: 'checkout-v2',
        environment: 'prod',
        reason: 'errors',
        actor: { type: 'admin' },
      },
    });
    const deliveries = await until(async () => {
      const res = await admin.get(`/api/v1/webhooks/${created.body.id}/deliveries`);
      return res.body.deliveries[0]?.status === 'delivered' && res.body;
    }, 'the delivered status');
    expect(deliveries.deliveries[0]).toMatchObject({ auditId: JSON.parse(got.body).entry.id, status: 'delivered', attempts: 1 });
  });

  it("delivers an engineer's push too", async () => {
    const checkout = path.join(svc.dataDir, 'checkout');
    git(svc.dataDir, 'clone', '--quiet', svc.gitdir(), checkout);
    const file = path.join(checkout, 'projects/shop/environments/dev/checkout-v2.yaml');
    writeFileSync(file, 'enabled: true\nrolloutPct: 100\nvalueOn: true\nvalueOff: false\nversion: 2\nrules: []\n');
    git(checkout, 'commit', '--quiet', '-am', 'on in dev');
    git(checkout, 'push', '--quiet', 'origin', 'HEAD:main');
    const pushed = await until(
      () => received.map((r) => JSON.parse(r.body).entry).find((e) => e.environment === 'dev' && e.actor.type === 'git'),
      'the pushed change',
    );
    expect(pushed).toMatchObject({ action: 'config_update', flagKey: 'checkout-v2', actor: { type: 'git', name: 'Erin Engineer' } });
  });

  it('refuses what is not an http(s) URL with 400 naming url, and agent keys with 403', async () => {
    for (const url of ['ftp://example.com/hook', 'file:///etc/passwd', 'javascript:alert(1)', 'hook']) {
      const res = await admin.post('/api/v1/webhooks', { url });
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe('invalid_input');
      expect(res.body.error.message).toMatch(/url/);
    }
    const agent = httpClient(svc.controlUrl, svc.agent);
    expect((await agent.post('/api/v1/webhooks', { url: receiverUrl })).status).toBe(403);
    expect((await agent.get('/api/v1/webhooks')).status).toBe(403);
    expect((await httpClient(svc.controlUrl, null).get('/api/v1/webhooks')).status).toBe(401);
  });

  it('a dashboard session manages them as an admin key does', async () => {
    await addUser(svc, 'alice', 'Alice Martin');
    const session = await signIn(svc.controlUrl, 'alice');
    const headers = sessionHeaders(svc.controlUrl, session, { 'content-type': 'application/json' });
    const created = await fetch(`${svc.controlUrl}/api/v1/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: 'https://hooks.example.com/flagops', actions: ['promote'] }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const list = await fetch(`${svc.controlUrl}/api/v1/webhooks`, { headers });
    expect(((await list.json()) as { webhooks: Array<{ id: string }> }).webhooks.map((w) => w.id)).toContain(id);
    expect((await fetch(`${svc.controlUrl}/api/v1/webhooks/${id}`, { method: 'DELETE', headers })).status).toBe(200);
  });

  it("another organisation's webhook is not found, and theirs are not listed", async () => {
    const other = httpClient(svc.controlUrl, svc.orgs.globex.admin);
    const mine = (await admin.get('/api/v1/webhooks')).body.webhooks[0];
    expect((await other.get('/api/v1/webhooks')).body).toEqual({ webhooks: [] });
    expect((await other.get(`/api/v1/webhooks/${mine.id}/deliveries`)).status).toBe(404);
    expect((await other.delete(`/api/v1/webhooks/${mine.id}`)).status).toBe(404);
    expect((await admin.get('/api/v1/webhooks')).body.webhooks).toHaveLength(1);
  });

  it('survives a restart with its delivery log, in a file only the service user reads, and can be deleted', async () => {
    const [hook] = (await admin.get('/api/v1/webhooks')).body.webhooks;
    const before = (await admin.get(`/api/v1/webhooks/${hook.id}/deliveries`)).body.deliveries;
    await svc.restart();
    admin = httpClient(svc.controlUrl, svc.admin);
    expect((await admin.get('/api/v1/webhooks')).body.webhooks).toEqual([hook]);
    expect((await admin.get(`/api/v1/webhooks/${hook.id}/deliveries`)).body.deliveries).toEqual(before);
    expect(statSync(path.join(svc.dataDir, 'state', 'webhooks.json')).mode & 0o777).toBe(0o600);
    const removed = await admin.delete(`/api/v1/webhooks/${hook.id}`);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual(hook);
    expect((await admin.get('/api/v1/webhooks')).body).toEqual({ webhooks: [] });
    expect((await admin.get(`/api/v1/webhooks/${hook.id}/deliveries`)).status).toBe(404);
  });
});
