import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bucket } from '@flagops/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Replica, startReplica } from '../../src/apps/replica/start-replica.js';
import { createLogger } from '../../src/foundations/log/logger.js';
import { until } from '../helpers/deadlines.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { fixedPortService } from './fixed-port-service.js';

describe('a replica whose saved snapshot was damaged on disk while it was stopped', () => {
  let upstream: Awaited<ReturnType<typeof fixedPortService>>;
  let admin: HttpClient;
  let shop: { id: string; key: string };
  let blog: { id: string; key: string };
  let dir: string;
  let replica: Replica | undefined;
  let logs: Array<Record<string, unknown>> = [];
  // In m5's rollout of 5 % but not in 1 %: one bit (5 → 1) in the saved rolloutPct turns this user off.
  const user = Array.from({ length: 2000 }, (_, i) => `user-${i}`).find((u) => bucket('m5', u) >= 1 && bucket('m5', u) < 5);

  const shopFile = () => path.join(dir, 'replica', 'snapshots', `${shop.id}.prod.json`);
  const start = async (startTimeoutMs = 5_000) => {
    logs = [];
    const write = (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>);
    replica = await startReplica({
      upstreams: [upstream.controlUrl],
      token: upstream.admin,
      host: '127.0.0.1',
      port: 0,
      dataDir: dir,
      logger: createLogger({ level: 'warn', write }),
      startTimeoutMs,
    });
    return replica;
  };
  const stop = async () => {
    await replica?.stop();
    replica = undefined;
  };
  const evaluate = (url: string, key: string, flagKey: string) =>
    httpClient(url, key).post('/v1/evaluate', { key: flagKey, context: { userId: user } });
  const health = async (url: string) => (await httpClient(url, upstream.admin).get('/healthz')).body;
  /** Flips one bit of the saved `"rolloutPct":5`, leaving a file that still parses. */
  const flipRollout = async (file: string) => {
    const text = await readFile(file, 'utf8');
    expect(text).toContain('"rolloutPct":5,');
    await writeFile(file, text.replace('"rolloutPct":5,', '"rolloutPct":1,'));
  };
  const damageWarnings = () => logs.filter((l) => l.level === 'warn' && l.file === shopFile());

  beforeAll(async () => {
    expect(user).toBeDefined();
    upstream = await fixedPortService();
    admin = httpClient(upstream.controlUrl, upstream.admin);
    const project = async (slug: string, flagKey: string, rolloutPct: number) => {
      const { id } = (await admin.post('/api/v1/projects', { name: slug, slug })).body;
      const flag = (await admin.post(`/api/v1/projects/${id}/flags`, { key: flagKey })).body;
      await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct });
      return {
        id: id as string,
        key: (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: id, environment: 'prod' })).body.key as string,
      };
    };
    shop = await project('shop', 'm5', 5);
    blog = await project('blog', 'posts', 100);
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-damaged-'));
    // A first run syncs both views and learns both keys, so the restarts below have them on disk.
    const first = await start();
    expect((await evaluate(first.url, shop.key, 'm5')).body.m5.variation).toBe('on');
    expect((await evaluate(first.url, blog.key, 'posts')).body.posts.variation).toBe('on');
    await stop();
  });
  afterAll(async () => {
    await stop();
    await upstream?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('serves the control plane’s view and ETag content after a restart with it up, and logs the damaged file', async () => {
    await flipRollout(shopFile());
    const url = (await start()).url;

    expect((await evaluate(url, shop.key, 'm5')).body.m5).toMatchObject({ value: true, variation: 'on' });
    const served = await httpClient(url, shop.key).get('/v1/snapshot');
    const truth = await httpClient(upstream.service.evalUrl, shop.key).get('/v1/snapshot');
    expect(served.headers.get('etag')).toBe(truth.headers.get('etag'));
    expect(served.body).toEqual(truth.body);
    expect(damageWarnings()).toEqual([expect.objectContaining({ reason: 'checksum mismatch' })]);
    expect(await health(url)).toMatchObject({ status: 'ok' });
    expect(await health(url)).not.toHaveProperty('missing');
    // Saved again, whole: the next restart reads it without a warning.
    await stop();
    await start();
    expect(damageWarnings()).toEqual([]);
    await stop();
  });

  it('answers 503 for that environment, never the damaged values, and says which at /healthz, with the control plane down', async () => {
    await flipRollout(shopFile());
    await upstream.stop();
    const url = (await start(1_000)).url;
    try {
      const answer = await evaluate(url, shop.key, 'm5');
      expect(answer.status).toBe(503);
      expect(answer.body.error.code).toBe('unavailable');
      expect((await httpClient(url, shop.key).get('/v1/snapshot')).status).toBe(503);
      expect(damageWarnings()).toEqual([expect.objectContaining({ reason: 'checksum mismatch', environment: 'prod' })]);
      // The other project's view is intact and keeps serving.
      expect((await evaluate(url, blog.key, 'posts')).body.posts.variation).toBe('on');
      const said: Json = await health(url);
      expect(said).toMatchObject({ status: 'stale', upstream: 'unreachable', missing: [`${shop.id}/prod`] });

      await upstream.start();
      await until(
        () => evaluate(url, shop.key, 'm5'),
        (r) => r.status === 200,
      );
      expect((await evaluate(url, shop.key, 'm5')).body.m5.variation).toBe('on');
      await until(
        () => health(url),
        (h: Json) => h.status === 'ok',
      );
      expect(await health(url)).not.toHaveProperty('missing');
    } finally {
      await stop();
    }
  });

  it('answers 503, not 404, for a file cut short, with the control plane down', async () => {
    await truncate(shopFile(), 1000);
    await upstream.stop();
    const url = (await start(1_000)).url;
    try {
      const answer = await evaluate(url, shop.key, 'm5');
      expect(answer.status).toBe(503);
      expect(answer.body.error.code).toBe('unavailable');
      expect(damageWarnings()).toEqual([expect.objectContaining({ reason: 'checksum mismatch' })]);
      expect(await health(url)).toMatchObject({ status: 'stale', missing: [`${shop.id}/prod`] });
    } finally {
      await stop();
      await upstream.start();
    }
  });

  it('reads a file saved before checksums while the control plane is down, and takes the view whole once it is up', async () => {
    const url = (await start()).url;
    expect((await evaluate(url, shop.key, 'm5')).body.m5.variation).toBe('on');
    await stop();
    // The layout before checksums: the JSON alone, here with the bit flipped, which nothing can tell.
    const text = await readFile(shopFile(), 'utf8');
    await writeFile(shopFile(), text.slice(text.indexOf('\n') + 1));
    await flipRollout(shopFile());

    await upstream.stop();
    const stale = (await start(1_000)).url;
    try {
      expect((await evaluate(stale, shop.key, 'm5')).status).toBe(200);
      expect(damageWarnings()).toEqual([]);
    } finally {
      await stop();
      await upstream.start();
    }
    const synced = (await start()).url;
    expect((await evaluate(synced, shop.key, 'm5')).body.m5.variation).toBe('on');
    const truth = await httpClient(upstream.service.evalUrl, shop.key).get('/v1/snapshot');
    expect((await httpClient(synced, shop.key).get('/v1/snapshot')).body).toEqual(truth.body);
    expect((await readFile(shopFile(), 'utf8')).split('\n')).toHaveLength(2);
    await stop();
  });
});
