import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Replica, startReplica } from '../../src/apps/replica/start-replica.js';
import { UpstreamClient } from '../../src/apps/replica/upstream-client.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { decodedText, type RawResponse, rawRequest } from '../helpers/raw-http.js';
import { fixedPortService } from './fixed-port-service.js';

const VARY = 'Authorization, Accept-Encoding';

describe('compressed answers on a replica and on the feed it follows', () => {
  let upstream: Awaited<ReturnType<typeof fixedPortService>>;
  let admin: HttpClient;
  let sdkKey: string;
  let project: Json;
  let flag: Json;
  let replica: Replica;
  let dir: string;
  const raw = (url: string, key: string, headers: Record<string, string> = {}): Promise<RawResponse> =>
    rawRequest(url, { headers: { authorization: `Bearer ${key}`, ...headers } });

  beforeAll(async () => {
    upstream = await fixedPortService();
    admin = httpClient(upstream.controlUrl, upstream.admin);
    project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 40 });
    sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-'));
    replica = await startReplica({
      upstreams: [upstream.controlUrl],
      token: upstream.admin,
      host: '127.0.0.1',
      port: 0,
      dataDir: dir,
      logger: silentLogger,
      retryMinMs: 50,
      retryMaxMs: 200,
      startTimeoutMs: 500,
    });
  });
  afterAll(async () => {
    await replica?.stop();
    await upstream?.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['/v1/snapshot', '/v1/snapshot?via=koa'])(
    'answers %s in gzip and br decoding to the control plane’s identity body, with its ETag',
    async (route) => {
      const main = await raw(`${upstream.service.evalUrl}/v1/snapshot`, sdkKey);
      expect(main.headers['content-encoding']).toBeUndefined();
      const identity = await raw(`${replica.url}${route}`, sdkKey);
      expect(identity.headers['content-encoding']).toBeUndefined();
      expect(identity.body.equals(main.body)).toBe(true);
      for (const coding of ['gzip', 'br']) {
        const res = await raw(`${replica.url}${route}`, sdkKey, { 'accept-encoding': coding });
        expect(res.status).toBe(200);
        expect(res.headers['content-encoding']).toBe(coding);
        expect(res.headers.etag).toBe(main.headers.etag);
        expect(res.headers.vary).toBe(VARY);
        expect(decodedText(res)).toBe(main.body.toString('utf8'));
        const notModified = await raw(`${replica.url}${route}`, sdkKey, { 'accept-encoding': coding, 'if-none-match': main.headers.etag! });
        expect(notModified.status).toBe(304);
        expect(notModified.headers.vary).toBe(VARY);
      }
      expect((await raw(`${replica.url}${route}`, sdkKey, { 'accept-encoding': 'gzip;q=0' })).headers['content-encoding']).toBeUndefined();
    },
  );

  it('compresses OFREP bulk evaluations as the main server does', async () => {
    const bulk = (url: string, headers: Record<string, string>) =>
      rawRequest(`${url}/ofrep/v1/evaluate/flags`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sdkKey}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ context: { targetingKey: 'u1' } }),
      });
    const main = await bulk(upstream.service.evalUrl, {});
    const res = await bulk(replica.url, { 'accept-encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers.vary).toBe(VARY);
    expect(decodedText(res)).toBe(main.body.toString('utf8'));
  });

  it('serves the replica feed’s view and listing compressed, the view under its ETag with 304 as before', async () => {
    const viewUrl = `${upstream.controlUrl}/api/v1/replica/snapshots/${project.id}/prod`;
    const identity = await raw(viewUrl, upstream.admin);
    expect(identity.status).toBe(200);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(identity.body.toString('utf8')).flags.checkout.rolloutPct).toBe(40);
    for (const coding of ['gzip', 'br']) {
      const res = await raw(viewUrl, upstream.admin, { 'accept-encoding': coding });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe(coding);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers.etag).toBe(identity.headers.etag);
      expect(res.headers.vary).toBe(VARY);
      expect(decodedText(res)).toBe(identity.body.toString('utf8'));
      const notModified = await raw(viewUrl, upstream.admin, { 'accept-encoding': coding, 'if-none-match': identity.headers.etag! });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.vary).toBe(VARY);
      const listing = await raw(`${upstream.controlUrl}/api/v1/replica/snapshots`, upstream.admin, { 'accept-encoding': coding });
      expect(listing.headers['content-encoding']).toBe(coding);
      expect(JSON.parse(decodedText(listing)).snapshots).toContainEqual(
        expect.objectContaining({ projectId: project.id, environment: 'prod' }),
      );
    }
  });

  it('asks its control plane for br views and reads them decoded (the replica’s upstream client)', async () => {
    const codings: Array<string | null> = [];
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      codings.push(res.headers.get('content-encoding'));
      return res;
    };
    const client = new UpstreamClient({ origin: upstream.controlUrl, token: upstream.admin, fetch: recording });
    const view = await client.json<Json>(`/api/v1/replica/snapshots/${project.id}/prod`);
    expect(view).toMatchObject({ projectId: project.id, environment: 'prod', flags: { checkout: { enabled: true } } });
    expect(codings).toEqual(['br']);
  });

  it('still follows its control plane: a change arrives over the compressed feed', async () => {
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 65 });
    const main = await raw(`${upstream.service.evalUrl}/v1/snapshot`, sdkKey);
    const deadline = Date.now() + PROMPTLY_MS;
    let served = await raw(`${replica.url}/v1/snapshot`, sdkKey, { 'accept-encoding': 'br' });
    while (served.headers.etag !== main.headers.etag && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      served = await raw(`${replica.url}/v1/snapshot`, sdkKey, { 'accept-encoding': 'br' });
    }
    expect(served.headers.etag).toBe(main.headers.etag);
    expect(served.headers['content-encoding']).toBe('br');
    expect(decodedText(served)).toBe(main.body.toString('utf8'));
    expect(JSON.parse(decodedText(served)).flags.checkout.rolloutPct).toBe(65);
  });
});
