import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { type Service, startService } from '../../src/service.js';
import { until } from '../helpers/deadlines.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { remoteConfig, startGitServer } from './git-server.js';

describe.skipIf(POSTGRES_MISSING !== null)('a new control plane (empty data directory) started while the git host is down', () => {
  let cluster: PostgresCluster;
  let host: Awaited<ReturnType<typeof startGitServer>>;
  const dirs: string[] = [];
  const services: Service[] = [];
  const adminKey = generateKey('admin');
  let databaseUrl: string;
  let a: HttpClient;
  let project: Json;
  let flag: Json;
  let sdkKey: string;

  const evaluate = (service: Service) =>
    httpClient(service.evalUrl, sdkKey).post('/v1/evaluate', { key: 'checkout', context: { userId: 'u1' } });
  const start = async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-new-cp-'));
    dirs.push(dataDir);
    const service = await startService(remoteConfig(dataDir, host.url, adminKey, { databaseUrl }), silentLogger);
    services.push(service);
    return service;
  };

  beforeAll(async () => {
    cluster = await PostgresCluster.start();
    databaseUrl = await cluster.createDatabase();
    host = await startGitServer();
    a = httpClient((await start()).controlUrl, adminKey);
    project = (await a.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    flag = (await a.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
    expect((await a.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    sdkKey = (await a.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
  }, 60_000);
  afterAll(async () => {
    await host?.up().catch(() => undefined);
    await Promise.all(services.map((s) => s.stop()));
    await host?.stop();
    await cluster?.destroy();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('answers 503 (never 404 or an empty list) on evaluation, control-plane and replica routes, /healthz is not 200, and serves once the host is back', async () => {
    await host.down();
    const b = await start();
    const api = httpClient(b.controlUrl, adminKey);
    // Its first fetch failed: what it answers now is what it answers until the host is back (tried every second).
    await until(
      () => api.get('/healthz'),
      (health) => health.body.gitRemote?.reachable === false,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    for (const url of [b.controlUrl, b.evalUrl]) {
      const health = await httpClient(url).get('/healthz');
      expect([health.status, health.body], url).toEqual([503, { status: 'starting' }]);
    }
    expect((await api.get('/healthz')).body.gitRemote.error).toContain('not yet been able to read the git remote');

    const unavailable = (res: { status: number; body: Json }) => [res.status, res.body?.error?.code];
    const evaluated = await evaluate(b);
    expect(unavailable(evaluated)).toEqual([503, 'unavailable']);
    expect(evaluated.body.error.message).toContain(`not yet been able to read the git remote ${host.url}`);
    const projects = await api.get('/api/v1/projects');
    expect(unavailable(projects)).toEqual([503, 'unavailable']);
    expect(projects.body.error.message).toContain(host.url);
    expect(unavailable(await api.get(`/api/v1/flags/${flag.id}`))).toEqual([503, 'unavailable']);
    // It cannot kill a flag it has never seen; the control plane that has can, host down or not.
    expect(unavailable(await api.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'via b' }))).toEqual([
      503,
      'unavailable',
    ]);
    expect((await a.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'checkout failing' })).status).toBe(200);
    // Replicas are told to try again (they go on to the next control plane of their list), not given an empty state.
    expect(unavailable(await api.get('/api/v1/replica/snapshots'))).toEqual([503, 'unavailable']);
    expect(unavailable(await api.get('/api/v1/replica/stream'))).toEqual([503, 'unavailable']);

    await host.up();
    // Read within seconds of the host's return: the same main as the host, with the kill made through the other.
    await until(
      async () => (await evaluate(b)).body.checkout,
      (served) => served?.reason === 'killed',
    );
    await until(
      async () => git(b.repos.gitdirOf('acme'), 'rev-parse', 'main'),
      (head) => head === git(host.gitdir, 'rev-parse', 'main'),
    );
    expect((await api.get('/api/v1/projects')).body.projects.map((p: Json) => p.slug)).toEqual(['shop']);
    expect((await api.get('/api/v1/replica/snapshots')).status).toBe(200);
    const health = await until(
      () => httpClient(b.controlUrl).get('/healthz'),
      (h) => h.status === 200,
    );
    expect(health.body).toEqual({ status: 'ok' });
    // Five waits of up to PROMPTLY_MS each, for a control plane started on a busy machine: not the default 30 s.
  }, 90_000);
});
