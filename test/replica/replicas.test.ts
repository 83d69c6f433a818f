import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Replica, startReplica } from '../../src/apps/replica/start-replica.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { openRawStream } from '../sdk/raw-stream.js';
import { fixedPortService } from './fixed-port-service.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const started = Date.now();
  let value = await probe();
  while (!done(value) && Date.now() - started < timeoutMs) {
    await sleep(10);
    value = await probe();
  }
  return value;
}

describe('evaluation replicas following a control plane (docs/deployment.md)', () => {
  let upstream: Awaited<ReturnType<typeof fixedPortService>>;
  let admin: HttpClient;
  let sdkKey: string;
  let project: Json;
  let flag: Json;
  const replicas: Replica[] = [];
  const dirs: string[] = [];

  const startOne = async (dataDir?: string, keysRefreshMs = 200) => {
    const dir = dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-')));
    if (!dataDir) dirs.push(dir);
    const replica = await startReplica({
      upstreams: [upstream.controlUrl],
      token: upstream.admin,
      host: '127.0.0.1',
      port: 0,
      dataDir: dir,
      logger: silentLogger,
      retryMinMs: 50,
      retryMaxMs: 200,
      countsIntervalMs: 200,
      keysRefreshMs,
      startTimeoutMs: 500,
    });
    return replica;
  };
  const evaluate = async (url: string, key = flag.key) =>
    (await httpClient(url, sdkKey).post('/v1/evaluate', { key, context: { userId: 'u1' } })).body[key];

  beforeAll(async () => {
    upstream = await fixedPortService();
    admin = httpClient(upstream.controlUrl, upstream.admin);
    project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    for (let i = 0; i < 3; i++) replicas.push(await startOne());
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await upstream.destroy();
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('serves the control plane’s snapshot with the same version and ETag, and 304 on a match', async () => {
    const main = await httpClient(upstream.service.evalUrl, sdkKey).get('/v1/snapshot');
    for (const replica of replicas) {
      const res = await httpClient(replica.url, sdkKey).get('/v1/snapshot');
      expect(res.status).toBe(200);
      expect(res.headers.get('etag')).toBe(main.headers.get('etag'));
      expect(res.body).toEqual(main.body);
      const again = await httpClient(replica.url, sdkKey).request('GET', '/v1/snapshot', {
        headers: { 'if-none-match': main.headers.get('etag') ?? '' },
      });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(main.headers.get('etag'));
      expect(await evaluate(replica.url)).toMatchObject({ value: true, reason: 'default' });
    }
  });

  it('answers OFREP as the main server does, and through Koa as through its fast path', async () => {
    const main = httpClient(upstream.service.evalUrl, sdkKey);
    const replica = httpClient(replicas[1].url, sdkKey);
    const one = `/ofrep/v1/evaluate/flags/${flag.key}`;
    const body = { context: { targetingKey: 'u1' } };
    expect((await replica.post(one, body)).body).toEqual((await main.post(one, body)).body);
    expect((await replica.post(one, body)).body).toMatchObject({ key: flag.key, value: true, reason: 'DEFAULT', variant: 'on' });
    expect((await replica.post('/ofrep/v1/evaluate/flags', body)).body).toEqual((await main.post('/ofrep/v1/evaluate/flags', body)).body);
    expect((await replica.post('/ofrep/v1/evaluate/flags/no-such-flag', body)).status).toBe(404);
    expect((await replica.get('/ofrep/v1/configuration')).body).toEqual((await main.get('/ofrep/v1/configuration')).body);
    expect((await replica.post('/v1/evaluate?via=koa', { key: flag.key })).body).toEqual(
      (await replica.post('/v1/evaluate', { key: flag.key })).body,
    );
    expect((await httpClient(replicas[1].url).post(one, body)).status).toBe(401);
  });

  it('refuses a bad key with 401 and another environment’s flags stay apart', async () => {
    const res = await httpClient(replicas[0].url, 'svc_sdk_notarealkey000000000000').post('/v1/evaluate', { key: 'checkout' });
    expect(res.status).toBe(401);
    const devKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'dev' })).body.key;
    const dev = await httpClient(replicas[0].url, devKey).post('/v1/evaluate', { key: 'checkout' });
    expect(dev.body.checkout.reason).toBe('flag_disabled');
  });

  it('a kill reaches all three replicas over the stream (timed by scripts/bench/replica.mjs)', async () => {
    expect((await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`)).status).toBe(200);
    const results = await Promise.all(
      replicas.map((r) =>
        until(
          () => evaluate(r.url),
          (v) => v.reason === 'killed',
          PROMPTLY_MS,
        ),
      ),
    );
    for (const result of results) expect(result).toEqual({ value: false, reason: 'killed', variation: 'off' });
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true });
    await Promise.all(
      replicas.map((r) =>
        until(
          () => evaluate(r.url),
          (v) => v.reason === 'default',
          PROMPTLY_MS,
        ),
      ),
    );
  });

  it('serves the segments, variants and prerequisites of the control plane’s snapshot', async () => {
    const other = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'experiment' })).body;
    expect((await admin.put(`/api/v1/projects/${project.id}/segments/testers`, { userIds: ['u1'] })).status).toBe(201);
    const config = await admin.put(`/api/v1/flags/${other.id}/environments/prod/config`, {
      enabled: true,
      variants: [
        { name: 'a', value: true, weight: 50 },
        { name: 'b', value: false, weight: 50 },
      ],
      prerequisites: [{ flag: flag.key, variation: 'on' }],
      rules: [{ id: 'testers', serve: 'b', conditions: [{ op: 'in_segment', value: 'testers' }] }],
    });
    expect(config.status).toBe(200);
    const main = (await httpClient(upstream.service.evalUrl, sdkKey).get('/v1/snapshot')).body;
    expect(main.segments).toEqual({ testers: { userIds: ['u1'], conditions: [] } });
    for (const replica of replicas) {
      const served = await until(
        () => evaluate(replica.url, 'experiment'),
        (v) => v?.variation === 'b',
        PROMPTLY_MS,
      );
      expect(served).toEqual({ value: false, reason: 'rule_match', variation: 'b', ruleId: 'testers' });
      expect((await httpClient(replica.url, sdkKey).get('/v1/snapshot')).body.segments).toEqual(main.segments);
    }
  });

  it('announces new versions on its own /v1/stream', async () => {
    const res = await fetch(`${replicas[1].url}/v1/stream`, { headers: { authorization: `Bearer ${sdkKey}` } });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toMatch(/event: version/);
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 50 });
    let text = '';
    while (!text.includes('event: version')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const version = Number(/"version":(\d+)/.exec(text)![1]);
    const main = await httpClient(upstream.service.evalUrl, sdkKey).get('/v1/snapshot');
    expect(main.body.version).toBe(version);
  });

  it('forwards its evaluations to the control plane’s stats', async () => {
    const stats = async () => {
      const res = await admin.get(`/api/v1/flags/${flag.id}/environments/prod/stats?period=24h`);
      return res.body.series.reduce(
        (n: number, h: Json) => n + Object.values(h.variations as Record<string, number>).reduce((a, b) => a + b, 0),
        0,
      );
    };
    await Promise.all(replicas.map((r) => r.counts.flush())); // what earlier tests evaluated is in before
    const before = await stats();
    for (const replica of replicas) for (let i = 0; i < 5; i++) await evaluate(replica.url);
    const after = await until(stats, (n) => n >= before + 15, PROMPTLY_MS);
    expect(after).toBe(before + 15);
  });

  it('answers /metrics: its evaluations, snapshot versions, streams, sync state and request timings', async () => {
    const replica = replicas[0];
    // Counted under what they served: after the earlier tests, a 50 % rollout (not the default).
    let served: Json = {};
    for (let i = 0; i < 3; i++) served = await evaluate(replica.url);
    const res = await fetch(`${replica.url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const line = (pattern: RegExp) => text.split('\n').find((l) => pattern.test(l));
    const evaluations = line(
      new RegExp(
        `^flagops_evaluations_total\\{project="shop",environment="prod",flag="checkout",variation="${served.variation}",reason="${served.reason}"`,
      ),
    );
    expect(Number(evaluations?.split(' ').pop())).toBeGreaterThanOrEqual(3);
    const version = (await httpClient(replica.url, sdkKey).get('/v1/snapshot')).body.version;
    expect(line(/^flagops_snapshot_version\{project="shop",environment="prod"/)).toMatch(new RegExp(` ${version}$`));
    expect(line(/^flagops_replica_upstream_connected /)).toBe('flagops_replica_upstream_connected 1');
    expect(Number(line(/^flagops_replica_last_contact_timestamp_seconds /)?.split(' ')[1])).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(line(/^flagops_stream_clients /)).toBeDefined();
    expect(line(/^flagops_http_request_duration_seconds_count\{server="replica",route="\/v1\/evaluate",status="200"\}/)).toBeDefined();
    expect(line(/^process_cpu_user_seconds_total /)).toBeDefined();
  });

  it('keeps serving its last good values while the control plane is down, reports stale, and catches up', async () => {
    await until(
      () => evaluate(replicas[0].url),
      (v) => v.reason === 'rollout',
      PROMPTLY_MS,
    );
    await upstream.stop();
    for (const replica of replicas) {
      const health = await until(
        async () => (await httpClient(replica.url, upstream.admin).get('/healthz')).body,
        (b) => b.status === 'stale',
        PROMPTLY_MS,
      );
      expect(health).toMatchObject({ status: 'stale', upstream: 'unreachable' });
      expect(typeof health.lastSyncAt).toBe('string');
      expect((await evaluate(replica.url)).reason).toBe('rollout');
    }
    // A replica restarted meanwhile serves what it saved on disk.
    await replicas[2].stop();
    replicas[2] = await startOne(dirs[2]);
    expect((await evaluate(replicas[2].url)).reason).toBe('rollout');
    expect((await httpClient(replicas[2].url).get('/healthz')).body.status).toBe('stale');

    await upstream.start();
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 100 });
    for (const replica of replicas) {
      expect(
        await until(
          () => evaluate(replica.url),
          (v) => v.reason === 'default',
          PROMPTLY_MS,
        ),
      ).toMatchObject({ reason: 'default' });
      const health = await until(
        async () => (await httpClient(replica.url, upstream.admin).get('/healthz')).body,
        (b) => b.status === 'ok',
        PROMPTLY_MS,
      );
      expect(health).toMatchObject({ status: 'ok', upstream: 'connected' });
    }
  });

  it('drops a revoked key at the next key refresh, and remembers a valid one across a restart', async () => {
    const created = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body;
    const client = httpClient(replicas[0].url, created.key);
    expect((await client.get('/v1/snapshot')).status).toBe(200);
    await admin.delete(`/api/v1/keys/${created.id}`);
    expect(
      (
        await until(
          () => client.get('/v1/snapshot'),
          (r) => r.status === 401,
          PROMPTLY_MS,
        )
      ).status,
    ).toBe(401);
  });

  it('drops a revoked key as soon as the control plane says the keys changed, not at its next hourly listing', async () => {
    const hourly = await startOne(undefined, 3_600_000);
    replicas.push(hourly);
    const created = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body;
    const client = httpClient(hourly.url, created.key);
    expect((await client.get('/v1/snapshot')).status).toBe(200);
    const stream = await openRawStream(`${hourly.url}/v1/stream`, { authorization: `Bearer ${created.key}` });
    await stream.until(() => stream.events.length === 1);
    await admin.delete(`/api/v1/keys/${created.id}`);
    const refused = await until(
      () => client.get('/v1/snapshot'),
      (r) => r.status === 401,
      PROMPTLY_MS,
    );
    expect(refused.status).toBe(401);
    // Its open stream ends then too, not at the next heartbeat (20 s).
    await Promise.race([stream.ended, new Promise((_, reject) => setTimeout(() => reject(new Error('still open')), PROMPTLY_MS))]);
    expect((await httpClient(hourly.url, sdkKey).get('/v1/snapshot')).status).toBe(200);
  });

  it('ends the stream of an expiring key at its expiry, though its key list is read hourly', async () => {
    const hourly = await startOne(undefined, 3_600_000);
    replicas.push(hourly);
    const expiresAt = new Date(Date.now() + 2_000).toISOString();
    const created = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod', expiresAt })).body;
    const stream = await openRawStream(`${hourly.url}/v1/stream`, { authorization: `Bearer ${created.key}` });
    await stream.until(() => stream.events.length === 1);
    await stream.ended;
    const endedAfterExpiry = Date.now() - Date.parse(expiresAt);
    expect(endedAfterExpiry).toBeGreaterThanOrEqual(-50); // clocks of timers and Date may differ by a few ms
    expect(endedAfterExpiry).toBeLessThan(1_000); // the heartbeat is 20 s
  });

  it('honours a rotated sdk key until its grace ends, then refuses it; the new key works at once', async () => {
    const longGrace = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body;
    const shortGrace = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body;
    // Both verified by the replica (and cached) before they are rotated.
    for (const key of [longGrace.key, shortGrace.key])
      expect((await httpClient(replicas[1].url, key).get('/v1/snapshot')).status).toBe(200);
    const replacedLong = (await admin.post(`/api/v1/keys/${longGrace.id}/rotate`, { graceSeconds: 3600 })).body;
    const replacedShort = (await admin.post(`/api/v1/keys/${shortGrace.id}/rotate`, { graceSeconds: 1 })).body;
    const old = httpClient(replicas[1].url, shortGrace.key);
    const refused = await until(
      () => old.get('/v1/snapshot'),
      (r) => r.status === 401,
      PROMPTLY_MS,
    );
    expect(refused.status).toBe(401);
    // Saying why, as the control plane's evaluation port does.
    expect(refused.body.error.message).toContain('was rotated');
    // The replica has refreshed its key list since: the key in its grace is still served, both new keys too.
    expect((await httpClient(replicas[1].url, longGrace.key).get('/v1/snapshot')).status).toBe(200);
    for (const key of [replacedLong.key, replacedShort.key])
      expect((await httpClient(replicas[1].url, key).get('/v1/snapshot')).status).toBe(200);
  });
});
