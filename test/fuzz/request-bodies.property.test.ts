/**
 * Request bodies: whatever JSON a caller sends to a write route of the control plane or to POST /v1/evaluate,
 * the answer is a 2xx, or a 4xx with the body `{ error: { code, message } }`; never a 5xx, never a hang.
 * And a 2xx means what was sent is what is now held: the answer (read back from the committed files) shows
 * the values sent. Bodies are any JSON (fast-check's jsonValue, deeply nested values, text that is not JSON
 * at all), and objects shaped like each route's body with wrong types, unknown fields and odd strings mixed
 * in. One real service runs for the whole file, with a project, a flag and an SDK key to aim at.
 */
import { deepStrictEqual } from 'node:assert/strict';
import type { JsonValue } from '@flagops/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { anyString, context, deeplyNested, flagKey, jsonValue, percentage, rule } from './arbitraries.js';
import { runs } from './fuzz-settings.js';

/** Longer than any answer takes, even on a loaded machine: a request still open by then is a hang. */
const HANG_MS = 15_000;

interface Target {
  service: TestService;
  projectId: string;
  flagId: string;
  flagKey: string;
  sdkKey: string;
}

/** A body to send: JSON text, text that is not JSON, or nothing. */
type Body = { json: unknown } | { text: string } | { none: true };

interface Answer {
  status: number;
  text: string;
  type: string | null;
}

async function send(url: string, method: string, key: string, body: Body): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  let payload: string | undefined;
  if ('json' in body) payload = JSON.stringify(body.json);
  else if ('text' in body) payload = body.text;
  if (payload !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body: payload, signal: AbortSignal.timeout(HANG_MS) });
  } catch (err) {
    throw new Error(`${method} ${url} got no answer: ${(err as Error).message}`);
  }
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
}

/** The property itself: 2xx, or 4xx with exactly `{ error: { code, message } }`. */
function expectContractAnswer(what: string, answer: Answer): void {
  const described = `${what} answered ${answer.status} ${answer.text.slice(0, 500)}`;
  expect(answer.status, described).toBeGreaterThanOrEqual(200);
  expect(answer.status, described).toBeLessThan(500);
  if (answer.status < 300) return;
  expect(answer.status, described).toBeGreaterThanOrEqual(400);
  expect(answer.type, described).toMatch(/^application\/json/);
  const body = JSON.parse(answer.text);
  expect(Object.keys(body), described).toEqual(['error']);
  expect(Object.keys(body.error).sort(), described).toEqual(['code', 'message']);
  expect(typeof body.error.code, described).toBe('string');
  expect(typeof body.error.message, described).toBe('string');
}

/** The sent body as the server parsed it (JSON text, so -0 is 0), when it is an object. */
function sentObject(body: Body): Record<string, unknown> | null {
  if (!('json' in body)) return null;
  const parsed = JSON.parse(JSON.stringify(body.json));
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : null;
}

/** After a 2xx: each of `fields` that was sent is in `held` exactly as sent. */
function expectHeldAsSent(what: string, fields: readonly string[], sent: Record<string, unknown>, held: Record<string, unknown>): void {
  for (const name of fields) {
    if (name in sent)
      deepStrictEqual(
        held[name],
        sent[name],
        `${what}: ${name} sent as ${JSON.stringify(sent[name])} is held as ${JSON.stringify(held[name])}`,
      );
  }
}

/** A field of a body: mostly a value of the right type, now and then any JSON value at all. */
function field<T>(valid: fc.Arbitrary<T>): fc.Arbitrary<T | JsonValue> {
  return fc.oneof({ weight: 7, arbitrary: valid }, { weight: 1, arbitrary: jsonValue(2) });
}

/** A flag value: any JSON value, now and then one nested very deep. */
const flagValue = fc.oneof({ weight: 9, arbitrary: jsonValue() }, { weight: 1, arbitrary: deeplyNested(1500) });

/**
 * An object shaped like a route's body: its required fields (each left out now and then), any of its
 * optional ones, and now and then an unknown field. Most such bodies are valid, so the routes' success paths
 * (commits included) are exercised as well as their refusals.
 */
function shapedLike(
  required: Record<string, fc.Arbitrary<unknown>>,
  optional: Record<string, fc.Arbitrary<unknown>> = {},
): fc.Arbitrary<Body> {
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, arbitrary] of Object.entries(required)) fields[key] = fc.option(arbitrary, { freq: 12, nil: undefined });
  for (const [key, arbitrary] of Object.entries(optional)) fields[key] = fc.option(arbitrary, { freq: 2, nil: undefined });
  const unknownField = fc.oneof({ weight: 11, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(anyString, jsonValue(1)) });
  return fc.tuple(fc.record(fields), unknownField).map(([record, extra]) => {
    const body: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(record)) if (value !== undefined) body[key] = value;
    if (extra !== null) body[extra[0]] = extra[1];
    return { json: body };
  });
}

/** Any body at all: any JSON value, a deeply nested one, JSON text, text that is not JSON, or none. */
const anyBody: fc.Arbitrary<Body> = fc.oneof(
  fc.jsonValue().map((json) => ({ json })),
  jsonValue().map((json) => ({ json })),
  deeplyNested(1500).map((json) => ({ json })),
  fc
    .oneof(fc.json(), fc.string(), fc.constantFrom('{', '[1,', '{"a":}', 'null', '""', '\u0000', '{"__proto__": {"x": 1}}'))
    .map((text) => ({ text })),
  fc.constant({ none: true as const }),
);

const name = field(fc.oneof(anyString, fc.string({ minLength: 1, maxLength: 300 })));
const description = field(fc.oneof(anyString, fc.string({ maxLength: 5000 })));
const environment = field(
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom('dev', 'staging', 'prod') }, { weight: 1, arbitrary: anyString }),
);
const slug = field(fc.oneof({ weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,12}$/) }, { weight: 1, arbitrary: anyString }));

/** A rule as a caller may send it: valid, without an id, or with fields and conditions of the wrong type. */
const sentRule = fc.oneof(
  rule,
  rule.map(({ id: _id, ...withoutId }) => withoutId),
  fc.record(
    {
      id: field(fc.string({ maxLength: 8 })),
      serve: field(fc.constantFrom('on', 'off')),
      rolloutPct: field(percentage),
      conditions: field(
        fc.array(
          fc.record(
            { attribute: field(anyString), op: field(fc.constantFrom('eq', 'in', 'gt', 'semver_lt', 'contains')), value: jsonValue(1) },
            { requiredKeys: [] },
          ),
          { maxLength: 3 },
        ),
      ),
    },
    { requiredKeys: [] },
  ),
);

interface Case {
  route: string;
  method: string;
  path: (t: Target, env: string) => string;
  body: (t: Target) => fc.Arbitrary<Body>;
  /** After a 2xx to an object body: what the answer must show of it. */
  held?: (what: string, sent: Record<string, unknown>, answer: Record<string, unknown>, env: string) => void;
  /** Runs in npm test; npm run fuzz gives each route 40 times as many. */
  runs: number;
}

const CASES: Case[] = [
  {
    route: 'POST /api/v1/projects',
    method: 'POST',
    path: () => '/api/v1/projects',
    body: () => shapedLike({ name, slug }),
    held: (what, sent, answer) => expectHeldAsSent(what, ['name', 'slug'], sent, answer),
    runs: 20,
  },
  {
    route: 'POST /api/v1/projects/:id/flags',
    method: 'POST',
    path: (t) => `/api/v1/projects/${t.projectId}/flags`,
    body: () =>
      shapedLike(
        { key: field(fc.oneof({ weight: 4, arbitrary: flagKey }, { weight: 1, arbitrary: anyString })) },
        {
          name,
          description,
          kind: field(fc.constantFrom('boolean', 'string', 'number', 'json', 'json')),
          defaultValue: fc.oneof(fc.boolean(), anyString, flagValue),
        },
      ),
    held: (what, sent, answer) => expectHeldAsSent(what, ['key', 'name', 'description', 'kind', 'defaultValue'], sent, answer),
    runs: 25,
  },
  {
    route: 'PATCH /api/v1/flags/:id',
    method: 'PATCH',
    path: (t) => `/api/v1/flags/${t.flagId}`,
    body: () => shapedLike({}, { name, description }),
    held: (what, sent, answer) => expectHeldAsSent(what, ['name', 'description'], sent, answer),
    runs: 20,
  },
  {
    route: 'PUT /api/v1/flags/:id/environments/:env/config',
    method: 'PUT',
    path: (t, env) => `/api/v1/flags/${t.flagId}/environments/${env}/config`,
    body: () =>
      shapedLike(
        {},
        {
          enabled: field(fc.boolean()),
          rolloutPct: field(fc.oneof({ weight: 4, arbitrary: percentage }, { weight: 1, arbitrary: fc.double() })),
          rules: field(fc.array(sentRule, { maxLength: 4 })),
          valueOn: flagValue,
          valueOff: flagValue,
          clearKill: field(fc.boolean()),
          expectedVersion: field(fc.oneof(fc.nat(20), fc.integer())),
        },
      ),
    held: (what, sent, answer, env) => {
      const environments = answer.environments as Record<string, Record<string, unknown>>;
      expectHeldAsSent(what, ['enabled', 'rolloutPct', 'valueOn', 'valueOff'], sent, environments[env]);
    },
    runs: 40,
  },
  {
    route: 'POST /api/v1/flags/:id/environments/:env/promote',
    method: 'POST',
    path: (t, env) => `/api/v1/flags/${t.flagId}/environments/${env}/promote`,
    body: () => shapedLike({ fromEnv: environment }),
    runs: 20,
  },
  {
    route: 'POST /api/v1/flags/:id/environments/:env/kill',
    method: 'POST',
    path: (t, env) => `/api/v1/flags/${t.flagId}/environments/${env}/kill`,
    body: () =>
      fc.oneof(
        fc.constant({ none: true as const }),
        shapedLike({}, { reason: field(fc.oneof(anyString, fc.string({ maxLength: 5000 }))) }),
      ),
    runs: 20,
  },
  {
    route: 'POST /api/v1/keys',
    method: 'POST',
    path: () => '/api/v1/keys',
    body: (t) => {
      const projectId = field(fc.oneof({ weight: 4, arbitrary: fc.constant(t.projectId) }, { weight: 1, arbitrary: anyString }));
      return fc.oneof(
        shapedLike({ kind: field(fc.constant('sdk')), projectId, environment }, { name }),
        shapedLike({ kind: field(fc.constantFrom('admin', 'agent')) }, { name }),
      );
    },
    // Key names are kept trimmed (a label shown in lists), so the name is compared trimmed.
    held: (what, sent, answer) =>
      expectHeldAsSent(
        what,
        ['kind', 'name', 'projectId', 'environment'],
        typeof sent.name === 'string' ? { ...sent, name: sent.name.trim() } : sent,
        answer,
      ),
    runs: 20,
  },
];

let target: Target;

beforeAll(async () => {
  const service = await startTestService();
  const admin = { authorization: `Bearer ${service.admin}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${service.controlUrl}${path}`, { method: 'POST', headers: admin, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const project = await post('/api/v1/projects', { name: 'Fuzz', slug: 'fuzz' });
  const flag = await post(`/api/v1/projects/${project.id}/flags`, { key: 'target', kind: 'json' });
  const sdk = await post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'dev' });
  target = { service, projectId: project.id, flagId: flag.id, flagKey: flag.key, sdkKey: sdk.key };
});

afterAll(async () => {
  await target?.service.stop();
});

describe('any body sent to a control-plane write route', () => {
  it.each(CASES)(
    '$route answers 2xx, holding what was sent, or a 4xx error body; never 5xx',
    async ({ route, method, path, body, held, runs: count }) => {
      const statuses = new Set<number>();
      const env = fc.oneof(
        { weight: 19, arbitrary: fc.constantFrom('dev', 'staging', 'prod') },
        { weight: 1, arbitrary: fc.constantFrom('qa', 'PROD', '%2e%2e') },
      );
      const who = fc.constantFrom('admin' as const, 'agent' as const);
      await fc.assert(
        fc.asyncProperty(
          fc.oneof({ weight: 3, arbitrary: body(target) }, { weight: 1, arbitrary: anyBody }),
          env,
          who,
          async (sent, environmentName, credential) => {
            const answer = await send(
              `${target.service.controlUrl}${path(target, environmentName)}`,
              method,
              target.service[credential],
              sent,
            );
            statuses.add(Math.floor(answer.status / 100));
            const what = `${route} (${credential}, ${environmentName}) with ${JSON.stringify(sent).slice(0, 300)}`;
            expectContractAnswer(what, answer);
            const object = sentObject(sent);
            if (answer.status < 300 && held !== undefined && object !== null) held(what, object, JSON.parse(answer.text), environmentName);
          },
        ),
        runs({ test: count, fuzz: count * 40 }),
      );
      // Not vacuous: some bodies were accepted (and committed) and some refused.
      expect([...statuses].sort()).toEqual([2, 4]);
    },
  );

  it('leaves the service serving: every read still answers 200 afterwards', async () => {
    for (const path of [
      '/api/v1/projects',
      `/api/v1/projects/${target.projectId}/flags`,
      `/api/v1/flags/${target.flagId}`,
      '/api/v1/audit',
    ]) {
      const answer = await send(`${target.service.controlUrl}${path}`, 'GET', target.service.admin, { none: true });
      expect(answer.status, `${path}: ${answer.text.slice(0, 300)}`).toBe(200);
    }
  });
});

describe('any body sent to POST /v1/evaluate', () => {
  it('answers 200 with one result per key asked for, or a 4xx error body; never 5xx', async () => {
    const statuses = new Set<number>();
    const keys = fc.oneof(fc.constant('target'), flagKey, anyString);
    const shaped = shapedLike(
      {},
      {
        key: field(keys),
        keys: field(fc.array(keys, { maxLength: 5 })),
        context: field(fc.oneof(context, fc.record({ userId: jsonValue(1), attributes: jsonValue(2) }, { requiredKeys: [] }))),
      },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 3, arbitrary: shaped }, { weight: 1, arbitrary: anyBody }), async (sent) => {
        const answer = await send(`${target.service.evalUrl}/v1/evaluate`, 'POST', target.sdkKey, sent);
        statuses.add(Math.floor(answer.status / 100));
        const what = `POST /v1/evaluate with ${JSON.stringify(sent).slice(0, 300)}`;
        expectContractAnswer(what, answer);
        const object = sentObject(sent);
        if (answer.status === 200 && object !== null) {
          const asked = new Set([
            ...(typeof object.key === 'string' ? [object.key] : []),
            ...((object.keys as string[] | undefined) ?? []),
          ]);
          expect(Object.keys(JSON.parse(answer.text)).sort(), what).toEqual([...asked].sort());
        }
      }),
      runs({ test: 60, fuzz: 5_000 }),
    );
    expect([...statuses].sort()).toEqual([2, 4]);
  });
});
