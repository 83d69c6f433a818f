import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Replica, type ReplicaOptions, startReplica } from '../../src/apps/replica/start-replica.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { PROMPTLY_MS, until } from '../helpers/deadlines.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { fixedPortService, freePort } from './fixed-port-service.js';

describe('a replica restarted while none of its control planes answers', () => {
  let upstream: Awaited<ReturnType<typeof fixedPortService>>;
  let admin: HttpClient;
  let sdkKey: string;
  let flag: Json;
  let dir: string;
  let replica: Replica | undefined;

  const options = (upstreams: string[], startTimeoutMs: number, stopSignal?: AbortSignal): ReplicaOptions => ({
    upstreams,
    token: upstream.admin,
    host: '127.0.0.1',
    port: 0,
    dataDir: dir,
    logger: silentLogger,
    startTimeoutMs,
    stopSignal,
  });
  const evaluate = async (url: string) =>
    (await httpClient(url, sdkKey).post('/v1/evaluate', { key: flag.key, context: { userId: 'u1' } })).body[flag.key];

  beforeAll(async () => {
    upstream = await fixedPortService();
    admin = httpClient(upstream.controlUrl, upstream.admin);
    const project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-restart-'));
  });
  afterAll(async () => {
    await replica?.stop();
    await upstream?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('serves its saved snapshots, stale, once every upstream of its list has failed, not after its start timeout', async () => {
    const first = await startReplica(options([upstream.controlUrl], 5_000));
    try {
      await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`);
      await until(
        () => evaluate(first.url),
        (v) => v?.reason === 'killed',
      );
    } finally {
      await first.stop();
    }
    await upstream.stop();

    // Both refuse at once. The start timeout is far longer than the test waits: only having tried them ends it.
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const stop = new AbortController();
    const starting = startReplica(options([upstream.controlUrl, nowhere], 10 * PROMPTLY_MS, stop.signal));
    const waited = setTimeout(() => stop.abort(), PROMPTLY_MS);
    try {
      replica = await starting;
    } finally {
      clearTimeout(waited);
    }
    expect(stop.signal.aborted).toBe(false);
    expect((await httpClient(replica.url).get('/healthz')).body).toEqual({ status: 'stale' });
    expect(await evaluate(replica.url)).toEqual({ value: false, reason: 'killed', variation: 'off' });
  });
});
