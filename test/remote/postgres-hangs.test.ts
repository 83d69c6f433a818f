import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { type Service, startService } from '../../src/service.js';
import { until } from '../helpers/deadlines.js';
import { type HttpClient, type HttpResponse, httpClient } from '../helpers/http-client.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { remoteConfig, startGitServer } from './git-server.js';

/** The documented bound (5 s) and some room for a busy machine. */
const ANSWERED_WITHIN_MS = 8_000;

describe.skipIf(POSTGRES_MISSING !== null)('a control plane on PostgreSQL and a git remote, PostgreSQL hanging', () => {
  let cluster: PostgresCluster;
  let host: Awaited<ReturnType<typeof startGitServer>>;
  let dataDir: string;
  let service: Service;
  let api: HttpClient;
  const adminKey = generateKey('admin');

  beforeAll(async () => {
    cluster = await PostgresCluster.start();
    host = await startGitServer();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-pg-hang-'));
    service = await startService(remoteConfig(dataDir, host.url, adminKey, { databaseUrl: await cluster.createDatabase() }), silentLogger);
    api = httpClient(service.controlUrl, adminKey);
  }, 60_000);
  afterAll(async () => {
    await cluster?.resume().catch(() => undefined);
    await service?.stop();
    await host?.stop();
    await cluster?.destroy();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** Commits on the git host's main. */
  const hostCommits = () => Number(execFileSync('git', ['--git-dir', host.gitdir, 'rev-list', '--count', 'main'], { encoding: 'utf8' }));

  /** Sends a request and resolves to its answer and how long it took, or to null when none came within 20 s. */
  const timed = async (send: () => Promise<HttpResponse>): Promise<{ res: HttpResponse | null; ms: number }> => {
    const started = Date.now();
    const res = await Promise.race([send(), new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000).unref())]);
    return { res, ms: Date.now() - started };
  };

  it('answers writes that need the database within seconds, and one answered 503 is not made once it is back', async () => {
    const project = (await api.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    const flag = (await api.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
    // The pool and the turn's connections are open and idle, as on a control plane in use.
    expect((await api.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { rolloutPct: 1 })).status).toBe(200);

    const before = hostCommits();
    await cluster.hang();
    let config: { res: HttpResponse | null; ms: number };
    let created: { res: HttpResponse | null; ms: number };
    try {
      config = await timed(() => api.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { rolloutPct: 3 }));
      created = await timed(() => api.post(`/api/v1/projects/${project.id}/flags`, { key: 'payments' }));
    } finally {
      await cluster.resume();
    }
    for (const { res, ms } of [config, created]) {
      expect(res?.status, JSON.stringify(res?.body)).toBe(503);
      expect(res?.body?.error?.code).toBe('unavailable');
      expect(ms).toBeLessThan(ANSWERED_WITHIN_MS);
    }

    // Back: writes are answered again, and what was answered 503 was not made, here nor on the git remote.
    await until(
      () => api.put(`/api/v1/flags/${flag.id}/environments/staging/config`, { rolloutPct: 5 }),
      (res) => res.status === 200,
      30_000,
    );
    // Long enough for anything left waiting in the database to have landed if it could.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(hostCommits()).toBe(before + 1);
    const served = (await api.get(`/api/v1/flags/${flag.id}`)).body;
    expect(served.environments.dev.rolloutPct).toBe(1);
    expect(served.environments.staging.rolloutPct).toBe(5);
    const flags = (await api.get(`/api/v1/projects/${project.id}/flags`)).body;
    expect(JSON.stringify(flags)).not.toContain('payments');
  }, 90_000);

  it('answers writes of keys and webhooks within seconds too, and takes them again once the database is back', async () => {
    const project = (await api.post('/api/v1/projects', { name: 'Keys', slug: 'keys' })).body;
    // Connections of the pool are open and idle, as on a control plane in use.
    expect((await api.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'dev' })).status).toBe(201);

    await cluster.hang();
    let key: { res: HttpResponse | null; ms: number };
    let webhook: { res: HttpResponse | null; ms: number };
    try {
      [key, webhook] = await Promise.all([
        timed(() => api.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })),
        timed(() => api.post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook' })),
      ]);
    } finally {
      await cluster.resume();
    }
    for (const { res, ms } of [key, webhook]) {
      expect(res?.status, JSON.stringify(res?.body)).toBe(503);
      expect(res?.body?.error?.code).toBe('unavailable');
      expect(ms).toBeLessThan(ANSWERED_WITHIN_MS);
    }
    // Back: the same writes are taken again, without a restart.
    await until(
      () => api.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'staging' }),
      (res) => res.status === 201,
      30_000,
    );
    expect((await api.post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook' })).status).toBe(201);
  }, 90_000);
});
