import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, commitFiles, type EvalHarness, projectFiles, sdkKey, startHarness } from './harness.js';

// The server answers POST /v1/evaluate before Koa (src/apps/eval-server/evaluate-fast-path.ts) and leaves anything
// unusual, such as a query string, to the Koa app: both must give the same answers, so every test runs on both.
const ROUTES = [
  ['the fast path', '/v1/evaluate'],
  ['the Koa app', '/v1/evaluate?via=koa'],
] as const;

describe.each(ROUTES)('POST /v1/evaluate through %s', (_, route) => {
  let h: EvalHarness;
  let key: string;
  const raw = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetch(`${h.service.evalUrl}${route}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body });
  const evaluate = (_h: EvalHarness, sdkKey: string, body: unknown) =>
    fetch(`${h.service.evalUrl}${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sdkKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    h = await startHarness();
    await commitFiles(h.repo, projectFiles('shop', [{ key: 'a' }, { key: 'b', enabled: false }, { key: 'c', rolloutPct: 0 }]));
    await h.service.holder.served('acme');
    key = await sdkKey(h, 'shop', 'prod');
  });
  afterAll(() => h?.stop());

  it('answers the single-key form keyed by the flag key, with JSON and CORS headers', async () => {
    const res = await evaluate(h, key, { key: 'a', context: { userId: 'u1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await res.json()).toEqual({ a: { value: true, reason: 'default', variation: 'on' } });
  });

  it('refuses a missing, unknown or non-SDK key with 401 and the error body', async () => {
    for (const authorization of [undefined, 'Bearer svc_sdk_notakeyatall0000000', `Bearer ${ADMIN_KEY}`]) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (authorization) headers.authorization = authorization;
      const res = await fetch(`${h.service.evalUrl}${route}`, { method: 'POST', headers, body: '{"key":"a"}' });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect((await res.json()).error).toMatchObject({ code: 'unauthorized', message: expect.any(String) });
    }
  });

  it('counts every served variation in the flag’s stats', async () => {
    const admin = { authorization: `Bearer ${ADMIN_KEY}` };
    const flag = await (await fetch(`${h.service.controlUrl}/api/v1/flags/lookup?projectSlug=shop&key=a`, { headers: admin })).json();
    const served = async () => {
      const stats = await (
        await fetch(`${h.service.controlUrl}/api/v1/flags/${flag.id}/environments/prod/stats?period=24h`, { headers: admin })
      ).json();
      return stats.series.reduce((n: number, hour: { variations: Record<string, number> }) => n + (hour.variations.on ?? 0), 0);
    };
    const before = await served();
    for (let i = 0; i < 3; i++) await evaluate(h, key, { keys: ['a', 'b'] });
    expect(await served()).toBe(before + 3);
    // A key listed several times is answered once, and counted once, however long the list.
    for (const copies of [3, 1000, 1001]) {
      const res = await evaluate(h, key, { key: 'a', keys: Array(copies).fill('a') });
      expect(Object.keys(await res.json())).toEqual(['a']);
    }
    expect(await served()).toBe(before + 6);
  });

  it('answers the multi-key form with the same keyed shape', async () => {
    const body = await (await evaluate(h, key, { keys: ['a', 'b'] })).json();
    expect(body).toEqual({
      a: { value: true, reason: 'default', variation: 'on' },
      b: { value: false, reason: 'flag_disabled', variation: 'off' },
    });
  });

  it('evaluates the union when key and keys are both sent', async () => {
    const body = await (await evaluate(h, key, { key: 'c', keys: ['a', 'c'] })).json();
    expect(Object.keys(body).sort()).toEqual(['a', 'c']);
  });

  it('answers an unknown key with flag_not_found', async () => {
    expect(await (await evaluate(h, key, { key: 'nope' })).json()).toEqual({ nope: { value: null, reason: 'flag_not_found' } });
  });

  it('answers every key asked for, __proto__ and constructor too, with flag_not_found', async () => {
    const text = await (await evaluate(h, key, { keys: ['__proto__', 'constructor', 'a'] })).text();
    expect(JSON.parse(text)).toEqual(
      JSON.parse(
        '{"__proto__":{"value":null,"reason":"flag_not_found"},"constructor":{"value":null,"reason":"flag_not_found"},"a":{"value":true,"reason":"default","variation":"on"}}',
      ),
    );
    expect(Object.keys(JSON.parse(text))).toEqual(['__proto__', 'constructor', 'a']);
  });

  it('accepts 1000 keys and refuses 1001 with 400 invalid_input', async () => {
    const thousand = Array.from({ length: 1000 }, (_, i) => `k${i}`);
    expect((await evaluate(h, key, { keys: thousand })).status).toBe(200);
    const res = await evaluate(h, key, { keys: [...thousand, 'one-more'] });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/1000/) });
  });

  it('quotes 200 characters of an unknown field of 500,000, not the whole name', async () => {
    const res = await evaluate(h, key, { key: 'a', ['f'.repeat(500_000)]: 1 });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toBe(`unknown field ${'f'.repeat(200)}…; expected key, keys and context`);
  });

  const bad: Array<[string, () => Promise<Response>, number, RegExp]> = [
    ['neither key nor keys', () => evaluate(h, key, { context: {} }), 400, /key/],
    ['keys not an array', () => evaluate(h, key, { keys: 'a' }), 400, /keys/],
    ['a key that is not a string', () => evaluate(h, key, { keys: ['a', 3] }), 400, /keys\[1\]/],
    ['malformed JSON', () => raw('{"key": '), 400, /JSON/],
    ['a body that is not an object', () => raw('[1,2]'), 400, /object/],
    ['a context that is not an object', () => evaluate(h, key, { key: 'a', context: 'x' }), 400, /context/],
    ['a userId that is not a string', () => evaluate(h, key, { key: 'a', context: { userId: 42 } }), 400, /userId/],
    ['an unknown field', () => evaluate(h, key, { key: 'a', flags: [] }), 400, /flags/],
    ['a body that is not JSON', () => raw('key=a', { 'content-type': 'text/plain' }), 415, /application\/json/],
    ['a body over 1 MiB', () => raw(JSON.stringify({ keys: ['x'.repeat(1024 * 1024)] })), 413, /larger/],
  ];
  for (const [what, send, status, message] of bad) {
    it(`refuses ${what} with ${status} and the error body, and stays healthy`, async () => {
      const res = await send();
      expect(res.status).toBe(status);
      const body = await res.json();
      expect(body.error.message).toMatch(message);
      expect(typeof body.error.code).toBe('string');
      expect((await fetch(`${h.service.evalUrl}/healthz`)).status).toBe(200);
      expect((await evaluate(h, key, { key: 'a' })).status).toBe(200);
    });
  }
});
