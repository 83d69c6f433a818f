import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitAsync } from '../git-http/git-async.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { tempDir } from '../storage/helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const at = (msFromNow: number) => new Date(Date.now() + msFromNow).toISOString();

/** Polls until `check` gives something, for what the service does by itself (a step falling due). */
async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(100);
  }
}

describe('schedules through the API', () => {
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let projectId: string;
  let sdk: HttpClient;
  let sdkKey: string;
  const flags = new Map<string, string>();

  async function newFlag(key: string): Promise<string> {
    const res = await admin.post(`/api/v1/projects/${projectId}/flags`, { key });
    expect(res.status).toBe(201);
    flags.set(key, res.body.id);
    return res.body.id;
  }
  const config = (id: string) => `/api/v1/flags/${id}/environments/prod/config`;
  const prodOf = async (id: string): Promise<Json> => (await admin.get(`/api/v1/flags/${id}`)).body.environments.prod;
  const head = () => git(svc.gitdir(), 'rev-parse', 'main');
  const snapshotVersion = async () => (await sdk.get('/v1/snapshot')).body.version;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    projectId = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body.id;
    sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId, environment: 'prod' })).body.key;
    sdk = httpClient(svc.evalUrl, sdkKey);
  });
  afterAll(() => svc?.stop());

  it('writes a schedule with a config update and shows it, with the next step, in flag responses; the snapshot is unaffected', async () => {
    const id = await newFlag('checkout-v2');
    const before = await snapshotVersion();
    const schedule = [
      { at: '2099-11-24T09:00:00Z', set: { rolloutPct: 25 } },
      { at: '2099-11-25T09:00:00Z', set: { enabled: true, rolloutPct: 100 } },
    ];
    const res = await agent.put(config(id), { schedule, expectedVersion: 1 });
    expect(res.status).toBe(200);
    expect(res.body.environments.prod).toMatchObject({ version: 2, schedule, nextStep: schedule[0] });
    expect(res.body.environments.dev).toMatchObject({ schedule: [], nextStep: null });
    expect(await snapshotVersion()).toBe(before);
    const file = git(svc.gitdir(), 'show', 'main:projects/shop/environments/prod/checkout-v2.yaml');
    expect(file).toContain('schedule:\n  - at: 2099-11-24T09:00:00Z\n    set:\n      rolloutPct: 25\n');
    const cancelled = await admin.put(config(id), { schedule: [] });
    expect(cancelled.body.environments.prod).toMatchObject({ version: 3, schedule: [], nextStep: null });
    expect(git(svc.gitdir(), 'show', 'main:projects/shop/environments/prod/checkout-v2.yaml')).not.toContain('schedule');
  });

  it('refuses past, unordered and too many steps and unknown fields in set with 400 naming the field, committing nothing', async () => {
    const id = await newFlag('bad-input');
    const before = head();
    const refused = async (schedule: unknown, field: string) => {
      const res = await admin.put(config(id), { schedule });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_input');
      expect(res.body.error.message).toContain(field);
    };
    await refused([{ at: at(-60_000), set: { rolloutPct: 5 } }], 'schedule[0].at');
    await refused(
      [
        { at: '2099-01-02T00:00:00Z', set: { rolloutPct: 5 } },
        { at: '2099-01-01T00:00:00Z', set: { rolloutPct: 10 } },
      ],
      'schedule[1].at',
    );
    const many = Array.from({ length: 51 }, (_, i) => ({ at: new Date(Date.UTC(2099, 0, 1, i)).toISOString(), set: { rolloutPct: 1 } }));
    await refused(many, 'schedule');
    await refused([{ at: '2099-01-01T00:00:00Z', set: { valueOn: false } }], 'schedule[0].set.valueOn');
    await refused([{ at: '2099-01-01T09:00:00+01:00', set: { rolloutPct: 5 } }], 'schedule[0].at');
    expect(head()).toBe(before);
  });

  it('expands a progressive rollout plan: 5 % now, then +20 % every hour to 100 %', async () => {
    const id = await newFlag('plan');
    const res = await agent.post(`/api/v1/flags/${id}/environments/prod/rollout-plan`, { startPct: 5, stepPct: 20, every: '1h' });
    expect(res.status).toBe(200);
    const prod = res.body.environments.prod;
    expect(prod).toMatchObject({ enabled: true, rolloutPct: 5, version: 2 });
    expect(prod.schedule.map((s: Json) => s.set.rolloutPct)).toEqual([25, 45, 65, 85, 100]);
    expect(Date.parse(prod.nextStep.at) - Date.now()).toBeGreaterThan(3_500_000);
    const tooMany = await agent.post(`/api/v1/flags/${id}/environments/prod/rollout-plan`, { startPct: 0, stepPct: 1, every: '1m' });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toMatch(/^stepPct: /);
    const unknown = await admin.post('/api/v1/flags/flg_missing/environments/prod/rollout-plan', { startPct: 5, stepPct: 20, every: '1h' });
    expect(unknown.status).toBe(404);
  });

  it('applies a step a few seconds ahead, end to end: served by the evaluation API, in the audit trail as the scheduler', async () => {
    const id = await newFlag('real-step');
    await admin.put(config(id), { enabled: true, rolloutPct: 0, schedule: [{ at: at(2_000), set: { rolloutPct: 100 } }] });
    const evaluate = async () => (await sdk.post('/v1/evaluate', { key: 'real-step', context: { userId: 'u-42' } })).body['real-step'];
    expect(await evaluate()).toMatchObject({ value: false });
    const served = await eventually(async () => {
      const result = await evaluate();
      return result.value === true ? result : undefined;
    });
    expect(served).toMatchObject({ value: true, reason: 'default' });
    expect(await prodOf(id)).toMatchObject({ rolloutPct: 100, version: 3, schedule: [], nextStep: null });
    const audit = await admin.get(`/api/v1/audit?flagId=${id}&limit=1`);
    expect(audit.body.entries[0]).toMatchObject({
      action: 'scheduled_change',
      environment: 'prod',
      flagKey: 'real-step',
      actor: { type: 'scheduler', name: 'scheduler' },
    });
    const filtered = await admin.get('/api/v1/audit?action=scheduled_change');
    expect(filtered.body.entries.map((e: Json) => e.flagKey)).toContain('real-step');
  });

  it('skips a step that falls due while the flag is killed, in its own commit, and never applies it', async () => {
    const id = await newFlag('killed-step');
    await admin.put(config(id), { enabled: true, rolloutPct: 10, schedule: [{ at: at(1_500), set: { rolloutPct: 90 } }] });
    await admin.post(`/api/v1/flags/${id}/environments/prod/kill`, { reason: 'incident' });
    const prod = await eventually(async () => {
      const state = await prodOf(id);
      return state.schedule.length === 0 ? state : undefined;
    });
    expect(prod).toMatchObject({ rolloutPct: 10, version: 3, killed: true, nextStep: null });
    const audit = await admin.get(`/api/v1/audit?flagId=${id}&limit=1`);
    expect(audit.body.entries[0]).toMatchObject({ action: 'scheduled_change_skipped', actor: { type: 'scheduler' } });
    await admin.put(config(id), { clearKill: true });
    // A step of another flag falls due after the kill is cleared: the scheduler's run that applies it applies
    // every step due by then, so one left for killed-step would be on main with it.
    const later = await newFlag('after-killed-step');
    expect((await admin.put(config(later), { schedule: [{ at: at(1_000), set: { rolloutPct: 5 } }] })).status).toBe(200);
    await eventually(async () => ((await prodOf(later)).schedule.length === 0 ? true : undefined));
    expect(await prodOf(id)).toMatchObject({ rolloutPct: 10, version: 3 });
  });

  it('applies at start the steps that fell due while the service was stopped', async () => {
    const id = await newFlag('while-stopped');
    const due = at(1_000);
    await admin.put(config(id), { schedule: [{ at: due, set: { enabled: true, rolloutPct: 30 } }] });
    await svc.service.stop();
    await eventually(async () => (Date.now() > Date.parse(due) ? true : undefined)); // the step falls due while stopped
    await svc.restart();
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    sdk = httpClient(svc.evalUrl, sdkKey);
    expect(await prodOf(id)).toMatchObject({ enabled: true, rolloutPct: 30, schedule: [] });
  });

  it('takes a pushed schedule as data: past steps are applied at once, an unordered one is refused by the push check', async () => {
    const id = await newFlag('pushed');
    const checkout = join(tempDir(), 'checkout');
    const url = `${svc.controlUrl.replace('http://', `http://git:${svc.admin}@`)}/git/acme.git`;
    expect((await gitAsync(tempDir(), 'clone', '--quiet', url, checkout)).ok).toBe(true);
    const file = join(checkout, 'projects/shop/environments/prod/pushed.yaml');
    const base = readFileSync(file, 'utf8');
    const step = (time: string, pct: number) => `  - at: ${time}\n    set:\n      rolloutPct: ${pct}\n`;
    writeFileSync(file, `${base}schedule:\n${step('2099-01-02T00:00:00Z', 50)}${step('2099-01-01T00:00:00Z', 60)}`);
    git(checkout, 'commit', '--quiet', '-am', 'unordered');
    const refused = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain('/schedule/1/at');
    git(checkout, 'reset', '--quiet', '--hard', 'HEAD~1');
    writeFileSync(file, `${base}schedule:\n${step(at(-60_000), 40)}${step('2099-01-01T00:00:00Z', 60)}`);
    git(checkout, 'commit', '--quiet', '-am', 'a schedule with a step already due');
    expect((await gitAsync(checkout, 'push', 'origin', 'HEAD:main')).ok).toBe(true);
    const prod = await eventually(async () => {
      const state = await prodOf(id);
      return state.rolloutPct === 40 ? state : undefined;
    });
    expect(prod.schedule).toEqual([{ at: '2099-01-01T00:00:00Z', set: { rolloutPct: 60 } }]);
  });
});
