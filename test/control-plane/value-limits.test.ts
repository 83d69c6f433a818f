import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { commitCount, createFlag, createProject } from './fixtures.js';

/** `{ "a": { "a": … 1 } }` with `levels` objects. */
function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('limits on flag values and condition values (docs/api.md, "Limits")', () => {
  let svc: TestService;
  let api: HttpClient;
  let sdk: HttpClient;
  let project: Json;
  let flag: Json;
  const put = (body: unknown) => api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, body);

  beforeAll(async () => {
    svc = await startTestService();
    api = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(api, 'shop');
    flag = await createFlag(api, project.id, { key: 'layout', kind: 'json', defaultValue: {} });
    sdk = httpClient(svc.evalUrl, (await api.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key);
  });
  afterAll(() => svc.stop());

  /** Sends `body`, expects 400 invalid_input whose message contains `words`, and no commit. */
  async function refused(send: () => Promise<{ status: number; body: Json }>, words: string): Promise<void> {
    const before = commitCount(svc.gitdir());
    const res = await send();
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_input');
    expect(res.body.error.message).toContain(words);
    expect(commitCount(svc.gitdir())).toBe(before);
  }

  describe('a json value nests at most 64 levels', () => {
    it('serves a value 64 levels deep', async () => {
      expect((await put({ enabled: true, rolloutPct: 100, valueOn: nested(64) })).status).toBe(200);
      const served = await sdk.post('/v1/evaluate', { key: 'layout' });
      expect(served.body.layout.value).toEqual(nested(64));
    });

    it('refuses valueOn 65 levels deep with 400, naming the field', async () => {
      await refused(() => put({ valueOn: nested(65) }), 'valueOn: must not nest arrays and objects more than 64 levels deep');
    });

    it('refuses a defaultValue 65 levels deep when a flag is created', async () => {
      await refused(
        () => api.post(`/api/v1/projects/${project.id}/flags`, { key: 'deep', kind: 'json', defaultValue: nested(65) }),
        'defaultValue: must not nest',
      );
    });

    it('refuses a number JSON cannot carry (1e309 parses to Infinity, which would be served as null)', async () => {
      const raw = (text: string) =>
        api.request('PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, {
          rawBody: text,
          headers: { 'content-type': 'application/json' },
        });
      await refused(() => raw('{"valueOn":{"limit":1e309}}'), 'valueOn.limit: must hold finite numbers only');
      await refused(() => raw('{"valueOff":-1e309}'), 'valueOff: must hold finite numbers only');
    });

    it('refuses a body nested 1,000 levels deep with 400 before reading it', async () => {
      await refused(() => put({ valueOn: nested(1000) }), 'the body nests arrays and objects more than 100 levels deep');
      let arrays: unknown = [];
      for (let i = 0; i < 1000; i++) arrays = [arrays];
      await refused(() => put({ valueOff: arrays }), 'more than 100 levels deep');
    });
  });

  describe('condition values', () => {
    const inRule = (value: unknown) => ({ rules: [{ serve: 'on', conditions: [{ attribute: 'country', op: 'in', value }] }] });

    it('accepts 1,000 values in an in list', async () => {
      expect((await put(inRule(Array.from({ length: 1000 }, (_, i) => `c${i}`)))).status).toBe(200);
    });

    it('refuses 1,001 values in an in or not_in list', async () => {
      await refused(
        () => put(inRule(Array.from({ length: 1001 }, (_, i) => i))),
        'rules[0].conditions[0].value: must list at most 1,000 values',
      );
      const notIn = {
        rules: [{ serve: 'on', conditions: [{ attribute: 'country', op: 'not_in', value: Array.from({ length: 1001 }, (_, i) => i) }] }],
      };
      await refused(() => put(notIn), 'must list at most 1,000 values');
    });

    it('accepts a string of 65,536 characters and refuses one of 65,537', async () => {
      const eq = (value: string) => ({ rules: [{ serve: 'on', conditions: [{ attribute: 'note', op: 'eq', value }] }] });
      expect((await put(eq('x'.repeat(65_536)))).status).toBe(200);
      await refused(() => put(eq('x'.repeat(65_537))), 'rules[0].conditions[0].value: must be at most 65,536 characters long');
      await refused(
        () => put(inRule(['ok', 'y'.repeat(65_537)])),
        'rules[0].conditions[0].value[1]: must be at most 65,536 characters long',
      );
    });

    it('still names the operator when the value has the wrong type', async () => {
      await refused(() => put(inRule('DE')), 'must be an array of strings, numbers, booleans or nulls for op "in"');
    });
  });
});

describe("the dashboard's rules check with a YAML alias bomb", () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.stop());

  it('answers with an issue under the rules instead of a 500', async () => {
    const levels = 'abcdefgh'.split('');
    const bomb = levels
      .map((name, i) =>
        i === 0
          ? `${name}: &${name} ["x","x","x","x","x","x","x","x","x"]`
          : `${name}: &${name} [${Array(9)
              .fill(`*${levels[i - 1]}`)
              .join(',')}]`,
      )
      .join('\n');
    const res = await httpClient(svc.controlUrl, svc.admin).post('/dashboard/api/validate-config', { kind: 'boolean', rulesYaml: bomb });
    expect(res.status).toBe(200);
    expect(res.body.rules).toBeNull();
    expect(res.body.issues).toEqual([{ field: 'rules', message: expect.stringContaining('YAML aliases') }]);
  });

  it('answers with an issue for rules nested too deeply for the YAML reader', async () => {
    const res = await httpClient(svc.controlUrl, svc.admin).post('/dashboard/api/validate-config', {
      kind: 'boolean',
      rulesYaml: `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
    });
    expect(res.status).toBe(200);
    expect(res.body.rules).toBeNull();
    expect(res.body.issues.length).toBeGreaterThan(0);
  });
});
