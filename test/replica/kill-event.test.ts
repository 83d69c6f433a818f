import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Replica, startReplica } from '../../src/apps/replica/start-replica.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { until } from '../helpers/deadlines.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { openRawStream, type RawStream } from '../sdk/raw-stream.js';
import { fixedPortService } from './fixed-port-service.js';

const VIEW_ROUTE = '/api/v1/replica/snapshots/:projectId/:env';

describe('a kill on the replica feed', () => {
  let upstream: Awaited<ReturnType<typeof fixedPortService>>;
  let admin: HttpClient;
  let sdkKey: string;
  let project: Json;
  let flag: Json;
  let replica: Replica;
  let feed: RawStream;
  let dir: string;

  const startOne = () =>
    startReplica({
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
  const evaluate = async () =>
    (await httpClient(replica.url, sdkKey).post('/v1/evaluate', { key: flag.key, context: { userId: 'u1' } })).body[flag.key];
  /** Every change the feed announced for the prod view, parsed. */
  const prodChanges = () =>
    feed.events
      .filter((e) => e.event === 'version')
      .map((e) => JSON.parse(e.data) as Json)
      .filter((d) => d.environment === 'prod');
  /** How many views replicas fetched from the control plane, from its own request metrics. */
  const viewFetches = async () => {
    const text = await (await fetch(`${upstream.controlUrl}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('flagops_http_request_duration_seconds_count{') && l.includes(`route="${VIEW_ROUTE}"`))
      .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
  };
  const servedVersion = async () => (await httpClient(upstream.service.evalUrl, sdkKey).get('/v1/snapshot')).body.version as number;

  beforeAll(async () => {
    upstream = await fixedPortService();
    admin = httpClient(upstream.controlUrl, upstream.admin);
    project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-kill-'));
    replica = await startOne();
    await until(evaluate, (v) => v?.reason === 'default');
    feed = await openRawStream(`${upstream.controlUrl}/api/v1/replica/stream`, { authorization: `Bearer ${upstream.admin}` });
    await feed.until(() => feed.events.some((e) => e.event === 'versions'));
  });
  afterAll(async () => {
    feed?.close();
    await replica?.stop();
    await upstream?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('arrives as a kill event with the kills, and the replica serves it without fetching or compiling the flags again', async () => {
    const before = replica.holder.view('acme', project.id, 'prod')!;
    const fetches = await viewFetches();
    expect((await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'error rate' })).status).toBe(200);
    const version = await servedVersion();
    await feed.until(() => prodChanges().some((c) => c.version === version));
    const change = prodChanges().find((c) => c.version === version)!;
    // The listing fields stay, so a replica that predates kill events still fetches the view and is correct.
    expect(change).toMatchObject({ type: 'kill', projectId: project.id, projectSlug: 'shop', environment: 'prod', version });
    expect(change.baseVersion).toBe(before.version);
    expect(change.kills).toEqual({
      kills: { checkout: { killedAt: expect.any(String), killedBy: expect.any(String), reason: 'error rate' } },
    });
    expect(await until(evaluate, (v) => v.reason === 'killed')).toEqual({ value: false, reason: 'killed', variation: 'off' });

    const after = replica.holder.view('acme', project.id, 'prod')!;
    expect(after.version).toBe(version);
    expect(after.compiled).toBe(before.compiled);
    expect(await viewFetches()).toBe(fetches);
    const main = await httpClient(upstream.service.evalUrl, sdkKey).get('/v1/snapshot');
    const own = await httpClient(replica.url, sdkKey).get('/v1/snapshot');
    expect(own.headers.get('etag')).toBe(main.headers.get('etag'));
    expect(own.body).toEqual(main.body);
    expect(own.body.flags.checkout.killed).toBe(true);
  });

  it('a cleared kill is a kill event too, with the kills left', async () => {
    const fetches = await viewFetches();
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true });
    const version = await servedVersion();
    await feed.until(() => prodChanges().some((c) => c.version === version));
    expect(prodChanges().find((c) => c.version === version)).toMatchObject({ type: 'kill', kills: { kills: {} } });
    expect(await until(evaluate, (v) => v.reason === 'default')).toMatchObject({ value: true });
    expect(await viewFetches()).toBe(fetches);
  });

  it('a change of the flags arrives as a flags event, and the replica fetches that view', async () => {
    const fetches = await viewFetches();
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 50 });
    const version = await servedVersion();
    await feed.until(() => prodChanges().some((c) => c.version === version));
    const change = prodChanges().find((c) => c.version === version)!;
    expect(change).toEqual({ type: 'flags', projectId: project.id, projectSlug: 'shop', environment: 'prod', version });
    expect((await until(evaluate, (v) => v.reason === 'rollout')).reason).toBe('rollout');
    expect(await viewFetches()).toBe(fetches + 1);
  });

  it('ends the feed of an admin key as soon as it is revoked: a revoked key hears no more kills', async () => {
    const created = (await admin.post('/api/v1/keys', { kind: 'admin', name: 'replica-to-revoke' })).body;
    const own = await openRawStream(`${upstream.controlUrl}/api/v1/replica/stream`, { authorization: `Bearer ${created.key}` });
    try {
      await own.until(() => own.events.some((e) => e.event === 'versions'));
      let ended = false;
      void own.ended.then(() => {
        ended = true;
      });
      expect((await admin.delete(`/api/v1/keys/${created.id}`)).status).toBeLessThan(300);
      await until(
        async () => ended,
        (done) => done,
      );
      // The feed of a key still valid goes on.
      expect((await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'after the revoke' })).status).toBe(200);
      const version = await servedVersion();
      await feed.until(() => prodChanges().some((c) => c.version === version));
      expect(own.events.filter((e) => e.event === 'version' && (JSON.parse(e.data) as Json).version === version)).toEqual([]);
    } finally {
      own.close();
    }
  });

  it('a kill applied from the event is saved: restarted while the control plane is down, the replica serves it', async () => {
    await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`);
    await until(evaluate, (v) => v.reason === 'killed');
    await upstream.stop();
    await replica.stop();
    replica = await startOne();
    expect(await evaluate()).toEqual({ value: false, reason: 'killed', variation: 'off' });
    await upstream.start();
  });
});
