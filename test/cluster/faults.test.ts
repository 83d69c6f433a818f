import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { until } from '../helpers/deadlines.js';
import type { HttpResponse, Json } from '../helpers/http-client.js';
import { POSTGRES_MISSING } from '../helpers/postgres.js';
import { type Cluster, type ControlPlane, startCluster } from './cluster.js';
import { evaluateOn, evaluationStatus, hostActions, hostFile, servedOnAll } from './cluster-client.js';

describe.skipIf(POSTGRES_MISSING !== null)('two control planes, two replicas, PostgreSQL and a git host: one part fails', () => {
  let cluster: Cluster;
  let a: ControlPlane;
  let b: ControlPlane;
  let project: Json;
  let sdkKey: string;
  /** Every evaluation port and replica. */
  let everywhere: string[];

  const flagPath = (key: string, env = 'prod') => `projects/shop/environments/${env}/${key}.yaml`;
  const servedEverywhere = (key: string, check: (result: Json) => boolean) => servedOnAll(everywhere, sdkKey, key, check);

  beforeAll(async () => {
    cluster = await startCluster({ controlPlanes: 2, replicas: 2 });
    [a, b] = cluster.controlPlanes;
    everywhere = [a.evalUrl, b.evalUrl, ...cluster.replicas.map((r) => r.url)];
    project = await createProject(a.api, 'shop');
    sdkKey = (await a.api.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
  }, 120_000);
  afterAll(() => cluster?.stop(), 60_000);
  // Each fault starts from a whole cluster, whatever the one before left.
  beforeEach(async () => {
    for (const cp of cluster.controlPlanes) if (!cp.running) await cp.start();
  }, 60_000);

  it('a control plane killed with SIGKILL amid a stream of writes loses none it acknowledged; the other serves them and takes changes', async () => {
    const flags: Json[] = [];
    for (let i = 0; i < 12; i++) flags.push(await createFlag(a.api, project.id, { key: `stream-${i}` }));
    const acknowledged: string[] = [];
    const writes = flags.map(async (flag, i) => {
      // Two at a time, the first ones before the kill and the rest cut off by it.
      await new Promise((r) => setTimeout(r, Math.floor(i / 2) * 40));
      const res = await a.api
        .put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })
        .catch(() => null);
      if (res?.status === 200) acknowledged.push(flag.key);
    });
    await until(
      async () => acknowledged.length,
      (n) => n >= 3,
    );
    await a.sigkill();
    await Promise.all(writes);
    expect(acknowledged.length).toBeGreaterThanOrEqual(3);
    for (const key of acknowledged) expect(hostFile(cluster.gitHost.gitdir, flagPath(key)), key).toContain('enabled: true');
    for (const key of acknowledged)
      for (const url of [b.evalUrl, ...cluster.replicas.map((r) => r.url)])
        await until(
          () => evaluateOn(url, sdkKey, key),
          (result) => result?.value === true,
        );
    const after = await createFlag(b.api, project.id, { key: 'after-sigkill' });
    expect((await b.api.put(`/api/v1/flags/${after.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    await a.start();
    await servedEverywhere('after-sigkill', (result) => result.value === true);
  });

  it('with the git host down, a kill through either answers 200 and is served everywhere, other writes 503; back, each kill is on the host once', async () => {
    const flags: Json[] = [];
    for (const key of ['checkout', 'search']) {
      const flag = await createFlag(a.api, project.id, { key });
      expect((await a.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
      flags.push(flag);
    }
    await servedEverywhere('search', (result) => result.value === true);
    const before = hostActions(cluster.gitHost.gitdir);

    await cluster.gitHost.down();
    let refused: HttpResponse[] = [];
    try {
      const kills = await Promise.all(
        [a, b].map((cp, i) => cp.api.post(`/api/v1/flags/${flags[i].id}/environments/prod/kill`, { reason: 'git host down' })),
      );
      expect(kills.map((r) => r.status)).toEqual([200, 200]);
      await servedEverywhere('checkout', (result) => result.reason === 'killed');
      await servedEverywhere('search', (result) => result.reason === 'killed');
      refused = await Promise.all(
        [a, b].map((cp) => cp.api.put(`/api/v1/flags/${flags[0].id}/environments/dev/config`, { rolloutPct: 5 })),
      );
    } finally {
      await cluster.gitHost.up();
    }
    expect(refused.map((r) => [r.status, r.body.error?.code])).toEqual([
      [503, 'unavailable'],
      [503, 'unavailable'],
    ]);
    const kills = await until(
      async () => hostActions(cluster.gitHost.gitdir).slice(before.length),
      (added) => added.length >= 2,
    );
    expect(kills.sort()).toEqual(['kill checkout prod', 'kill search prod']);
    for (const flag of flags) {
      const entries = (await b.api.get(`/api/v1/audit?flagId=${flag.id}&action=kill`)).body.entries;
      expect(entries, flag.key).toHaveLength(1);
    }
    // Writes work again through both.
    for (const cp of [a, b])
      await until(
        () => cp.api.put(`/api/v1/flags/${flags[0].id}/environments/dev/config`, { rolloutPct: cp === a ? 6 : 7 }),
        (res) => res.status === 200,
      );
  });

  it('with PostgreSQL stopped, evaluation ports and replicas serve known keys, writes answer 503; started again, writes work without a restart', async () => {
    const flag = await createFlag(a.api, project.id, { key: 'during-outage' });
    expect((await a.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    await servedEverywhere('during-outage', (result) => result.value === true);

    await cluster.postgres.stopServer();
    let writes: HttpResponse[] = [];
    try {
      for (const url of everywhere) expect(await evaluationStatus(url, sdkKey), url).toBe(200);
      writes = await Promise.all([
        a.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 50 }),
        b.api.post(`/api/v1/projects/${project.id}/flags`, { key: 'made-while-down' }),
        a.api.post('/api/v1/keys', { kind: 'agent', name: 'while-down' }),
      ]);
      for (const url of everywhere) expect((await evaluateOn(url, sdkKey, 'during-outage'))?.value, url).toBe(true);
      // Kills never wait for the database: one through B, and its clear through A, are served everywhere, though
      // no notice can pass between them (each fetches the git host every second meanwhile; no poll is set here).
      expect((await b.api.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'database down' })).status).toBe(200);
      await servedEverywhere('during-outage', (result) => result.reason === 'killed');
      expect((await a.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true })).status).toBe(200);
      await servedEverywhere('during-outage', (result) => result.value === true && result.reason !== 'killed');
    } finally {
      await cluster.postgres.startServer();
    }
    expect(writes.map((r) => [r.status, r.body.error?.code])).toEqual([
      [503, 'unavailable'],
      [503, 'unavailable'],
      [503, 'unavailable'],
    ]);
    for (const cp of [a, b])
      await until(
        () => cp.api.post('/api/v1/keys', { kind: 'agent', name: `after-${cp.name}` }),
        (res) => res.status === 201,
      );
    expect((await b.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 0 })).status).toBe(200);
    await servedEverywhere('during-outage', (result) => result.value === false);
  });

  it('with PostgreSQL hanging, each control plane notices within about a second: kills through either are served everywhere within a second or so, /healthz says the database is unreachable; resumed, everything works without a restart', async () => {
    const flag = await createFlag(a.api, project.id, { key: 'during-hang' });
    expect((await a.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    await servedEverywhere('during-hang', (result) => result.value === true);
    const databaseOn = async (cp: ControlPlane) => (await cp.api.get('/healthz')).body;
    /** The time from sending `send` to the flag being served as `check` says by every evaluation port and replica. */
    const servedAfter = async (send: () => Promise<HttpResponse>, check: (result: Json) => boolean) => {
      const sent = Date.now();
      expect((await send()).status).toBe(200);
      await servedEverywhere('during-hang', check);
      return Date.now() - sent;
    };

    // Connections stay open and nothing answers: noticed by what the listening connection is not answered.
    await cluster.postgres.hang();
    let noticedMs: number[] = [];
    let killMs: number;
    let clearMs: number;
    try {
      const hungAt = Date.now();
      noticedMs = await Promise.all(
        [a, b].map(async (cp) => {
          const health = await until(
            () => databaseOn(cp),
            (body) => body.database?.reachable === false,
          );
          expect(health.status).toBe('degraded');
          return Date.now() - hungAt;
        }),
      );
      // No notice passes between them: each fetches the git host several times a second meanwhile (no poll is set here).
      killMs = await servedAfter(
        () => a.api.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'database hangs' }),
        (result) => result.reason === 'killed',
      );
      clearMs = await servedAfter(
        () => b.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true }),
        (result) => result.value === true && result.reason !== 'killed',
      );
    } finally {
      await cluster.postgres.resume();
    }
    for (const ms of noticedMs) expect(ms).toBeLessThan(2_500);
    expect(killMs).toBeLessThan(1_500);
    expect(clearMs).toBeLessThan(1_500);

    // Answering again: each control plane listens again and takes writes, and their notices pass again.
    for (const cp of [a, b]) {
      await until(
        () => databaseOn(cp),
        (body) => body.status === 'ok' && body.database?.reachable === true,
      );
      await until(
        () => cp.api.post('/api/v1/keys', { kind: 'agent', name: `after-hang-${cp.name}` }),
        (res) => res.status === 201,
      );
    }
    expect((await b.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 0 })).status).toBe(200);
    await servedEverywhere('during-hang', (result) => result.value === false);
  });
});
