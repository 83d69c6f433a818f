import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { commitCount, committedFile, createFlag, createProject, headTrailer } from './fixtures.js';

describe('PUT /flags/:id/environments/:env/config', () => {
  let svc: TestService;
  let api: HttpClient;
  let project: Json;
  let n = 0;
  const newFlag = (body: Record<string, unknown> = {}) => createFlag(api, project.id, { key: `cfg-${++n}`, ...body });
  const put = (flag: Json, env: string, body: unknown) => api.put(`/api/v1/flags/${flag.id}/environments/${env}/config`, body);

  beforeAll(async () => {
    svc = await startTestService();
    api = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(api, 'shop');
  });
  afterAll(() => svc.stop());

  it('replaces the sent fields, keeps the others, bumps the version and answers the whole flag', async () => {
    const flag = await newFlag();
    const before = commitCount(svc.gitdir());
    const res = await put(flag, 'prod', { enabled: true, rolloutPct: 25 });
    expect(res.status).toBe(200);
    expect(res.body.environments.prod).toEqual({
      enabled: true,
      rolloutPct: 25,
      valueOn: true,
      valueOff: false,
      version: 2,
      rules: [],
      killed: false,
      schedule: [],
      nextStep: null,
    });
    expect(res.body.environments.dev).toEqual(flag.environments.dev);
    expect(commitCount(svc.gitdir())).toBe(before + 1);
    expect(headTrailer(svc.gitdir(), 'Flagops-Action')).toBe('config_update');
    expect(headTrailer(svc.gitdir(), 'Flagops-Environment')).toBe('prod');
    expect(committedFile(svc.gitdir(), `projects/shop/environments/prod/${flag.key}.yaml`)).toContain('rolloutPct: 25');
  });

  it('writes a -0 sent in JSON as 0 on main, the number it is', async () => {
    const flag = await newFlag();
    const res = await api.request('PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, {
      rawBody: '{"enabled":true,"rolloutPct":-0}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    const file = committedFile(svc.gitdir(), `projects/shop/environments/prod/${flag.key}.yaml`);
    expect(file).toContain('enabled: true\nrolloutPct: 0\n');
    expect(file).not.toContain('-0');
  });

  it('a PUT that changes nothing answers 200 with the flag and makes no commit', async () => {
    const flag = await newFlag();
    const before = commitCount(svc.gitdir());
    for (const body of [{}, { enabled: false }, { rolloutPct: 0, valueOn: true }]) {
      const res = await put(flag, 'dev', body);
      expect(res.status).toBe(200);
      expect(res.body.environments.dev.version).toBe(1);
    }
    expect(commitCount(svc.gitdir())).toBe(before);
  });

  describe('expectedVersion (optimistic concurrency)', () => {
    it('applies the update when it matches', async () => {
      const flag = await newFlag();
      const res = await put(flag, 'staging', { enabled: true, expectedVersion: 1 });
      expect(res.status).toBe(200);
      expect(res.body.environments.staging.version).toBe(2);
    });

    it('refuses a mismatch with 409 version_conflict naming the current version, and commits nothing', async () => {
      const flag = await newFlag();
      await put(flag, 'prod', { enabled: true });
      const before = commitCount(svc.gitdir());
      const res = await put(flag, 'prod', { rolloutPct: 50, expectedVersion: 1 });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('version_conflict');
      expect(res.body.error.message).toContain('current version 2');
      expect(commitCount(svc.gitdir())).toBe(before);
    });

    it('two concurrent PUTs with the same expectedVersion: exactly one 200 and one 409', async () => {
      const flag = await newFlag();
      const results = await Promise.all([
        put(flag, 'prod', { rolloutPct: 10, expectedVersion: 1 }),
        put(flag, 'prod', { rolloutPct: 90, expectedVersion: 1 }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = results.find((r) => r.status === 200)!;
      const now = (await api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod;
      expect(now.version).toBe(2);
      expect(now.rolloutPct).toBe(winner.body.environments.prod.rolloutPct);
    });
  });

  describe('rules', () => {
    const condition = { attribute: 'country', op: 'in', value: ['DE', 'FR'] };

    it('gives a rule sent without id one, and keeps a sent id', async () => {
      const flag = await newFlag();
      const res = await put(flag, 'dev', {
        rules: [
          { conditions: [condition], serve: 'on' },
          { id: 'beta', serve: 'off', rolloutPct: 10 },
        ],
      });
      expect(res.status).toBe(200);
      const [first, second] = res.body.environments.dev.rules;
      expect(first).toEqual({ id: expect.stringMatching(/^r_[a-z0-9]{8}$/), serve: 'on', conditions: [condition] });
      expect(second).toEqual({ id: 'beta', serve: 'off', rolloutPct: 10, conditions: [] });
    });

    it('re-sending the same rules without ids is not a change: same ids, no commit', async () => {
      const flag = await newFlag();
      const rules = [{ description: 'EU', conditions: [condition], serve: 'on' }];
      const first = await put(flag, 'dev', { rules });
      const before = commitCount(svc.gitdir());
      const again = await put(flag, 'dev', { rules });
      expect(again.body.environments.dev.rules).toEqual(first.body.environments.dev.rules);
      expect(again.body.environments.dev.version).toBe(2);
      expect(commitCount(svc.gitdir())).toBe(before);
    });

    it('refuses duplicate rule ids, a bad condition value and too many rules with 400 naming the field', async () => {
      const flag = await newFlag();
      const cases: Array<[unknown, string]> = [
        [
          {
            rules: [
              { id: 'a', serve: 'on' },
              { id: 'a', serve: 'off' },
            ],
          },
          'rules[1].id',
        ],
        [{ rules: [{ serve: 'on', conditions: [{ attribute: 'age', op: 'gt', value: 'old' }] }] }, 'rules[0].conditions[0].value'],
        [{ rules: [{ serve: 'sometimes' }] }, 'rules[0].serve'],
        [{ rules: Array.from({ length: 65 }, () => ({ serve: 'on' })) }, 'rules'],
        [{ rules: [{ serve: 'on', conditions: Array.from({ length: 33 }, () => condition) }] }, 'rules[0].conditions'],
      ];
      for (const [body, field] of cases) {
        const res = await put(flag, 'dev', body);
        expect(res.status, field).toBe(400);
        expect(res.body.error.code).toBe('invalid_input');
        expect(res.body.error.message).toContain(field);
      }
    });
  });

  it('refuses invalid fields with 400 naming them, and commits nothing', async () => {
    const flag = await newFlag();
    const before = commitCount(svc.gitdir());
    const cases: Array<[unknown, string]> = [
      [{ rolloutPct: 101 }, 'rolloutPct'],
      [{ rolloutPct: -1 }, 'rolloutPct'],
      [{ enabled: 'yes' }, 'enabled'],
      [{ expectedVersion: 1.5 }, 'expectedVersion'],
      [{ version: 7 }, 'version'],
      [{ killed: false }, 'killed'],
      [{ valueOn: 'on' }, 'valueOn'],
      [{ valueOff: null }, 'valueOff'],
    ];
    for (const [body, field] of cases) {
      const res = await put(flag, 'dev', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message).toContain(field);
    }
    expect(commitCount(svc.gitdir())).toBe(before);
  });

  it('checks values against the flag’s kind: a string flag takes strings', async () => {
    const flag = await newFlag({ kind: 'string', defaultValue: 'blue' });
    const ok = await put(flag, 'prod', { valueOn: 'green', valueOff: 'blue', enabled: true, rolloutPct: 100 });
    expect(ok.status).toBe(200);
    expect(ok.body.environments.prod).toMatchObject({ valueOn: 'green', valueOff: 'blue' });
    const bad = await put(flag, 'prod', { valueOn: 3 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('valueOn');
  });

  it('answers 404 for an unknown environment or flag', async () => {
    const flag = await newFlag();
    const env = await put(flag, 'qa', { enabled: true });
    expect(env.status).toBe(404);
    expect(env.body.error.code).toBe('not_found');
    expect((await api.put('/api/v1/flags/flg_nope/environments/dev/config', { enabled: true })).status).toBe(404);
  });

  describe('clearKill', () => {
    it('clears a kill without changing the config version', async () => {
      const flag = await newFlag();
      await api.post(`/api/v1/flags/${flag.id}/environments/prod/kill`);
      const res = await put(flag, 'prod', { clearKill: true });
      expect(res.status).toBe(200);
      expect(res.body.environments.prod).toEqual({ ...flag.environments.prod, killed: false });
      expect(headTrailer(svc.gitdir(), 'Flagops-Action')).toBe('clear_kill');
    });

    it('with config fields: the config is updated (version + 1) and the kill cleared, in two commits', async () => {
      const flag = await newFlag();
      await api.post(`/api/v1/flags/${flag.id}/environments/prod/kill`);
      const before = commitCount(svc.gitdir());
      const res = await put(flag, 'prod', { enabled: true, rolloutPct: 5, clearKill: true, expectedVersion: 1 });
      expect(res.status).toBe(200);
      expect(res.body.environments.prod).toMatchObject({ enabled: true, rolloutPct: 5, version: 2, killed: false });
      expect(commitCount(svc.gitdir())).toBe(before + 2);
    });

    it('with a stale expectedVersion: 409 and the kill stays', async () => {
      const flag = await newFlag();
      await api.post(`/api/v1/flags/${flag.id}/environments/prod/kill`);
      const res = await put(flag, 'prod', { clearKill: true, expectedVersion: 7 });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('version_conflict');
      expect((await api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.killed).toBe(true);
    });

    it('on a flag that is not killed changes nothing', async () => {
      const flag = await newFlag();
      const before = commitCount(svc.gitdir());
      const res = await put(flag, 'dev', { clearKill: true });
      expect(res.status).toBe(200);
      expect(res.body.environments.dev.killed).toBe(false);
      expect(commitCount(svc.gitdir())).toBe(before);
    });
  });
});
