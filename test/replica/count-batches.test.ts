import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplicaCounts } from '../../src/apps/replica/replica-counts.js';
import { startReplica } from '../../src/apps/replica/start-replica.js';
import { UpstreamClient } from '../../src/apps/replica/upstream-client.js';
import { createLogger, silentLogger } from '../../src/foundations/log/logger.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

describe('count batches from replicas reach the stats exactly once', () => {
  let svc: TestService;
  let admin: HttpClient;
  let project: Json;
  let flag: Json;
  const total = async () => {
    const res = await admin.get(`/api/v1/flags/${flag.id}/environments/dev/stats?period=24h`);
    return res.body.series.reduce(
      (n: number, h: Json) => n + Object.values(h.variations as Record<string, number>).reduce((a, b) => a + b, 0),
      0,
    );
  };

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
  });
  afterAll(() => svc.stop());

  /** A replica of the service whose counts go upstream only when the test flushes them. */
  const replicaFlushedByTest = (dataDir: string) =>
    startReplica({
      upstreams: [svc.controlUrl],
      token: svc.admin,
      host: '127.0.0.1',
      port: 0,
      dataDir,
      logger: silentLogger,
      countsIntervalMs: 60_000,
      startTimeoutMs: 2_000,
    });

  it('a batch retried after its answer was lost is counted once', async () => {
    // The first answer is lost on the way back, after upstream took the batch.
    const { sent, lossy } = losingFirstAnswer();
    const counts = new ReplicaCounts(new UpstreamClient({ origin: svc.controlUrl, token: svc.admin, fetch: lossy }), silentLogger);
    for (let i = 0; i < 7; i++) counts.record(project.id, 'dev', 'checkout', 'off');
    await counts.flush();
    expect(counts.unsent).toBe(7);
    counts.record(project.id, 'dev', 'checkout', 'off'); // waits behind the batch in flight
    await counts.flush();
    expect(sent[1]).toBe(sent[0]);
    expect(await total()).toBe(7);
    await counts.flush();
    expect(sent).toHaveLength(3);
    expect(sent[2]).not.toBe(sent[0]);
    expect(await total()).toBe(8);
    expect(counts.unsent).toBe(0);
  });

  it('exposures and track events in a batch retried after its answer was lost are counted once', async () => {
    const { sent, lossy } = losingFirstAnswer();
    const counts = new ReplicaCounts(new UpstreamClient({ origin: svc.controlUrl, token: svc.admin, fetch: lossy }), silentLogger);
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    counts.addExposure(project.id, 'dev', 'checkout', 'on', hour, 3);
    counts.addTrack(project.id, 'dev', 'purchase', hour, 2, 7_500_000);
    await counts.flush(); // upstream took it, the answer was lost
    expect(counts.unsent).toBe(5);
    await counts.flush(); // the same batch again
    expect(sent).toEqual([sent[0], sent[0]]);
    expect(counts.unsent).toBe(0);
    const exposures = (await admin.get(`/api/v1/flags/${flag.id}/environments/dev/stats`)).body.series.at(-1).exposures;
    expect(exposures).toEqual({ on: 3 });
    const events = (await admin.get(`/api/v1/projects/${project.id}/events?environment=dev`)).body.series.at(-1).counts;
    expect(events).toEqual({ purchase: { count: 2, sum: 7.5 } });
  });

  it('a replica takes POST /v1/events with an sdk key and forwards them to the stats', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-'));
    const replica = await replicaFlushedByTest(dir);
    try {
      const sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'staging' })).body.key;
      const sdk = httpClient(replica.url, sdkKey);
      const bad = await sdk.post('/v1/events', {
        events: [
          { type: 'track', name: 'ok' },
          { type: 'track', name: 'signup', value: 'one' },
        ],
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('events[1].value');
      const res = await sdk.post('/v1/events', {
        events: [
          { type: 'exposure', flagKey: 'checkout', variation: 'off', userId: 'u1' },
          { type: 'exposure', flagKey: 'nope', variation: 'on' },
          { type: 'track', name: 'signup', value: 1 },
        ],
      });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ accepted: 2, ignored: 1 });
      const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
      const counted = await sdk.post('/v1/counts', {
        counts: [
          { flagKey: 'checkout', variation: 'on', hour, count: 4 },
          { flagKey: 'nope', variation: 'on', hour, count: 2 },
        ],
      });
      expect(counted.status).toBe(202);
      expect(counted.body).toEqual({ accepted: 1, ignored: 1 });
      await replica.counts.flush();
      expect((await admin.get(`/api/v1/flags/${flag.id}/environments/staging/stats`)).body.series.at(-1).variations).toEqual({ on: 4 });
      const exposures = (await admin.get(`/api/v1/flags/${flag.id}/environments/staging/stats`)).body.series.at(-1).exposures;
      expect(exposures).toEqual({ off: 1 });
      const events = (await admin.get(`/api/v1/projects/${project.id}/events?environment=staging`)).body.series.at(-1).counts;
      expect(events).toEqual({ signup: { count: 1, sum: 1 } });
    } finally {
      await replica.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('takes events whose values add up past what a sum can hold, and forwards them with the rest of its counts, the sum held at its cap', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-'));
    const replica = await replicaFlushedByTest(dir);
    try {
      const sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
      const sdk = httpClient(replica.url, sdkKey);
      const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
      expect((await sdk.post('/v1/counts', { counts: [{ flagKey: 'checkout', variation: 'off', hour, count: 5 }] })).status).toBe(202);
      const big = Array.from({ length: 10 }, () => ({ type: 'track', name: 'revenue', value: 1e9 }));
      const res = await sdk.post('/v1/events', { events: [{ type: 'track', name: 'signup', value: 1 }, ...big] });
      expect(res).toMatchObject({ status: 202, body: { accepted: 11 } });
      await replica.counts.flush();
      expect((await admin.get(`/api/v1/flags/${flag.id}/environments/prod/stats`)).body.series.at(-1).variations).toEqual({ off: 5 });
      const events = (await admin.get(`/api/v1/projects/${project.id}/events?environment=prod`)).body.series.at(-1).counts;
      expect(events).toEqual({ signup: { count: 1, sum: 1 }, revenue: { count: 10, sum: Number.MAX_SAFE_INTEGER / 1e6 } });
    } finally {
      await replica.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('what a stop could not deliver is kept in the data directory and counted once after the next start', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-spool-'));
    const spool = path.join(dir, 'unsent-counts.json');
    try {
      const before = await total();
      // Upstream takes every batch and every answer is lost on the way back: nothing is ever acknowledged.
      const losing: typeof fetch = async (input, init) => {
        await fetch(input, init);
        throw new TypeError('socket hang up');
      };
      const stopping = new ReplicaCounts(
        new UpstreamClient({ origin: svc.controlUrl, token: svc.admin, fetch: losing }),
        silentLogger,
        Date.now,
        spool,
      );
      for (let i = 0; i < 4; i++) stopping.record(project.id, 'dev', 'checkout', 'on');
      await stopping.flush(); // taken upstream, its answer lost
      stopping.record(project.id, 'dev', 'checkout', 'on');
      stopping.record(project.id, 'dev', 'checkout', 'on');
      await stopping.close();
      expect(await total()).toBe(before + 4);
      expect(existsSync(spool)).toBe(true);

      const started = new ReplicaCounts(new UpstreamClient({ origin: svc.controlUrl, token: svc.admin }), silentLogger, Date.now, spool);
      await started.restore();
      expect(started.unsent).toBe(6);
      await started.flush(); // the batch upstream took already, under its id: not counted again
      await started.flush();
      expect(started.unsent).toBe(0);
      expect(await total()).toBe(before + 6);
      expect(existsSync(spool)).toBe(false);
      await started.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a batch upstream refuses is dropped, not retried forever', async () => {
    const counts = new ReplicaCounts(new UpstreamClient({ origin: svc.controlUrl, token: svc.admin }), silentLogger);
    counts.record('prj_no-such-project', 'dev', 'checkout', 'on');
    await counts.flush();
    expect(counts.unsent).toBe(0);
  });

  it('forwards at most 1,000 track event names of a project an hour, so made-up names cannot grow what waits for upstream', async () => {
    let now = Date.parse('2026-05-01T10:30:00.000Z');
    const hour = Date.parse('2026-05-01T10:00:00.000Z');
    const warnings: string[] = [];
    const logger = createLogger({ write: (line) => warnings.push(JSON.parse(line).msg) });
    // Upstream is down: everything waits.
    const down: typeof fetch = async () => {
      throw new TypeError('connect ECONNREFUSED');
    };
    const counts = new ReplicaCounts(new UpstreamClient({ origin: svc.controlUrl, token: svc.admin, fetch: down }), logger, () => now);
    const add = (projectId: string, name: string, environment = 'dev') => counts.addTrack(projectId, environment, name, hour, 1, 0);
    for (let i = 0; i < 1000; i++) expect(add('prj_a', `name-${i}`, i % 2 ? 'dev' : 'prod')).toBe(true);
    expect(add('prj_a', 'one-more')).toBe(false);
    expect(add('prj_a', 'another')).toBe(false);
    expect(add('prj_a', 'name-7')).toBe(true); // a name forwarded this hour goes on
    expect(add('prj_b', 'one-more')).toBe(true); // another project has names of its own
    expect(counts.unsent).toBe(1002);
    expect(warnings.filter((w) => w.includes('dropped'))).toHaveLength(1);
    now += 3_600_000;
    expect(add('prj_a', 'one-more')).toBe(true);
  });

  it('the counts endpoint needs an admin key', async () => {
    const res = await httpClient(svc.controlUrl, svc.agent).post('/api/v1/replica/counts', { batchId: 'abcdefgh-1', scopes: [] });
    expect(res.status).toBe(403);
    expect((await httpClient(svc.controlUrl).get('/api/v1/replica/snapshots')).status).toBe(401);
  });
});

/** A fetch that loses the first answer on its way back (upstream took the request), and the batch ids it sent. */
function losingFirstAnswer(): { sent: string[]; lossy: typeof fetch } {
  const sent: string[] = [];
  let loseNext = true;
  const lossy: typeof fetch = async (input, init) => {
    sent.push(JSON.parse(String(init?.body)).batchId);
    const res = await fetch(input, init);
    if (loseNext) {
      loseNext = false;
      throw new TypeError('socket hang up');
    }
    return res;
  };
  return { sent, lossy };
}
