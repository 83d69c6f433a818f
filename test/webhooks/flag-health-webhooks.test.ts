import { appendFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { pushEdit } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { ManualClock } from '../schedule/manual-clock.js';
import { until } from './webhook-harness.js';

const DAY = 86_400_000;

/** A receiver that lives as long as the file's tests (the harness's closes after each test). */
async function receiver() {
  const received: Array<{ body: string; headers: http.IncomingHttpHeaders }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ body, headers: req.headers });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, close };
}

/** Waits until `check` resolves true, or fails naming `what`. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + PROMPTLY_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const CHECK_MS = 5 * 60_000;

/** Flags that become stale or expire as the service's clock moves on: told once each, across a restart. */
describe('webhooks of flag health, and the flagops_flags gauge', () => {
  const clock = new ManualClock(Date.now() - 60 * DAY);
  let svc: TestService;
  let admin: HttpClient;
  let hook: Awaited<ReturnType<typeof receiver>>;
  let webhookId: string;
  const ids: Record<string, string> = {};
  const expiry = new Date(Date.now() - 30 * DAY).toISOString().slice(0, 10);

  const gauge = async (status: string): Promise<number | undefined> => {
    const text = await (await fetch(`${svc.controlUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith('flagops_flags{') && l.includes(`status="${status}"`) && l.includes('project="shop"'));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  };
  const events = () => hook.received.map((r) => JSON.parse(r.body) as Json);

  beforeAll(async () => {
    hook = await receiver();
    svc = await startTestService({ clock });
    admin = httpClient(svc.controlUrl, svc.admin);
    const project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    for (const key of ['shipped', 'halfway', 'expiring', 'filler'])
      ids[key] = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key })).body.id;
    for (const env of ['dev', 'staging', 'prod'])
      await admin.put(`/api/v1/flags/${ids.shipped}/environments/${env}/config`, { enabled: true, rolloutPct: 100 });
    for (const key of ['halfway', 'expiring', 'filler'])
      await admin.put(`/api/v1/flags/${ids[key]}/environments/prod/config`, { enabled: true, rolloutPct: 50 });
    pushEdit(svc.gitdir(), (checkout) =>
      appendFileSync(path.join(checkout, 'projects/shop/flags/expiring.yaml'), `lifecycle:\n  type: experiment\n  expiresAt: ${expiry}\n`),
    );
    const created = await admin.post('/api/v1/webhooks', { url: hook.url, actions: ['flag_stale', 'flag_expired'] });
    expect(created.status).toBe(201);
    webhookId = created.body.id;
    // The first check only records where things are: nothing is stale yet.
    clock.advance(1);
    await eventually(async () => (await gauge('active')) === 4, 'the first health check');
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await hook?.close();
  });

  it('counts flags per status in flagops_flags', async () => {
    expect(await gauge('stale')).toBe(0);
    expect(await gauge('potentially_stale')).toBe(0);
  });

  it('tells once that a flag became stale (rolled out) and that one expired', async () => {
    clock.advance(40 * DAY);
    await until(() => hook.received.length >= 2, 'two deliveries');
    const got = events().map((e) => [e.event, e.entry.action, e.entry.flagKey]);
    expect(got.sort()).toEqual([
      ['flag_health', 'flag_expired', 'expiring'],
      ['flag_health', 'flag_stale', 'shipped'],
    ]);
    const stale = events().find((e) => e.entry.action === 'flag_stale').entry;
    expect(stale).toMatchObject({ projectSlug: 'shop', status: 'stale' });
    expect(stale.reasons[0].message).toMatch(/^rolled out: every environment has served true to everyone since/);
    expect(hook.received[0].headers['x-flagops-event']).toBe('flag_health');
    expect(await gauge('stale')).toBe(2);
  });

  it('does not tell again at the next check, and tells after a restart what changed while it was down', async () => {
    // A change the gauge shows tells when the next check has run.
    await admin.delete(`/api/v1/flags/${ids.filler}`);
    clock.advance(CHECK_MS);
    await eventually(async () => (await gauge('potentially_stale')) === 1, 'the next check');
    expect(hook.received).toHaveLength(2);
    for (const env of ['dev', 'staging', 'prod'])
      await admin.put(`/api/v1/flags/${ids.halfway}/environments/${env}/config`, { enabled: true, rolloutPct: 100 });
    await svc.restart();
    admin = httpClient(svc.controlUrl, svc.admin);
    // Down for 31 days: halfway became stale meanwhile; what was told before is kept in the state.
    clock.advance(31 * DAY);
    await eventually(async () => (await gauge('stale')) === 3, 'the first check after the restart');
    await until(() => hook.received.length >= 3, 'the third delivery');
    expect(
      events()
        .map((e) => `${e.entry.action} ${e.entry.flagKey}`)
        .sort(),
    ).toEqual(['flag_expired expiring', 'flag_stale halfway', 'flag_stale shipped']);
    const deliveries = (await admin.get(`/api/v1/webhooks/${webhookId}/deliveries`)).body.deliveries;
    expect(deliveries).toHaveLength(3);
  });

  it('accepts the health events as webhook actions, and refuses unknown ones', async () => {
    expect((await admin.post('/api/v1/webhooks', { url: hook.url, actions: ['flag_stale'] })).status).toBe(201);
    expect((await admin.post('/api/v1/webhooks', { url: hook.url, actions: ['flag_rotten'] })).status).toBe(400);
  });
});
