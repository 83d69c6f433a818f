import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { commitCount, committedFile, createFlag, createProject, headTrailer, mainHead } from './fixtures.js';

const AB = [
  { name: 'control', value: false, weight: 50 },
  { name: 'treatment', value: true, weight: 50 },
];

describe('variants, segments and prerequisites through the control plane', () => {
  let svc: TestService;
  let api: HttpClient;
  let agent: HttpClient;
  let project: Json;
  let n = 0;
  const newFlag = (body: Record<string, unknown> = {}) => createFlag(api, project.id, { key: `vsp-${++n}`, ...body });
  const put = (flag: Json, env: string, body: unknown, client = api) =>
    client.put(`/api/v1/flags/${flag.id}/environments/${env}/config`, body);
  const segments = (path = '') => `/api/v1/projects/${project.id}/segments${path}`;
  const evaluate = async (key: string, context: Json, env = 'prod') => {
    const created = await api.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: env });
    const res = await fetch(`${svc.evalUrl}/v1/evaluate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${created.body.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key, context }),
    });
    return ((await res.json()) as Json)[key];
  };

  beforeAll(async () => {
    svc = await startTestService();
    api = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    project = await createProject(api, 'shop');
  });
  afterAll(() => svc.stop());

  describe('variants in a config update', () => {
    it('are committed, shown in the flag and served', async () => {
      const flag = await newFlag();
      const res = await put(flag, 'prod', { enabled: true, rolloutPct: 100, variants: AB, expectedVersion: 1 });
      expect(res.status).toBe(200);
      expect(res.body.environments.prod.variants).toEqual(AB);
      expect(res.body.environments.prod.version).toBe(2);
      expect(committedFile(svc.gitdir(), `projects/shop/environments/prod/${flag.key}.yaml`)).toContain('variants:\n  - name: control');
      const result = await evaluate(flag.key, { userId: 'u-1' });
      expect(['control', 'treatment']).toContain(result.variation);
      expect(result).toMatchObject({ reason: 'default', variantBucket: expect.any(Number) });
    });

    it('variants: null removes them, and valueOn is served again', async () => {
      const flag = await newFlag();
      await put(flag, 'prod', { enabled: true, rolloutPct: 100, variants: AB });
      const res = await put(flag, 'prod', { variants: null });
      expect(res.status).toBe(200);
      expect(res.body.environments.prod.variants).toBeUndefined();
      expect(committedFile(svc.gitdir(), `projects/shop/environments/prod/${flag.key}.yaml`)).not.toContain('variants');
      expect(await evaluate(flag.key, { userId: 'u-1' })).toEqual({ value: true, reason: 'default', variation: 'on' });
    });

    it('a rule may serve a variant by name', async () => {
      const flag = await newFlag();
      const res = await put(flag, 'prod', {
        enabled: true,
        variants: AB,
        rules: [{ id: 'staff', serve: 'treatment', conditions: [{ attribute: 'staff', op: 'eq', value: true }] }],
      });
      expect(res.status).toBe(200);
      expect(await evaluate(flag.key, { attributes: { staff: true } })).toEqual({
        value: true,
        reason: 'rule_match',
        variation: 'treatment',
        ruleId: 'staff',
      });
    });

    it('refuses each invalid variant with 400 invalid_input naming the field, and commits nothing', async () => {
      const flag = await newFlag();
      const before = commitCount(svc.gitdir());
      const cases: Array<[unknown, string]> = [
        [{ variants: [{ ...AB[0], weight: 40 }, AB[1]] }, 'variants: weights must add up to exactly 100 (control 40 + treatment 50 = 90)'],
        [
          {
            variants: [
              { ...AB[0], weight: 49.995 },
              { ...AB[1], weight: 50.005 },
            ],
          },
          'variants[0].weight: must have at most two decimals',
        ],
        [{ variants: [AB[0], { ...AB[1], name: 'control' }] }, 'variants[1].name: "control" is already the name of variant 0'],
        [{ variants: [{ ...AB[0], name: 'off' }, AB[1]] }, 'variants[0].name: must not be on, off or default'],
        [{ variants: [{ ...AB[0], name: 'Blue' }, AB[1]] }, 'variants[0].name: must match'],
        [{ variants: [{ ...AB[0], value: 'yes' }, AB[1]] }, "variants[0].value: must be true or false, as the flag's kind is boolean"],
        // Through the API a field left out keeps its value: null is what removes them.
        [{ variants: [] }, 'variants: must list at least one variant (to remove them, send "variants": null)'],
        [{ rules: [{ serve: 'purple' }] }, 'rules[0].serve: serves variant "purple", which this config does not have'],
      ];
      for (const [body, message] of cases) {
        const res = await put(flag, 'prod', body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error.code).toBe('invalid_input');
        expect(res.body.error.message).toContain(message);
      }
      expect(commitCount(svc.gitdir())).toBe(before);
    });
  });

  describe('segments', () => {
    it('PUT creates (201) then replaces (200), with usedBy; GET lists and reads; the audit names the segment', async () => {
      const created = await agent.put(segments('/beta-testers'), { name: 'Beta testers', userIds: ['ana', 'bo'] });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        key: 'beta-testers',
        name: 'Beta testers',
        description: '',
        userIds: ['ana', 'bo'],
        conditions: [],
        version: 1,
        usedBy: [],
      });
      expect(headTrailer(svc.gitdir(), 'Flagops-Action')).toBe('segment_update');
      expect(headTrailer(svc.gitdir(), 'Flagops-Segment')).toBe('beta-testers');
      expect(committedFile(svc.gitdir(), 'projects/shop/segments/beta-testers.yaml')).toContain('userIds: [ana, bo]');

      const flag = await newFlag();
      await put(flag, 'prod', {
        enabled: true,
        rules: [{ id: 'beta', serve: 'on', conditions: [{ op: 'in_segment', value: 'beta-testers' }] }],
      });
      const replaced = await api.put(segments('/beta-testers'), {
        name: 'Beta testers',
        userIds: ['ana', 'bo', 'chen'],
        expectedVersion: 1,
      });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toMatchObject({ version: 2, usedBy: [flag.key] });
      expect((await api.get(segments())).body.segments.map((s: Json) => s.key)).toContain('beta-testers');
      expect((await api.get(segments('/beta-testers'))).body.userIds).toEqual(['ana', 'bo', 'chen']);
      expect(await evaluate(flag.key, { userId: 'chen' })).toEqual({ value: true, reason: 'rule_match', variation: 'on', ruleId: 'beta' });
      expect(await evaluate(flag.key, { userId: 'dana' })).toEqual({ value: false, reason: 'default', variation: 'off' });

      const audit = await api.get('/api/v1/audit?action=segment_update&limit=5');
      expect(audit.body.entries[0]).toMatchObject({ action: 'segment_update', projectSlug: 'shop', segmentKey: 'beta-testers' });
    });

    it('refuses a stale expectedVersion with 409 version_conflict and bad input with 400 naming the field', async () => {
      await api.put(segments('/stale'), { userIds: ['a'] });
      const before = commitCount(svc.gitdir());
      const stale = await api.put(segments('/stale'), { userIds: ['b'], expectedVersion: 0 });
      expect(stale.status).toBe(409);
      expect(stale.body.error.code).toBe('version_conflict');
      for (const [body, field] of [
        [{ userIds: [1] }, 'userIds[0]'],
        [{ userIds: Array.from({ length: 10_001 }, (_, i) => `u${i}`) }, 'userIds'],
        [{ conditions: [{ op: 'in_segment', value: 'x' }] }, 'conditions[0].op'],
        [{ color: 'red' }, 'color'],
      ] as const) {
        const res = await api.put(segments('/stale'), body);
        expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect(res.body.error.message).toContain(field);
      }
      const badKey = await api.put(segments('/Not_Valid!'), {});
      expect(badKey.status).toBe(400);
      expect(commitCount(svc.gitdir())).toBe(before);
    });

    it('a PUT that changes nothing answers 200 and makes no commit: main stays, the version too', async () => {
      const body = {
        name: 'Same',
        description: 'unchanged',
        userIds: ['a', 'b'],
        conditions: [{ attribute: 'plan', op: 'eq', value: 'pro' }],
      };
      expect((await api.put(segments('/same'), body)).status).toBe(201);
      const version = (await api.get(segments('/same'))).body.version;
      const head = mainHead(svc.gitdir());
      const again = await agent.put(segments('/same'), { ...body, expectedVersion: version });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ ...body, version });
      expect(mainHead(svc.gitdir())).toBe(head);
      expect((await api.get(segments('/same'))).body.version).toBe(version);
    });

    it('a refused DELETE (409, a config uses the segment) changes nothing: main, the file and the segment stay', async () => {
      await api.put(segments('/kept'), { userIds: ['a'] });
      const flag = await newFlag();
      await put(flag, 'prod', { rules: [{ id: 'x', serve: 'on', conditions: [{ op: 'in_segment', value: 'kept' }] }] });
      const segment = (await api.get(segments('/kept'))).body;
      const file = committedFile(svc.gitdir(), 'projects/shop/segments/kept.yaml');
      const head = mainHead(svc.gitdir());
      const refused = await api.delete(segments('/kept'));
      expect(refused.status).toBe(409);
      expect(refused.body.error).toEqual({
        code: 'conflict',
        message: expect.stringContaining(`segment kept is used by ${flag.key} (prod)`),
      });
      expect(mainHead(svc.gitdir())).toBe(head);
      expect(committedFile(svc.gitdir(), 'projects/shop/segments/kept.yaml')).toBe(file);
      expect((await api.get(segments('/kept'))).body).toEqual(segment);
    });

    it('DELETE answers 409 conflict naming the flags while a config uses it, then deletes it', async () => {
      await api.put(segments('/in-use'), { userIds: ['a'] });
      const flag = await newFlag();
      await put(flag, 'staging', { rules: [{ id: 'x', serve: 'on', conditions: [{ op: 'not_in_segment', value: 'in-use' }] }] });
      const refused = await api.delete(segments('/in-use'));
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('conflict');
      expect(refused.body.error.message).toContain(flag.key);
      await put(flag, 'staging', { rules: [] });
      const deleted = await agent.delete(segments('/in-use'));
      expect(deleted.status).toBe(200);
      expect(headTrailer(svc.gitdir(), 'Flagops-Action')).toBe('segment_delete');
      expect((await api.get(segments('/in-use'))).status).toBe(404);
    });

    it('a condition naming an unknown segment is 400 naming the field', async () => {
      const flag = await newFlag();
      const res = await put(flag, 'prod', { rules: [{ serve: 'on', conditions: [{ op: 'in_segment', value: 'nobody' }] }] });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('rules[0].conditions[0].value: names segment "nobody"');
    });
  });

  describe('prerequisites', () => {
    it('are committed and evaluated: a killed prerequisite turns its dependant off', async () => {
      const base = await newFlag();
      await put(base, 'prod', { enabled: true, rolloutPct: 100 });
      const dependent = await newFlag();
      const res = await put(dependent, 'prod', { enabled: true, rolloutPct: 100, prerequisites: [{ flag: base.key, variation: 'on' }] });
      expect(res.status).toBe(200);
      expect(res.body.environments.prod.prerequisites).toEqual([{ flag: base.key, variation: 'on' }]);
      expect(await evaluate(dependent.key, {})).toEqual({ value: true, reason: 'default', variation: 'on' });
      await api.post(`/api/v1/flags/${base.id}/environments/prod/kill`, {});
      expect(await evaluate(dependent.key, {})).toEqual({
        value: false,
        reason: 'prerequisite_failed',
        variation: 'off',
        prerequisiteKey: base.key,
      });
    });

    it('refuses an unknown flag and a cycle with 400 naming the field; null removes them', async () => {
      const a = await newFlag();
      const b = await newFlag();
      const unknown = await put(a, 'dev', { prerequisites: [{ flag: 'no-such-flag', variation: 'on' }] });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.message).toContain('prerequisites[0].flag: names flag "no-such-flag"');
      expect((await put(a, 'dev', { prerequisites: [{ flag: b.key, variation: 'on' }] })).status).toBe(200);
      const cycle = await put(b, 'dev', { prerequisites: [{ flag: a.key, variation: 'on' }] });
      expect(cycle.status).toBe(400);
      expect(cycle.body.error.message).toContain(`prerequisites[0].flag: is part of a prerequisite cycle: ${a.key} → ${b.key} → ${a.key}`);
      const removed = await put(a, 'dev', { prerequisites: null });
      expect(removed.body.environments.dev.prerequisites).toBeUndefined();
    });

    it('refuses a variation the flag cannot serve there, and one flag twice, with 400 naming the field', async () => {
      const a = await newFlag();
      const b = await newFlag();
      const unservable = await put(a, 'prod', { prerequisites: [{ flag: b.key, variation: 'blue' }] });
      expect(unservable.status).toBe(400);
      expect(unservable.body.error).toEqual({
        code: 'invalid_input',
        message: expect.stringContaining(`prerequisites[0].variation: names variation "blue", which flag "${b.key}" cannot serve in prod`),
      });
      const twice = await put(a, 'prod', {
        prerequisites: [
          { flag: b.key, variation: 'on' },
          { flag: b.key, variation: 'off' },
        ],
      });
      expect(twice.status).toBe(400);
      expect(twice.body.error.message).toContain(`prerequisites[1].flag: names flag "${b.key}" a second time`);
      expect((await api.get(`/api/v1/flags/${a.id}`)).body.environments.prod.version).toBe(1);
      // With a variant named blue in prod, b can serve it: the same prerequisite is accepted.
      const variants = [
        { name: 'blue', value: true, weight: 50 },
        { name: 'green', value: false, weight: 50 },
      ];
      expect((await put(b, 'prod', { variants })).status).toBe(200);
      expect((await put(a, 'prod', { prerequisites: [{ flag: b.key, variation: 'blue' }] })).status).toBe(200);
    });

    it('refuse "on" of a flag with variants there, which serves a variant wherever it would serve on', async () => {
      const ab = await newFlag();
      await put(ab, 'prod', { enabled: true, rolloutPct: 100, variants: AB });
      const dependent = await newFlag();
      const before = commitCount(svc.gitdir());
      const res = await put(dependent, 'prod', { enabled: true, rolloutPct: 100, prerequisites: [{ flag: ab.key, variation: 'on' }] });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({
        code: 'invalid_input',
        message: `prerequisites[0].variation: names variation "on", which flag "${ab.key}" cannot serve in prod (it serves off, control, treatment)`,
      });
      expect(commitCount(svc.gitdir())).toBe(before);
      // Where that flag has no variants (dev), it serves on.
      expect((await put(dependent, 'dev', { prerequisites: [{ flag: ab.key, variation: 'on' }] })).status).toBe(200);
    });

    it('refuse variants on a flag whose "on" another flag\'s prerequisite names, by an update or a promotion', async () => {
      const base = await newFlag();
      await put(base, 'dev', { enabled: true, rolloutPct: 50 });
      await put(base, 'staging', { enabled: true, rolloutPct: 100, variants: AB });
      const dependent = await newFlag();
      expect((await put(dependent, 'dev', { enabled: true, prerequisites: [{ flag: base.key, variation: 'on' }] })).status).toBe(200);
      const before = commitCount(svc.gitdir());
      const update = await put(base, 'dev', { variants: AB });
      expect(update.status).toBe(400);
      expect(update.body.error.message).toBe(
        `variants: leaves a prerequisite of flag "${dependent.key}" unmet: projects/shop/environments/dev/${dependent.key}.yaml names variation "on" of this flag, which it would no longer serve in dev (it would serve off, control, treatment)`,
      );
      // A promotion names its own field, and its preview answers as the write does.
      const unmet = `fromEnv: the staging config cannot be served in dev: variants: leaves a prerequisite of flag "${dependent.key}" unmet: projects/shop/environments/dev/${dependent.key}.yaml names variation "on" of this flag, which it would no longer serve in dev (it would serve off, control, treatment)`;
      for (const path of ['promote', 'preview']) {
        const promote = await api.post(`/api/v1/flags/${base.id}/environments/dev/${path}`, { fromEnv: 'staging' });
        expect(promote.status, path).toBe(400);
        expect(promote.body.error).toEqual({ code: 'invalid_input', message: unmet });
      }
      expect(commitCount(svc.gitdir())).toBe(before);
      expect((await api.get(`/api/v1/flags/${base.id}`)).body.environments.dev.variants).toBeUndefined();
    });
  });
});
