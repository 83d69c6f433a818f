import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import type { Config } from '../../src/foundations/config/config.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { type Service, startService } from '../../src/service.js';
import { until } from '../helpers/deadlines.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { killCommits, remoteConfig, startGitServer } from './git-server.js';

describe('kills never wait for the git host (remote mode)', () => {
  let host: Awaited<ReturnType<typeof startGitServer>>;
  let dataDir: string;
  let service: Service;
  let admin: HttpClient;
  let project: Json;
  let sdkKey: string;
  const adminKey = generateKey('admin');
  let config: Config;

  const evaluate = async (flagKey: string) =>
    (await httpClient(service.evalUrl, sdkKey).post('/v1/evaluate', { key: flagKey, context: { userId: 'u1' } })).body[flagKey];

  beforeAll(async () => {
    host = await startGitServer();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-kill-nohost-'));
    config = remoteConfig(dataDir, host.url, adminKey);
    service = await startService(config, silentLogger);
    admin = httpClient(service.controlUrl, adminKey);
    project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
  });
  afterAll(async () => {
    await service.stop();
    await host.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function liveFlag(key: string): Promise<Json> {
    const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key })).body;
    expect((await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    expect((await evaluate(key))?.value).toBe(true);
    return flag;
  }

  it('with the git host down, a kill answers 200, is served at once, shows in the audit log, and reaches the host once when it is back', async () => {
    const flag = await liveFlag('checkout');
    await host.down();
    try {
      const killed = await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'git host down, checkout failing' });
      expect(killed.status, JSON.stringify(killed.body)).toBe(200);
      expect(killed.body.environments.prod.killed).toBe(true);
      // Served before the answer: no wait.
      expect(await evaluate('checkout')).toMatchObject({ value: false, reason: 'killed' });
      const audit = (await admin.get('/api/v1/audit?limit=5')).body.entries;
      expect(audit[0]).toMatchObject({ action: 'kill', flagKey: 'checkout', environment: 'prod' });
      // Other changes wait for the host: 503, nothing changed.
      const other = await admin.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { rolloutPct: 5 });
      expect(other.status).toBe(503);
      expect(other.body.error.code).toBe('unavailable');
      expect(killCommits(host.gitdir, 'checkout')).toEqual([]);
      // The operator sees why: the remote is out of reach and main holds a kill it lacks.
      const health = await admin.get('/healthz');
      expect(health.body).toMatchObject({ status: 'degraded', gitRemote: { org: 'acme', reachable: false, holdingKills: true } });
    } finally {
      await host.up();
    }
    await until(
      async () => killCommits(host.gitdir, 'checkout'),
      (commits) => commits.length > 0,
    );
    expect(git(host.gitdir, 'rev-parse', 'main')).toBe(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main'));
    expect(killCommits(host.gitdir, 'checkout')).toEqual(['kill prod']);
    // The push that brought it there is answered a moment before the service records it.
    await until(
      async () => (await admin.get('/healthz')).body,
      (health) => health.status === 'ok' && health.gitRemote.reachable === true && health.gitRemote.holdingKills === false,
    );
    const entries = (await admin.get('/api/v1/audit?limit=20')).body.entries.filter(
      (e: Json) => e.flagKey === 'checkout' && e.action === 'kill',
    );
    expect(entries).toHaveLength(1);
  });

  it('with the git host down, a change refused for it (503) has /healthz say the host is out of reach at once, until it answers again', async () => {
    const flag = await liveFlag('refused-while-down');
    await host.down();
    try {
      const refused = await admin.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { rolloutPct: 7 });
      expect([refused.status, refused.body.error?.code]).toEqual([503, 'unavailable']);
      expect((await admin.get('/healthz')).body).toMatchObject({
        status: 'degraded',
        gitRemote: { reachable: false, holdingKills: false },
      });
    } finally {
      await host.up();
    }
    expect((await admin.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { rolloutPct: 7 })).status).toBe(200);
    expect((await admin.get('/healthz')).body).toMatchObject({ status: 'ok', gitRemote: { reachable: true } });
  });

  it('a kill the git host is slow to take is served at once, reaches the host once, and the host is not reported down', async () => {
    const flag = await liveFlag('slow-host');
    // Each request answered 0.6 s late: a push (one request once the host is known) takes longer than a kill
    // waits for it.
    host.slow(600);
    try {
      const killed = await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'slow host' });
      expect(killed.status, JSON.stringify(killed.body)).toBe(200);
      expect(await evaluate('slow-host')).toMatchObject({ value: false, reason: 'killed' });
      // Held while its push goes on; a host that answers, however slowly, is not out of reach.
      const health = (await admin.get('/healthz')).body;
      expect(health.gitRemote).toMatchObject({ reachable: true, holdingKills: true });
      await until(
        async () => (await admin.get('/healthz')).body,
        (now) => now.gitRemote.holdingKills === false,
      );
      expect((await admin.get('/healthz')).body.gitRemote).toMatchObject({ reachable: true, holdingKills: false });
    } finally {
      host.slow(0);
    }
    expect(killCommits(host.gitdir, 'slow-host')).toEqual(['kill prod']);
    expect(git(host.gitdir, 'rev-parse', 'main')).toBe(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main'));
    const entries = (await admin.get('/api/v1/audit?limit=20')).body.entries.filter(
      (e: Json) => e.flagKey === 'slow-host' && e.action === 'kill',
    );
    expect(entries).toHaveLength(1);
  });

  it("with the git host down, a clear's expectedVersion is checked against what is served here: the one read answers 200 at once", async () => {
    const flag = await liveFlag('cleared-while-down');
    expect((await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`)).status).toBe(200);
    const read = (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod;
    await host.down();
    try {
      const stale = await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, {
        clearKill: true,
        expectedVersion: read.version - 1,
      });
      expect([stale.status, stale.body.error?.code]).toEqual([409, 'version_conflict']);
      const cleared = await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, {
        clearKill: true,
        expectedVersion: read.version,
      });
      expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
      expect(cleared.body.environments.prod.killed).toBe(false);
      expect(await evaluate('cleared-while-down')).toMatchObject({ value: true });
    } finally {
      await host.up();
    }
    await until(
      async () => killCommits(host.gitdir, 'cleared-while-down'),
      (commits) => commits.length === 2,
    );
    expect(killCommits(host.gitdir, 'cleared-while-down')).toEqual(['kill prod', 'clear_kill prod']);
  });

  it('a kill and its clear made while the host is down survive a restart and reach the host in order', async () => {
    const flag = await liveFlag('search');
    await host.down();
    try {
      expect((await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`)).status).toBe(200);
      expect((await admin.post(`/api/v1/flags/${flag.id}/environments/staging/kill`)).status).toBe(200);
      expect((await admin.put(`/api/v1/flags/${flag.id}/environments/staging/config`, { clearKill: true })).status).toBe(200);
      await service.stop();
      service = await startService(config, silentLogger);
      admin = httpClient(service.controlUrl, adminKey);
      expect(await evaluate('search')).toMatchObject({ value: false, reason: 'killed' });
      // Restarted, main still holds what the host lacks, and /healthz says so as before the stop.
      expect((await admin.get('/healthz')).body.gitRemote).toMatchObject({ reachable: false, holdingKills: true });
    } finally {
      await host.up();
    }
    await until(
      async () => killCommits(host.gitdir, 'search'),
      (commits) => commits.length === 3,
    );
    expect(killCommits(host.gitdir, 'search')).toEqual(['kill prod', 'kill staging', 'clear_kill staging']);
    await until(
      async () => (await admin.get('/healthz')).body.gitRemote,
      (remote) => remote.reachable === true && remote.holdingKills === false,
    );
    // Writes work again once the host is back.
    expect((await admin.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { rolloutPct: 7 })).status).toBe(200);
  });

  it('a kill held here while the host got other commits is made again on top of them, once, and never un-served', async () => {
    const flag = await liveFlag('banner');
    let killedAt = '';
    await host.down();
    try {
      const killed = await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'held' });
      expect(killed.status).toBe(200);
      killedAt = killed.body.environments.prod.killedAt;
      // Meanwhile a pull request is merged on the host, which this control plane cannot reach.
      const checkout = await mkdtemp(path.join(os.tmpdir(), 'flagops-kill-nohost-pr-'));
      git(checkout, 'clone', '--quiet', host.gitdir, 'pr');
      const pr = path.join(checkout, 'pr');
      writeFileSync(
        path.join(pr, 'projects/shop/environments/dev/banner.yaml'),
        'enabled: true\nrolloutPct: 33\nvalueOn: true\nvalueOff: false\nversion: 9\n',
      );
      git(pr, 'commit', '--quiet', '-am', 'dev banner at 33 % (merged pull request)');
      git(pr, 'push', '--quiet', 'origin', 'HEAD:main');
      await rm(checkout, { recursive: true, force: true });
    } finally {
      await host.up();
    }
    const served: unknown[] = [];
    const hostMain = await until(
      async () => {
        served.push((await evaluate('banner'))?.value);
        return killCommits(host.gitdir, 'banner');
      },
      (commits) => commits.length > 0,
    );
    expect(hostMain).toEqual(['kill prod']);
    expect(served.every((value) => value === false)).toBe(true);
    expect(git(host.gitdir, 'log', '-1', '--format=%s', 'main^')).toBe('dev banner at 33 % (merged pull request)');
    await until(
      async () => git(service.repos.gitdirOf('acme'), 'rev-parse', 'main'),
      (local) => local === git(host.gitdir, 'rev-parse', 'main'),
    );
    const view = (await admin.get(`/api/v1/flags/${flag.id}`)).body;
    // Made again as first made: the same time and author.
    expect(view.environments.prod).toMatchObject({ killed: true, killedAt });
    expect(git(host.gitdir, 'show', 'main:projects/shop/environments/prod/kills.yaml')).toContain('reason: held');
    expect(view.environments.dev).toMatchObject({ rolloutPct: 33 });
    const entries = (await admin.get('/api/v1/audit?limit=20')).body.entries.filter(
      (e: Json) => e.flagKey === 'banner' && e.action === 'kill',
    );
    expect(entries).toHaveLength(1);
  });
});
