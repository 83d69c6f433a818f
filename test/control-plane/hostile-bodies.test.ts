import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { createFlag, createProject } from './fixtures.js';

/** Nested `levels` deep, in objects or in arrays. */
function deep(levels: number, inArrays = false): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = inArrays ? [value] : { a: value };
  return value;
}

/**
 * Hostile bodies, as raw JSON text (some cannot be written as a JavaScript value: 1e309, duplicate keys, lone
 * surrogates). Each is sent as the whole body and in place of each field a route knows.
 */
const VALUES: Record<string, string> = {
  'deep objects (1000)': JSON.stringify(deep(1000)),
  'deep arrays (1000)': JSON.stringify(deep(1000, true)),
  'objects just under the body limit (99)': JSON.stringify(deep(99)),
  'arrays at the value limit (64)': JSON.stringify(deep(64, true)),
  'a huge array': JSON.stringify(Array.from({ length: 100_000 }, (_, i) => i % 10)),
  'a long string': JSON.stringify('x'.repeat(500_000)),
  '__proto__ key': '{"__proto__":{"admin":true,"polluted":1}}',
  'constructor key': '{"constructor":{"prototype":{"polluted":1}}}',
  'nested __proto__': '{"a":{"__proto__":[1,2],"b":{"__proto__":null}}}',
  'duplicate keys': '{"a":1,"a":2}',
  '1e309 (overflows to Infinity)': '1e309',
  '-1e309': '-1e309',
  'a tiny number': '1e-400',
  '-0': '-0',
  'a number past 2^53': '9007199254740993',
  'a lone surrogate': '"\\ud800"',
  'NUL and control characters': '"a\\u0000b\\u0007c"',
  'emoji and right-to-left text': '"🚩 עברית ‮"',
  null: 'null',
  true: 'true',
  'a string': '"x"',
  'an empty array': '[]',
  'an empty object': '{}',
  'an array of objects': '[{"key":"x"},{"key":"y"}]',
};

interface Target {
  name: string;
  method: string;
  url: () => string;
  key: () => string;
  /** Fields of a valid body, each replaced by every hostile value in turn. */
  fields: Record<string, string>;
}

describe('hostile request bodies get 2xx or a 4xx with the error body, never a 500', () => {
  let svc: TestService;
  let project: Json;
  let flag: Json;
  let sdkKey: string;
  let n = 0;

  beforeAll(async () => {
    svc = await startTestService({ planProjectLimit: 1000 });
    const admin = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(admin, 'shop');
    flag = await createFlag(admin, project.id, { key: 'checkout', kind: 'json', defaultValue: {} });
    sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
  });
  afterAll(() => svc.stop());

  const control = (path: () => string) => () => `${svc.controlUrl}${path()}`;
  const flagPath = (rest: string) => () => `/api/v1/flags/${flag.id}${rest}`;
  const targets: Target[] = [
    {
      name: 'POST /projects',
      method: 'POST',
      url: control(() => '/api/v1/projects'),
      key: () => svc.admin,
      fields: { name: '"P"', slug: '"p-slug"' },
    },
    {
      name: 'POST /projects/:id/flags',
      method: 'POST',
      url: control(() => `/api/v1/projects/${project.id}/flags`),
      key: () => svc.admin,
      fields: { key: '"k"', name: '"n"', description: '"d"', kind: '"json"', defaultValue: '{}' },
    },
    {
      name: 'PATCH /flags/:id',
      method: 'PATCH',
      url: control(flagPath('')),
      key: () => svc.agent,
      fields: { name: '"n"', description: '"d"' },
    },
    {
      name: 'PUT .../config',
      method: 'PUT',
      url: control(flagPath('/environments/dev/config')),
      key: () => svc.agent,
      fields: { enabled: 'true', rolloutPct: '50', valueOn: '{}', valueOff: '{}', rules: '[]', clearKill: 'false' },
    },
    {
      name: 'PUT .../config (expectedVersion)',
      method: 'PUT',
      url: control(flagPath('/environments/prod/config')),
      key: () => svc.agent,
      fields: { expectedVersion: '1' },
    },
    {
      name: 'PUT .../config (a rule)',
      method: 'PUT',
      url: control(flagPath('/environments/staging/config')),
      key: () => svc.agent,
      fields: { rules: '[{"serve":"on","conditions":[{"attribute":"a","op":"in","value":["x"]}]}]' },
    },
    {
      name: 'POST .../kill',
      method: 'POST',
      url: control(flagPath('/environments/staging/kill')),
      key: () => svc.agent,
      fields: { reason: '"r"' },
    },
    {
      name: 'POST .../promote',
      method: 'POST',
      url: control(flagPath('/environments/staging/promote')),
      key: () => svc.agent,
      fields: { fromEnv: '"dev"' },
    },
    {
      name: 'POST /keys',
      method: 'POST',
      url: control(() => '/api/v1/keys'),
      key: () => svc.admin,
      fields: { kind: '"sdk"', name: '"n"', projectId: '"PROJECT_ID"', environment: '"dev"' },
    },
    {
      name: 'POST /users',
      method: 'POST',
      url: control(() => '/api/v1/users'),
      key: () => svc.admin,
      fields: { username: '"u"', name: '"n"', password: '"long-enough-password"' },
    },
    {
      name: 'POST /dashboard/api/validate-config',
      method: 'POST',
      url: control(() => '/dashboard/api/validate-config'),
      key: () => svc.admin,
      fields: { kind: '"json"', config: '{}', rulesYaml: '"- serve: on"' },
    },
    {
      name: 'POST /v1/evaluate',
      method: 'POST',
      url: () => `${svc.evalUrl}/v1/evaluate`,
      key: () => sdkKey,
      fields: { key: '"checkout"', keys: '["checkout"]', context: '{"userId":"u","attributes":{"a":1}}' },
    },
    {
      name: 'POST /v1/evaluate (context fields)',
      method: 'POST',
      url: () => `${svc.evalUrl}/v1/evaluate`,
      key: () => sdkKey,
      fields: { key: '"checkout"', context: '{}' },
    },
    {
      name: 'POST /v1/counts',
      method: 'POST',
      url: () => `${svc.evalUrl}/v1/counts`,
      key: () => sdkKey,
      fields: {
        counts: `[{"flagKey":"checkout","variation":"on","hour":"${new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString()}","count":1}]`,
      },
    },
  ];

  /** Every body sent to a target: each hostile value as the body, and in place of each field. */
  function bodies(target: Target): Array<[string, string]> {
    const out: Array<[string, string]> = Object.entries(VALUES).map(([what, text]) => [`the body is ${what}`, text]);
    for (const field of Object.keys(target.fields)) {
      for (const [what, text] of Object.entries(VALUES)) {
        const fields = Object.entries({ ...target.fields, [field]: text }).map(([k, v]) => `${JSON.stringify(k)}:${v}`);
        out.push([`${field} is ${what}`, `{${fields.join(',')}}`]);
      }
    }
    // Unique keys and slugs for creates, so that a well-formed body creates something new each time.
    return out.map(([what, text]) => [
      what,
      text.replace('"k"', `"k-${++n}"`).replace('"p-slug"', `"p-${++n}"`).replace('"u"', `"user-${++n}"`).replace('PROJECT_ID', project.id),
    ]);
  }

  for (const target of targets) {
    it(target.name, async () => {
      const wrong: string[] = [];
      for (const [what, text] of bodies(target)) {
        const res = await fetch(target.url(), {
          method: target.method,
          headers: { authorization: `Bearer ${target.key()}`, 'content-type': 'application/json' },
          body: text,
        });
        const body = await res.text();
        if (res.status >= 500) wrong.push(`${what}: ${res.status} ${body.slice(0, 200)}`);
        else if (res.status >= 400) {
          const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
          if (typeof parsed.error?.code !== 'string' || typeof parsed.error.message !== 'string')
            wrong.push(`${what}: ${res.status} without the error body: ${body.slice(0, 200)}`);
        }
      }
      expect(wrong).toEqual([]);
      expect(Object.prototype).not.toHaveProperty('polluted');
      expect(Object.prototype).not.toHaveProperty('admin');
      // A hundred-odd requests, those of flag creation each a commit: room for a machine shared with other tests.
    }, 120_000);
  }

  it('the service still serves after all of it', async () => {
    expect((await fetch(`${svc.controlUrl}/healthz`)).status).toBe(200);
    const res = await httpClient(svc.evalUrl, sdkKey).post('/v1/evaluate', { key: 'checkout' });
    expect(res.status).toBe(200);
  });
});
