import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../src/foundations/repository/serialize-file.js';
import { decodedText, type RawResponse, rawRequest } from '../helpers/raw-http.js';
import { sample } from '../metrics/prometheus-text.js';
import { commitFiles, type EvalHarness, projectFiles, sdkKey, startHarness } from './harness.js';

// Answered before Koa (src/apps/eval-server/fast-path.ts); a query string leaves it to the Koa app. Both, alike.
const ROUTES = [
  ['the fast path', '/v1/snapshot'],
  ['the Koa app', '/v1/snapshot?via=koa'],
] as const;

/** Accept-Encoding as sent → the Content-Encoding of the answer (undefined: identity). */
const NEGOTIATION: ReadonlyArray<[string, string | undefined]> = [
  ['gzip', 'gzip'],
  ['br', 'br'],
  ['gzip, deflate, br', 'br'],
  ['gzip, deflate', 'gzip'],
  ['br;q=0.5, gzip', 'gzip'],
  ['GZIP;Q=0.8, br;q=0.2', 'gzip'],
  ['x-gzip', 'gzip'],
  ['*', 'br'],
  ['br;q=0, *', 'gzip'],
  ['gzip;q=0', undefined],
  ['gzip;q=0, br;q=0.000', undefined],
  ['*;q=0', undefined],
  ['deflate, compress', undefined],
  ['identity', undefined],
  ['identity, gzip;q=0.5', undefined],
  ['gzip;q=2', undefined],
  ['', undefined],
];

describe.each(ROUTES)('GET /v1/snapshot through %s, compressed as Accept-Encoding asks', (_, route) => {
  let h: EvalHarness;
  let key: string;
  const get = (headers: Record<string, string> = {}): Promise<RawResponse> =>
    rawRequest(`${h.service.evalUrl}${route}`, { headers: { authorization: `Bearer ${key}`, ...headers } });

  beforeAll(async () => {
    h = await startHarness();
    // A tiny environment: compressed all the same when the client asks.
    await commitFiles(h.repo, projectFiles('shop', [{ key: 'checkout', rolloutPct: 30 }]));
    await h.service.holder.served('acme');
    key = await sdkKey(h, 'shop', 'prod');
  });
  afterAll(() => h?.stop());

  it('sends identity, with Vary naming Authorization and Accept-Encoding, to a client that sends no Accept-Encoding', async () => {
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers.vary).toBe('Authorization, Accept-Encoding');
    expect(res.headers['content-length']).toBe(String(res.body.length));
    expect(JSON.parse(res.body.toString('utf8')).flags.checkout.rolloutPct).toBe(30);
  });

  it('sends gzip and br bodies that decode to exactly the identity body, under the same ETag', async () => {
    const identity = await get();
    for (const coding of ['gzip', 'br']) {
      const res = await get({ 'accept-encoding': coding });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe(coding);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['content-length']).toBe(String(res.body.length));
      expect(res.headers.etag).toBe(identity.headers.etag);
      expect(res.headers.vary).toBe('Authorization, Accept-Encoding');
      expect(res.body.equals(identity.body)).toBe(false);
      expect(decodedText(res)).toBe(identity.body.toString('utf8'));
    }
  });

  it.each(NEGOTIATION)('answers Accept-Encoding %j in %s', async (accept, expected) => {
    const res = await get({ 'accept-encoding': accept });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe(expected);
    expect(JSON.parse(decodedText(res)).environment).toBe('prod');
  });

  it('answers If-None-Match with 304, the ETag and the Vary, under every encoding', async () => {
    const etag = (await get()).headers.etag!;
    for (const accept of [undefined, 'gzip', 'br', 'gzip, deflate, br']) {
      const res = await get({ 'if-none-match': etag, ...(accept ? { 'accept-encoding': accept } : {}) });
      expect(res.status).toBe(304);
      expect(res.headers.etag).toBe(etag);
      expect(res.headers.vary).toBe('Authorization, Accept-Encoding');
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.body.length).toBe(0);
    }
  });

  it('sends a new version compressed anew, never the bytes of the version before', async () => {
    const before = await get({ 'accept-encoding': 'gzip' });
    await commitFiles(h.repo, [
      {
        path: layout.configFile('shop', 'prod', 'checkout'),
        content: serializeRepositoryFile({
          kind: 'config',
          value: { enabled: true, rolloutPct: 77, valueOn: true, valueOff: false, version: 2, rules: [] },
        }),
      },
    ]);
    await h.service.holder.served('acme');
    for (const coding of ['gzip', 'br']) {
      const res = await get({ 'accept-encoding': coding });
      expect(res.headers['content-encoding']).toBe(coding);
      expect(res.headers.etag).not.toBe(before.headers.etag);
      expect(decodedText(res)).toBe((await get()).body.toString('utf8'));
      expect(JSON.parse(decodedText(res)).flags.checkout.rolloutPct).toBe(77);
    }
  });

  it('counts the body bytes it sent by encoding in /metrics', async () => {
    const bytes = async (encoding: string) =>
      sample(await (await fetch(`${h.service.evalUrl}/metrics`)).text(), 'flagops_snapshot_body_bytes_total', { encoding }) ?? 0;
    for (const coding of ['br', 'gzip', 'identity']) {
      const before = await bytes(coding);
      const res = await get(coding === 'identity' ? {} : { 'accept-encoding': coding });
      expect(await bytes(coding)).toBe(before + res.body.length);
    }
  });

  it('answers many clients asking for a new version at once with the same bytes', async () => {
    await commitFiles(h.repo, [
      {
        path: layout.configFile('shop', 'prod', 'checkout'),
        content: serializeRepositoryFile({
          kind: 'config',
          value: { enabled: true, rolloutPct: 12, valueOn: true, valueOff: false, version: 3, rules: [] },
        }),
      },
    ]);
    await h.service.holder.served('acme');
    const answers = await Promise.all(Array.from({ length: 20 }, () => get({ 'accept-encoding': 'br' })));
    for (const res of answers) {
      expect(res.headers['content-encoding']).toBe('br');
      expect(res.body.equals(answers[0].body)).toBe(true);
    }
    expect(JSON.parse(decodedText(answers[0])).flags.checkout.rolloutPct).toBe(12);
  });
});

describe('HEAD /v1/snapshot', () => {
  let h: EvalHarness;
  let key: string;

  beforeAll(async () => {
    h = await startHarness();
    await commitFiles(h.repo, projectFiles('shop', [{ key: 'checkout' }]));
    await h.service.holder.served('acme');
    key = await sdkKey(h, 'shop', 'prod');
  });
  afterAll(() => h?.stop());

  it('gives the headers GET would, Content-Encoding included, and no body', async () => {
    const headers = { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' };
    const got = await rawRequest(`${h.service.evalUrl}/v1/snapshot`, { headers });
    const head = await rawRequest(`${h.service.evalUrl}/v1/snapshot`, { method: 'HEAD', headers });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-encoding']).toBe('gzip');
    for (const name of ['content-encoding', 'content-length', 'etag', 'vary']) expect(head.headers[name]).toBe(got.headers[name]);
  });
});
