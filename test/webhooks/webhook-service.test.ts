import { createHmac } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WebhookStateFile } from '../../src/foundations/state/files/webhook-state-file.js';
import { stateIn } from '../helpers/control-state.js';
import { FAST, receiver, recordingLogger, setup, until } from './webhook-harness.js';

describe('webhook deliveries', () => {
  it('POSTs each new audit entry signed with HMAC-SHA256 of the body, and logs it delivered', async () => {
    const hook = await receiver();
    const { open, change } = await setup();
    const service = await open();
    const created = await service.create('acme', { url: hook.url });
    expect(created).toMatchObject({ url: hook.url, actions: [], secret: expect.stringMatching(/^whsec_.{20,}/) });
    expect(hook.received).toHaveLength(0); // what was on main before the webhook is not sent
    const commit = await change();
    const got = await until(() => hook.received[0], 'a delivery');
    const body = JSON.parse(got.body);
    expect(body).toEqual({ event: 'audit', entry: expect.objectContaining({ id: commit, action: 'config_update', flagKey: 'a' }) });
    const expected = `sha256=${createHmac('sha256', created.secret).update(got.body).digest('hex')}`;
    expect(got.headers['x-flagops-signature']).toBe(expected);
    expect(got.headers['content-type']).toBe('application/json');
    const log = await until(() => {
      const d = service.deliveriesHeld('acme', created.id);
      return d[0]?.status === 'delivered' && d;
    }, 'the delivered status');
    expect(log).toEqual([expect.objectContaining({ auditId: commit, status: 'delivered', attempts: 1 })]);
    expect(log[0].lastError).toBeUndefined();
  });

  it('sends only the actions asked for, signed with the secret given', async () => {
    const hook = await receiver();
    const { open, change } = await setup();
    const service = await open();
    const created = await service.create('acme', { url: hook.url, actions: ['kill'], secret: 'a-secret-of-16-chars-or-more' });
    expect(created.secret).toBe('a-secret-of-16-chars-or-more');
    await change('config_update');
    const kill = await change('kill');
    await service.catchUp('acme');
    // Every delivery there will be for these entries is written by now, and only those are ever attempted.
    expect(service.deliveriesHeld('acme', created.id).map((d) => d.auditId)).toEqual([kill]);
    await until(() => hook.received.length === 1, 'the kill');
    expect(hook.received.map((r) => JSON.parse(r.body).entry.id)).toEqual([kill]);
  });

  it('retries a failing receiver with backoff until it answers 2xx, and gives up after the last attempt', async () => {
    const flaky = await receiver((n) => (n < 3 ? 500 : 200));
    const dead = await receiver(() => 503);
    const { open, change } = await setup();
    const service = await open({ ...FAST, attempts: 6 });
    const a = await service.create('acme', { url: flaky.url });
    const b = await service.create('acme', { url: dead.url });
    await change();
    await until(() => service.deliveriesHeld('acme', a.id)[0]?.status === 'delivered', 'the third attempt');
    expect(service.deliveriesHeld('acme', a.id)[0]).toMatchObject({ attempts: 3, status: 'delivered' });
    const failed = await until(() => {
      const d = service.deliveriesHeld('acme', b.id)[0];
      return d?.status === 'failed' && d;
    }, 'the last attempt');
    expect(failed).toMatchObject({ attempts: 6, lastError: 'the receiver answered 503' });
    expect(dead.received).toHaveLength(6);
  });

  it('a receiver that never answers costs one timeout per attempt and holds up no other webhook', async () => {
    const hanging = await receiver(() => null);
    const fine = await receiver();
    const { open, change } = await setup();
    const service = await open({ ...FAST, timeoutMs: 300, attempts: 5 });
    const slow = await service.create('acme', { url: hanging.url });
    const fast = await service.create('acme', { url: fine.url });
    await change();
    await until(() => service.deliveriesHeld('acme', fast.id)[0]?.status === 'delivered', 'the other webhook');
    expect(service.deliveriesHeld('acme', slow.id)[0]).toMatchObject({ status: 'pending', attempts: 0 });
    const timedOut = await until(() => {
      const d = service.deliveriesHeld('acme', slow.id)[0];
      return d?.attempts === 1 && d;
    }, 'the timeout');
    expect(timedOut.lastError).toBe('no answer within 300 ms');
  });

  it('keeps pending deliveries and entries committed while stopped across a restart, in a file only its owner reads', async () => {
    let down = true;
    const hook = await receiver(() => (down ? 503 : 200));
    const { dataDir, open, change } = await setup();
    // The retry after the first failure is due 200 ms later: after the stop.
    const first = await open({ ...FAST, baseDelayMs: 400, maxDelayMs: 400 });
    const created = await first.create('acme', { url: hook.url });
    const before = await change();
    await until(() => first.deliveriesHeld('acme', created.id)[0]?.attempts === 1, 'the first attempt');
    await first.close();
    const whileStopped = await change('kill');
    expect(statSync(join(dataDir, 'state', 'webhooks.json')).mode & 0o777).toBe(0o600);
    down = false;
    const second = await open();
    expect(second.list('acme')).toEqual([{ id: created.id, url: hook.url, actions: [], createdAt: created.createdAt }]);
    await second.catchUp('acme');
    const log = await until(() => {
      const d = second.deliveriesHeld('acme', created.id);
      return d.length === 2 && d.every((x) => x.status === 'delivered') && d;
    }, 'both delivered after the restart');
    expect(log.map((d) => d.auditId)).toEqual([whileStopped, before]);
    // The second service attempted `before` when its retry fell due, as the stopped one's timer would have; one
    // more change delivered after that, the stopped one's request would have arrived too. Each request the
    // receiver got is an attempt the log counts.
    const after = await change();
    const last = await until(() => {
      const d = second.deliveriesHeld('acme', created.id);
      return d[0]?.auditId === after && d[0].status === 'delivered' && d;
    }, 'one more delivered');
    expect(last.map((d) => d.attempts)).toEqual([1, 1, 2]);
    expect(hook.received).toHaveLength(4);
  });

  it('delivers a kill committed while its deliveries could not be recorded once they can, without another change', async () => {
    const hook = await receiver();
    const { dataDir, open, change } = await setup();
    const files = await stateIn(dataDir);
    // The position in the audit trail cannot be moved while `refusing` (a full disk, the database down).
    let refusing = false;
    const webhooks = new Proxy(files.webhooks, {
      get(target, name) {
        if (name === 'advance' && refusing) return () => Promise.reject(new Error('ENOSPC: no space left on device'));
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const logger = recordingLogger();
    const service = await open(undefined, { state: { webhooks, notices: files.notices }, logger });
    await service.create('acme', { url: hook.url });
    refusing = true;
    const kill = await change('kill');
    const failures = () => logger.lines.filter((l) => l.msg.startsWith('webhooks: reading the audit trail failed'));
    await until(() => failures().length > 0, 'the failed read');
    await new Promise((r) => setTimeout(r, 1_500)); // the read made again after a second fails too
    refusing = false;
    await until(() => hook.received.length === 1, 'the kill delivered');
    expect(JSON.parse(hook.received[0].body).entry).toMatchObject({ id: kill, action: 'kill' });
    // Logged when the reads started failing, not at each one made again.
    expect(failures()).toHaveLength(1);
  });
});

describe('webhook management', () => {
  it('refuses a URL that is not http or https, unknown actions and fields, and short secrets, naming the field', async () => {
    const { open } = await setup();
    const service = await open();
    await expect(service.create('acme', { url: 'ftp://example.com/x' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/url must be an http or https URL/),
    });
    await expect(service.create('acme', { url: 'not a url' })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(service.create('acme', {})).rejects.toMatchObject({ message: expect.stringMatching(/url is required/) });
    await expect(service.create('acme', { url: 'http://x.test', actions: ['explode'] })).rejects.toMatchObject({
      message: expect.stringMatching(/"explode" is not an audit action/),
    });
    await expect(service.create('acme', { url: 'http://x.test', secret: 'short' })).rejects.toMatchObject({
      message: expect.stringMatching(/secret must be 16/),
    });
    await expect(service.create('acme', { url: 'http://x.test', colour: 'red' } as never)).rejects.toMatchObject({
      message: expect.stringMatching(/colour is not a webhook field/),
    });
    expect(service.list('acme')).toEqual([]);
  });

  it("lists and removes only the organisation's own webhooks: another organisation's is not found", async () => {
    const { open } = await setup();
    const service = await open();
    const created = await service.create('acme', { url: 'http://127.0.0.1:9/hook', actions: ['kill', 'kill', 'promote'] });
    expect(created.actions).toEqual(['kill', 'promote']);
    expect(service.list('other')).toEqual([]);
    expect(() => service.deliveriesHeld('other', created.id)).toThrow(expect.objectContaining({ code: 'not_found' }));
    await expect(service.remove('other', created.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(await service.remove('acme', created.id)).toMatchObject({ id: created.id });
    expect(service.list('acme')).toEqual([]);
  });
});

describe('the webhook state file', () => {
  it('writes once for the saves asked for while a write waits its turn, and each save resolves once its changes are written', async () => {
    const written: unknown[] = [];
    let release: () => void = () => {};
    const state = { webhooks: [], cursors: { acme: '' }, deliveries: [] as unknown[] };
    const file = new WebhookStateFile('unused', () => structuredClone(state) as never, {
      write: async (_file, content) => {
        written.push(content);
        if (written.length === 1) await new Promise<void>((resolve) => (release = resolve));
      },
    });
    const first = file.save(); // starts at once, and is held
    await until(() => written.length === 1, 'the first write under way');
    state.cursors.acme = 'c1';
    const saves = Array.from({ length: 50 }, () => file.save());
    state.cursors.acme = 'c2';
    saves.push(file.save());
    release();
    await Promise.all([first, ...saves]);
    expect(written).toHaveLength(2);
    expect(written[1]).toMatchObject({ cursors: { acme: 'c2' } });
  });

  it('writes what saveSoon() noted once for all of it, and flush() writes it at once', async () => {
    const written: unknown[] = [];
    const state = { webhooks: [], cursors: { acme: '' }, deliveries: [] };
    const file = new WebhookStateFile('unused', () => structuredClone(state) as never, {
      write: async (_file, content) => {
        written.push(content);
      },
      soonMs: 60_000,
    });
    for (let i = 1; i <= 50; i++) {
      state.cursors.acme = `c${i}`;
      file.saveSoon();
    }
    expect(written).toHaveLength(0);
    await file.flush();
    expect(written).toEqual([expect.objectContaining({ cursors: { acme: 'c50' } })]);
  });
});
