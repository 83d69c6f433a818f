import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flagops } from '../cli/cli-harness.js';
import { git, pushEdit } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { ManualClock } from '../schedule/manual-clock.js';
import { createFlag, createProject } from './fixtures.js';

const DAY = 86_400_000;

/** A project whose flags were made 60 days ago (the service's clock), then looked at today. */
describe('GET /projects/:id/flags/health', () => {
  const started = Date.now();
  const clock = new ManualClock(started - 60 * DAY);
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let project: Json;
  const flags: Record<string, Json> = {};
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

  const setAll = async (key: string, config: Record<string, unknown>) => {
    for (const env of ['dev', 'staging', 'prod']) {
      const res = await admin.put(`/api/v1/flags/${flags[key].id}/environments/${env}/config`, config);
      expect(res.status).toBe(200);
    }
  };
  const health = async (query = '') => {
    const res = await agent.get(`/api/v1/projects/${project.id}/flags/health${query}`);
    expect(res.status).toBe(200);
    return Object.fromEntries(res.body.flags.map((f: Json) => [f.key, f]));
  };

  beforeAll(async () => {
    svc = await startTestService({ clock });
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    project = await createProject(admin, 'shop');
    for (const key of ['untouched', 'rolled', 'partial', 'recent', 'ops', 'expiring', 'gone', 'evaluated'])
      flags[key] = await createFlag(admin, project.id, { key });
    clock.advance(DAY);
    await setAll('rolled', { enabled: true, rolloutPct: 100 });
    await setAll('evaluated', { enabled: true, rolloutPct: 100 });
    await admin.put(`/api/v1/flags/${flags.partial.id}/environments/prod/config`, { enabled: true, rolloutPct: 50 });
    clock.advance(54 * DAY);
    // Five days ago: a rule that serves what the rollout serves anyway changes nothing anyone gets.
    await admin.put(`/api/v1/flags/${flags.rolled.id}/environments/prod/config`, {
      rules: [{ conditions: [{ attribute: 'plan', op: 'eq', value: 'pro' }], serve: 'on' }],
    });
    await setAll('recent', { enabled: true, rolloutPct: 100 });
    expect((await admin.delete(`/api/v1/flags/${flags.gone.id}`)).status).toBe(200);
    clock.advance(5 * DAY);
    // Today, pushed by an engineer: lifecycle data in the flag files.
    pushEdit(svc.gitdir(), (checkout) => {
      appendFileSync(path.join(checkout, 'projects/shop/flags/ops.yaml'), 'lifecycle:\n  type: operational\n  owner: team-ops\n');
      appendFileSync(path.join(checkout, 'projects/shop/flags/expiring.yaml'), 'lifecycle:\n  type: experiment\n  expiresAt: 2026-01-31\n');
    });
    const sdk = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'staging' })).body.key;
    expect((await httpClient(svc.evalUrl, sdk).post('/v1/evaluate', { key: 'evaluated', context: {} })).status).toBe(200);
  });
  afterAll(() => svc?.stop());

  it('calls a release flag that every environment has served one value for 30 days stale, saying which and since when', async () => {
    const { rolled, evaluated } = await health();
    expect(evaluated).toEqual({
      key: 'evaluated',
      status: 'stale',
      reasons: [
        { code: 'rolled_out', message: `rolled out: every environment has served true to everyone since ${day(started - 59 * DAY)}` },
      ],
    });
    // The rule added five days ago served nothing new: the rollout still dates from 59 days ago.
    expect(rolled.status).toBe('stale');
    expect(rolled.reasons[0].message).toContain(`since ${day(started - 59 * DAY)}`);
  });

  it('counts a flag off everywhere since it was made as rolled out to its off value', async () => {
    const { untouched } = await health();
    expect(untouched.status).toBe('stale');
    expect(untouched.reasons.map((r: Json) => r.code)).toEqual(['rolled_out', 'no_evaluations']);
    expect(untouched.reasons[0].message).toBe(
      `rolled out: every environment has served false to everyone since ${day(started - 60 * DAY)}`,
    );
  });

  it('calls a flag nothing evaluated for 30 days potentially stale, and an evaluated one not', async () => {
    const { partial, evaluated } = await health();
    expect(partial).toEqual({
      key: 'partial',
      status: 'potentially_stale',
      reasons: [{ code: 'no_evaluations', message: 'no evaluations: not evaluated in any environment in the last 30 days' }],
    });
    expect(evaluated.reasons.map((r: Json) => r.code)).not.toContain('no_evaluations');
  });

  it('measures against staleAfterDays', async () => {
    expect((await health()).recent.status).toBe('potentially_stale');
    expect((await health()).recent.reasons.map((r: Json) => r.code)).toEqual(['no_evaluations']);
    const { recent } = await health('?staleAfterDays=4.5');
    expect(recent.reasons.map((r: Json) => r.code)).toEqual(['rolled_out', 'no_evaluations']);
    const young = await health('?staleAfterDays=90');
    expect(young.untouched).toEqual({ key: 'untouched', status: 'active', reasons: [] });
  });

  it('never calls an operational flag rolled out, and reads expiry from the flag file', async () => {
    const { ops, expiring } = await health();
    expect(ops.reasons.map((r: Json) => r.code)).toEqual(['no_evaluations']);
    expect(expiring.status).toBe('stale');
    expect(expiring.reasons[0]).toEqual({ code: 'expired', message: 'expired: it was due to be removed by 2026-01-31' });
  });

  it('leaves archived flags out', async () => {
    const all = await health();
    expect(Object.keys(all).sort()).toEqual(['evaluated', 'expiring', 'ops', 'partial', 'recent', 'rolled', 'untouched']);
  });

  it('answers the same after a restart, from history kept on disk', async () => {
    const before = await health();
    await svc.restart();
    agent = httpClient(svc.controlUrl, svc.agent);
    admin = httpClient(svc.controlUrl, svc.admin);
    expect(await health()).toEqual(before);
  });

  it.each(['-1', 'soon', '1e3', '36501', ''])(
    'refuses staleAfterDays=%j other than a number of days (400), empty meaning the default',
    async (value) => {
      const res = await agent.get(`/api/v1/projects/${project.id}/flags/health?staleAfterDays=${value}`);
      if (value === '') {
        expect(res.status).toBe(200);
        return;
      }
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_input' });
      expect(res.body.error.message).toContain('staleAfterDays');
    },
  );

  it('gives flagops refs --health the same status per flag, and a clear failure for a key it refuses', async () => {
    const work = mkdtempSync(path.join(tmpdir(), 'flagops-refs-health-'));
    try {
      git(work, 'clone', '--quiet', svc.gitdir(), 'flags');
      mkdirSync(path.join(work, 'src'));
      writeFileSync(path.join(work, 'src/app.ts'), "client.boolean('rolled', false);\nclient.boolean('gone', false);\n");
      const args = ['refs', '--dir', 'src', '--flags', 'flags', '--format', 'json', '--health', svc.controlUrl];
      const out = await flagops(args, work, { FLAGOPS_API_KEY: svc.agent });
      expect(out.code).toBe(0);
      const byKey = await health();
      const statuses = Object.fromEntries(JSON.parse(out.stdout).flags.map((f: Json) => [f.key, f.status]));
      for (const key of Object.keys(byKey)) expect(statuses[key], key).toBe(byKey[key].status);
      expect(statuses.ops).toBe('potentially_stale'); // only the service knows nothing evaluated it
      expect(statuses.gone).toBe('stale'); // archived, and still referenced
      const refused = await flagops(args, work, { FLAGOPS_API_KEY: 'svc_agt_not_a_key_of_this_service_0000' });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/no flag health: .* answered 401/);
      expect((await flagops(args, work, {})).code).toBe(2);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('answers 404 for a project that is not there and 401 without a credential', async () => {
    expect((await agent.get('/api/v1/projects/prj_nope/flags/health')).status).toBe(404);
    expect((await httpClient(svc.controlUrl, null).get(`/api/v1/projects/${project.id}/flags/health`)).status).toBe(401);
  });
});
