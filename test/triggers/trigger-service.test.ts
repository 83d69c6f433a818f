import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readAlertPayload } from '../../src/features/triggers/alert-payload.js';
import { TriggerService, triggerPath } from '../../src/features/triggers/trigger-service.js';
import { KeyService } from '../../src/foundations/auth/key-service.js';
import { NotFoundError } from '../../src/foundations/errors/kinds.js';
import { stateIn } from '../helpers/control-state.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flagops-triggers-'));
  dirs.push(dir);
  return dir;
}

describe('the trigger store', () => {
  it('keeps triggers in state/triggers.json (0600) with the secret only hashed, across restarts', async () => {
    const dir = dataDir();
    await KeyService.open({ state: await stateIn(dir) });
    const store = await TriggerService.open({ state: await stateIn(dir), now: () => new Date('2026-11-24T09:00:00Z') });
    const { trigger, secret } = await store.create({ org: 'acme', flagId: 'flg_1', environment: 'prod', name: 'error rate' });
    expect(trigger).toEqual({
      id: expect.stringMatching(/^trg_/),
      name: 'error rate',
      action: 'kill',
      flagId: 'flg_1',
      environment: 'prod',
      createdAt: '2026-11-24T09:00:00.000Z',
    });
    expect(triggerPath(trigger.id, secret)).toBe(`/hooks/triggers/${trigger.id}/${secret}`);
    const file = join(dir, 'state', 'triggers.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(secret);
    expect(text).toMatch(/"secretHash": "hmac-sha256:[0-9a-f]{64}"/);

    const reopened = await TriggerService.open({ state: await stateIn(dir) });
    expect(reopened.verify(trigger.id, secret)?.name).toBe('error rate');
    expect(reopened.list('acme', 'flg_1', 'prod')).toEqual([trigger]);
    expect(reopened.list('acme', 'flg_1', 'dev')).toEqual([]);
    expect(reopened.list('other', 'flg_1', 'prod')).toEqual([]);
  });

  it('refuses a wrong secret, an unknown id and a deleted trigger; deletes only its own organisation’s', async () => {
    const dir = dataDir();
    const store = await TriggerService.open({ state: await stateIn(dir) });
    const { trigger, secret } = await store.create({ org: 'acme', flagId: 'flg_1', environment: 'prod' });
    expect(trigger.name).toBe(trigger.id);
    const wrong = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    expect(store.verify(trigger.id, wrong)).toBeNull();
    expect(store.verify('trg_AAAAAAAAAAAAAAAA', secret)).toBeNull();
    expect(store.verify(trigger.id, 'short')).toBeNull();
    await expect(store.delete('other', trigger.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(store.verify(trigger.id, secret)).not.toBeNull();
    await store.delete('acme', trigger.id);
    expect(store.verify(trigger.id, secret)).toBeNull();
    expect((await TriggerService.open({ state: await stateIn(dir) })).verify(trigger.id, secret)).toBeNull();
  });
});

describe('triggers in a state shared by two instances', () => {
  it('a trigger created through one works on the other, and stops once deleted through it', async () => {
    const dir = dataDir();
    const one = await TriggerService.open({ state: await stateIn(dir) });
    const other = await TriggerService.open({ state: await stateIn(dir) });
    const { trigger, secret } = await one.create({ org: 'acme', flagId: 'flg_1', environment: 'prod' });
    await vi.waitFor(() => expect(other.verify(trigger.id, secret)?.id).toBe(trigger.id), { timeout: PROMPTLY_MS });
    expect(other.list('acme', 'flg_1', 'prod')).toEqual([trigger]);
    await one.delete('acme', trigger.id);
    await vi.waitFor(() => expect(other.verify(trigger.id, secret)).toBeNull(), { timeout: PROMPTLY_MS });
  });
});

describe('a trigger call’s body', () => {
  it('gives its reason first, else an Alertmanager payload’s common summary', () => {
    expect(readAlertPayload({ reason: 'p99 over 2 s' })).toEqual({ resolved: false, reason: 'p99 over 2 s' });
    const alertmanager = {
      version: '4',
      status: 'firing',
      commonAnnotations: { summary: 'checkout error rate above 5%' },
      alerts: [{ status: 'firing', labels: { alertname: 'CheckoutErrors' } }],
    };
    expect(readAlertPayload(alertmanager)).toEqual({ resolved: false, reason: 'checkout error rate above 5%' });
    expect(readAlertPayload({ ...alertmanager, reason: 'manual' }).reason).toBe('manual');
  });

  it('keeps a reason of up to 4,096 characters whole, as a kill does, and cuts a longer one with a mark', () => {
    const whole = 'r'.repeat(4096);
    expect(readAlertPayload({ reason: whole }).reason).toBe(whole);
    const cut = readAlertPayload({ commonAnnotations: { summary: `${'é'.repeat(5000)}` } }).reason!;
    expect([...cut]).toHaveLength(4096);
    expect(cut.endsWith('é…')).toBe(true);
  });

  it('says resolved for a resolved Alertmanager payload, and nothing for any other JSON', () => {
    expect(readAlertPayload({ status: 'resolved', commonAnnotations: { summary: 'ok again' } }).resolved).toBe(true);
    for (const body of [null, [], 'text', 3, {}, { reason: '  ' }, { commonAnnotations: 'x' }]) {
      expect(readAlertPayload(body)).toEqual({ resolved: false });
    }
  });
});
