import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../src/foundations/repository/serialize-file.js';
import { commitFiles, type EvalHarness, projectFiles, sdkKey, startHarness } from './harness.js';

// Answered before Koa (src/apps/eval-server/fast-path.ts); a query string leaves it to the Koa app. Both, alike.
const ROUTES = [
  ['the fast path', '/v1/snapshot'],
  ['the Koa app', '/v1/snapshot?via=koa'],
] as const;

describe.each(ROUTES)('GET /v1/snapshot through %s', (_, route) => {
  let h: EvalHarness;
  let prodKey: string;
  let devKey: string;
  const get = (key: string, headers: Record<string, string> = {}) =>
    fetch(`${h.service.evalUrl}${route}`, { headers: { authorization: `Bearer ${key}`, ...headers } });

  beforeAll(async () => {
    h = await startHarness();
    await commitFiles(h.repo, [
      ...projectFiles('shop', [
        {
          key: 'checkout',
          rolloutPct: 30,
          rules: [{ id: 'beta', conditions: [{ attribute: 'plan', op: 'eq', value: 'beta' }], serve: 'on' }],
        },
        { key: 'old-banner', archivedAt: '2026-01-01T00:00:00.000Z', defaultValue: false, enabled: false },
      ]),
    ]);
    await h.service.holder.served('acme');
    prodKey = await sdkKey(h, 'shop', 'prod');
    devKey = await sdkKey(h, 'shop', 'dev');
  });
  afterAll(() => h?.stop());

  it('serves every flag of the key’s environment with killed, archived and defaultValue', async () => {
    const res = await get(prodKey);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.environment).toBe('prod');
    expect(Number.isInteger(body.version)).toBe(true);
    expect(Object.keys(body.flags).sort()).toEqual(['checkout', 'old-banner']);
    expect(body.flags.checkout).toMatchObject({
      enabled: true,
      rolloutPct: 30,
      valueOn: true,
      valueOff: false,
      killed: false,
      archived: false,
    });
    expect(body.flags.checkout.rules[0].id).toBe('beta');
    expect(body.flags['old-banner']).toMatchObject({ archived: true, defaultValue: false, enabled: false });
  });

  it('carries an ETag of v and the version, in double quotes', async () => {
    const res = await get(prodKey);
    const body = await res.json();
    expect(res.headers.get('etag')).toBe(`"v${body.version}"`);
  });

  it('answers If-None-Match with 304, no body and the same ETag', async () => {
    const first = await get(prodKey);
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    for (const ifNoneMatch of [etag, `"v0", W/${etag}`, '*']) {
      const res = await get(prodKey, { 'if-none-match': ifNoneMatch });
      expect(res.status).toBe(304);
      expect(res.headers.get('etag')).toBe(etag);
      expect(await res.text()).toBe('');
    }
  });

  it('tells caches to revalidate, per key, on 200 and 304 alike', async () => {
    const first = await get(prodKey);
    await first.arrayBuffer();
    const notModified = await get(prodKey, { 'if-none-match': first.headers.get('etag')! });
    for (const res of [first, notModified]) {
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('vary')).toBe('Authorization, Accept-Encoding');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    }
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('answers a stale ETag with 200 and the current snapshot', async () => {
    const res = await get(prodKey, { 'if-none-match': '"v0"' });
    expect(res.status).toBe(200);
    expect((await res.json()).flags.checkout).toBeDefined();
  });

  it('raises the version of an environment that changed, and only of that one', async () => {
    const prodBefore = (await (await get(prodKey)).json()).version;
    const devBefore = (await (await get(devKey)).json()).version;
    await commitFiles(h.repo, [
      {
        path: layout.configFile('shop', 'dev', 'checkout'),
        content: serializeRepositoryFile({
          kind: 'config',
          value: { enabled: true, rolloutPct: 55, valueOn: true, valueOff: false, version: 2, rules: [] },
        }),
      },
    ]);
    await h.service.holder.served('acme');
    const dev = await (await get(devKey)).json();
    expect(dev.version).toBeGreaterThan(devBefore);
    expect(dev.flags.checkout.rolloutPct).toBe(55);
    expect((await (await get(prodKey)).json()).version).toBe(prodBefore);
  });

  it('derives the same versions when a second server reads the same commit', async () => {
    const { OrganisationServing } = await import('../../src/apps/eval-server/organisation-serving.js');
    const { silentLogger } = await import('../../src/foundations/log/logger.js');
    const fresh = new OrganisationServing('acme', h.repo, silentLogger, () => {});
    await fresh.reloadToHead();
    for (const env of ['dev', 'staging', 'prod'] as const) {
      expect(fresh.view('prj_shop', env)?.version).toBe(h.service.holder.view('acme', 'prj_shop', env)?.version);
    }
  });

  it('refuses a missing, malformed or non-sdk key with 401 and the error body', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer svc_sdk_nope' },
      { authorization: 'Basic abc' },
      { authorization: `Bearer ${'svc_adm_evalserveradmin00000000000001'}` },
    ]) {
      const res = await fetch(`${h.service.evalUrl}${route}`, { headers });
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('unauthorized');
    }
  });

  it('lets browsers call it: CORS preflight and exposed ETag', async () => {
    const pre = await fetch(`${h.service.evalUrl}/v1/snapshot`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/authorization/i);
    const res = await get(prodKey, { origin: 'https://app.example' });
    expect(res.headers.get('access-control-expose-headers')).toMatch(/etag/i);
  });
});
