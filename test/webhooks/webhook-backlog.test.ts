import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WebhookService } from '../../src/features/webhooks/webhook-service.js';
import { httpClient, type Json } from '../helpers/http-client.js';
import { startTestService } from '../helpers/start-test-service.js';
import { FAST, receiver, recordingLogger, setup, until } from './webhook-harness.js';

const pendingOf = (service: WebhookService, id: string) => service.deliveriesHeld('acme', id).filter((d) => d.status === 'pending');
const droppedOf = (service: WebhookService, id: string) =>
  service.deliveriesHeld('acme', id).filter((d) => d.status === 'failed' && /dropped/.test(d.lastError ?? ''));

describe('deliveries waiting for a receiver are bounded in number', () => {
  for (const [kind, answer, retry] of [
    // Hangs: the two attempts allowed at once (the first two deliveries') never end, so nothing else is attempted.
    ['hangs', () => null, { ...FAST, timeoutMs: 60_000 }],
    // Answers 500: each delivery waits a minute before its retry.
    ['answers 500', () => 500, { ...FAST, baseDelayMs: 60_000, maxDelayMs: 60_000 }],
  ] as const) {
    it(`a receiver that ${kind} keeps at most the bound pending; the oldest beyond it are failed as dropped, and logged`, async () => {
      const hook = await receiver(answer);
      const { open, change } = await setup();
      const logger = recordingLogger();
      const service = await open(retry, { logger, limits: { pendingPerWebhook: 5, connectionsPerWebhook: 2 } });
      const created = await service.create('acme', { url: hook.url });
      const commits: string[] = [];
      for (let i = 0; i < 15; i++) {
        commits.push(await change());
        await service.catchUp('acme');
        if (i === 1) await until(() => hook.received.length >= 2, 'the first two attempts');
        expect(pendingOf(service, created.id).length).toBeLessThanOrEqual(5);
      }
      const pending = pendingOf(service, created.id).map((d) => d.auditId);
      expect(pending).toHaveLength(5);
      // The newest are kept (and an attempt under way is never dropped: the first two, when the receiver hangs).
      expect(pending).toEqual(expect.arrayContaining(commits.slice(-3)));
      if (kind === 'hangs') expect(pending).toEqual(expect.arrayContaining(commits.slice(0, 2)));
      const dropped = droppedOf(service, created.id);
      expect(dropped).toHaveLength(10);
      expect(dropped.every((d) => commits.slice(0, 12).includes(d.auditId))).toBe(true);
      expect(dropped[0].lastError).toBe('dropped before it could be delivered: 5 deliveries were already waiting for this webhook');
      expect(logger.lines).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          msg: expect.stringMatching(/dropped/),
          fields: expect.objectContaining({ webhook: created.id }),
        }),
      );
    });
  }

  it('keeps the state file small: dropped and finished deliveries keep no copy of their entry', async () => {
    const hook = await receiver(() => null);
    const { dataDir, open, change } = await setup();
    const service = await open({ ...FAST, timeoutMs: 60_000 }, { limits: { pendingPerWebhook: 3, connectionsPerWebhook: 1 } });
    await service.create('acme', { url: hook.url });
    const long = 'a change with a long message '.repeat(140); // about 4 KB in every entry
    for (let i = 0; i < 20; i++) {
      await change('config_update', long);
      await service.catchUp('acme');
    }
    await service.close();
    // Three entries of 4 KB are pending; the seventeen dropped ones are a few hundred bytes each.
    expect(statSync(join(dataDir, 'state', 'webhooks.json')).size).toBeLessThan(24_000);
  });

  it('keeps every pending delivery and the last 100 finished in the log, however many were dropped', async () => {
    const hook = await receiver(() => null);
    const { open, change } = await setup();
    const service = await open({ ...FAST, timeoutMs: 60_000 }, { limits: { pendingPerWebhook: 2, connectionsPerWebhook: 1 } });
    const created = await service.create('acme', { url: hook.url });
    const commits: string[] = [];
    for (let i = 0; i < 130; i++) commits.push(await change());
    await service.catchUp('acme');
    const log = service.deliveriesHeld('acme', created.id);
    // The newest, and the one whose attempt hangs.
    const pending = log.filter((d) => d.status === 'pending').map((d) => d.auditId);
    expect(pending).toHaveLength(2);
    expect(pending[0]).toBe(commits.at(-1));
    const dropped = commits.filter((c) => !pending.includes(c));
    expect(log.filter((d) => d.status === 'failed').map((d) => d.auditId)).toEqual(dropped.slice(-100).reverse());
  });

  it('drops what is beyond the bound when it starts on a log that holds more (a lower bound, an older version)', async () => {
    const hook = await receiver(() => null);
    const { open, change } = await setup();
    const first = await open({ ...FAST, timeoutMs: 60_000 }, { limits: { connectionsPerWebhook: 1 } });
    const created = await first.create('acme', { url: hook.url });
    const commits: string[] = [];
    for (let i = 0; i < 8; i++) commits.push(await change());
    await first.catchUp('acme');
    expect(pendingOf(first, created.id)).toHaveLength(8);
    await first.close();
    const second = await open({ ...FAST, timeoutMs: 60_000 }, { limits: { pendingPerWebhook: 3, connectionsPerWebhook: 1 } });
    expect(pendingOf(second, created.id).map((d) => d.auditId)).toEqual(commits.slice(-3).reverse());
    expect(droppedOf(second, created.id)).toHaveLength(5);
  });

  it('reads a delivery log written before the bounds, entries in every delivery', async () => {
    const hook = await receiver();
    const { dataDir, open, change } = await setup();
    const first = await open();
    const created = await first.create('acme', { url: hook.url });
    const commit = await change('kill');
    await until(() => first.deliveriesHeld('acme', created.id)[0]?.status === 'delivered', 'the delivery');
    await first.close();
    const file = join(dataDir, 'state', 'webhooks.json');
    const state = JSON.parse(readFileSync(file, 'utf8'));
    const entry = {
      id: commit,
      at: '2026-11-23T12:00:00.000Z',
      action: 'kill',
      projectSlug: 'shop',
      flagKey: 'a',
      environment: 'prod',
      actor: { type: 'agent' },
    };
    const old = (id: string, status: string) => ({
      id,
      webhookId: created.id,
      auditId: commit,
      entry,
      status,
      attempts: 1,
      createdAt: entry.at,
    });
    state.deliveries = [old('dlv_old1', 'delivered'), { ...old('dlv_old2', 'pending'), nextAttemptAt: 0 }];
    writeFileSync(file, JSON.stringify(state, null, 2), { mode: 0o600 });
    const second = await open();
    expect(second.deliveriesHeld('acme', created.id)[1]).toMatchObject({ id: 'dlv_old1', action: 'kill', status: 'delivered' });
    const retried = await until(
      () => second.deliveriesHeld('acme', created.id).find((d) => d.id === 'dlv_old2' && d.status === 'delivered'),
      'the old pending delivery',
    );
    expect(retried).toMatchObject({ action: 'kill', attempts: 2 });
    expect(JSON.parse(hook.received.at(-1)!.body)).toEqual({ event: 'audit', entry });
  });
});

describe('deliveries waiting for a receiver are bounded in memory', () => {
  it('the pending deliveries of all webhooks stay within the byte bound: the biggest backlog loses its oldest', async () => {
    const hook = await receiver(() => null);
    const { open, change } = await setup();
    const service = await open({ ...FAST, timeoutMs: 60_000 }, { limits: { pendingBytes: 16_000, connectionsPerWebhook: 1 } });
    const a = await service.create('acme', { url: `${hook.origin}/a` });
    const b = await service.create('acme', { url: `${hook.origin}/b` });
    const long = 'a change with a long message '.repeat(100); // about 3 KB in every entry
    for (let i = 0; i < 10; i++) {
      await change('config_update', long);
      await service.catchUp('acme');
      const pending = pendingOf(service, a.id).length + pendingOf(service, b.id).length;
      expect(pending * long.length).toBeLessThanOrEqual(16_000);
    }
    // Both keep a share: the attempt under way and the newest that fit.
    expect(pendingOf(service, a.id).length).toBeGreaterThanOrEqual(2);
    expect(pendingOf(service, b.id).length).toBeGreaterThanOrEqual(2);
    expect(droppedOf(service, a.id)[0].lastError).toMatch(
      /^dropped before it could be delivered: the deliveries waiting for all webhooks reached /,
    );
  });
});

describe('deliveries waiting for a receiver are bounded in connections', () => {
  it('holds at most the bound of connections to a receiver that hangs, while another webhook gets every delivery', async () => {
    const hanging = await receiver(() => null);
    const fine = await receiver();
    const { open, change } = await setup();
    const service = await open({ ...FAST, timeoutMs: 60_000 }, { limits: { connectionsPerWebhook: 2 } });
    await service.create('acme', { url: hanging.url });
    await service.create('acme', { url: fine.url });
    for (let i = 0; i < 6; i++) await change();
    await service.catchUp('acme');
    await until(() => fine.received.length === 6, 'every delivery to the receiver that answers');
    await until(() => hanging.stats.connections >= 2, 'two attempts to the one that hangs');
    expect(hanging.stats.maxConnections).toBe(2);
    expect(hanging.received).toHaveLength(2);
  });

  it('runs at most the bound of attempts per webhook and in all, however many webhooks wait', async () => {
    const hook = await receiver(() => null);
    const { open, change } = await setup();
    const service = await open({ ...FAST, timeoutMs: 60_000 }, { limits: { connectionsPerWebhook: 2, connections: 3 } });
    for (const path of ['a', 'b', 'c']) await service.create('acme', { url: `${hook.origin}/${path}` });
    for (let i = 0; i < 4; i++) await change();
    await service.catchUp('acme');
    // Rounds: the receiver holds what it got until the bound is reached, then fails it all; retries follow.
    for (let round = 0; round < 5; round++) {
      await until(() => hook.stats.open >= 3, `round ${round + 1} of attempts`);
      hook.release(500);
    }
    expect(hook.stats.maxOpen).toBe(3);
    expect(Math.max(...hook.stats.maxOpenByPath.values())).toBeLessThanOrEqual(2);
  });

  it('tries a webhook whose receiver failed one attempt at a time until one succeeds', async () => {
    let up = false;
    const hook = await receiver(() => (up ? 200 : null));
    const { open, change } = await setup();
    const service = await open({ ...FAST, timeoutMs: 60_000 }, { limits: { connectionsPerWebhook: 4 } });
    const created = await service.create('acme', { url: hook.url });
    for (let i = 0; i < 6; i++) await change();
    await service.catchUp('acme');
    await until(() => hook.stats.open === 4, 'four attempts at once while the receiver has not failed');
    hook.release(500);
    hook.stats.maxOpen = 0;
    for (let i = 0; i < 4; i++) {
      await until(() => hook.stats.open >= 1, 'the next attempt');
      hook.release(500);
    }
    expect(hook.stats.maxOpen).toBe(1);
    up = true;
    hook.release(200);
    await until(() => pendingOf(service, created.id).length === 0, 'everything delivered once the receiver answers');
  });
});

describe('dropped deliveries in /metrics', () => {
  it('counts what was dropped by organisation and bound, and shows what is pending', async () => {
    const hook = await receiver(() => null);
    const svc = await startTestService({
      webhooks: { retry: { timeoutMs: 60_000 }, limits: { pendingPerWebhook: 5, connectionsPerWebhook: 2 } },
    });
    try {
      const admin = httpClient(svc.controlUrl, svc.admin);
      const project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body as Json;
      const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body as Json;
      const created = (await admin.post('/api/v1/webhooks', { url: hook.url })).body as Json;
      for (let i = 0; i < 12; i++) {
        const res = await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: i });
        expect(res.status).toBe(200);
        if (i === 1) await until(() => hook.received.length >= 2, 'the first two attempts');
      }
      const metric = async () => (await fetch(`${svc.controlUrl}/metrics`)).text();
      const text = await untilAsync(async () => {
        const t = await metric();
        return t.includes('flagops_webhook_deliveries_dropped_total{org="acme",limit="per_webhook"} 7') && t;
      }, 'seven drops in /metrics');
      expect(text).toContain('flagops_webhook_deliveries_pending{org="acme"} 5');
      const log = (await admin.get(`/api/v1/webhooks/${created.id}/deliveries`)).body as { deliveries: Json[] };
      expect(log.deliveries.filter((d) => d.status === 'failed' && /dropped/.test(String(d.lastError)))).toHaveLength(7);
      expect(log.deliveries.filter((d) => d.status === 'pending')).toHaveLength(5);
    } finally {
      await svc.stop();
    }
  });
});

async function untilAsync<T>(check: () => Promise<T | false>, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
