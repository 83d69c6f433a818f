import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import type { Config } from '../../src/foundations/config/config.js';
import { createLogger, silentLogger } from '../../src/foundations/log/logger.js';
import { type Service, startService } from '../../src/service.js';
import { gitAsync } from '../git-http/git-async.js';
import { until } from '../helpers/deadlines.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { killCommits, remoteConfig, startGitServer } from './git-server.js';

/** What the contract promises between control planes: within a second. */
const WITHIN_MS = 1_000;

/**
 * How long held kills may take to reach the host. On a busy machine (two test files beside these two control
 * planes and their git host) a run of them, made by both and each held, is rebuilt on the host's head once.
 */
const HELD_KILLS_PUSHED_MS = 30_000;

/** Polls `read` until `done`, failing when that takes longer than `ms`; resolves to the milliseconds it took. */
async function within<T>(ms: number, read: () => Promise<T>, done: (value: T) => boolean): Promise<number> {
  const started = performance.now();
  while (!done(await read())) {
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return performance.now() - started;
}

describe.skipIf(POSTGRES_MISSING !== null)('two control planes on PostgreSQL and one git remote', () => {
  let cluster: PostgresCluster;
  let host: Awaited<ReturnType<typeof startGitServer>>;
  const dirs: string[] = [];
  const services: Service[] = [];
  const configs: Config[] = [];
  const adminKey = generateKey('admin');
  let a: HttpClient;
  let b: HttpClient;
  let project: Json;
  let sdkKey: string;

  const evaluate = async (service: Service, key: string) =>
    (await httpClient(service.evalUrl, sdkKey).post('/v1/evaluate', { key, context: { userId: 'u1' } })).body[key];
  /**
   * Until neither control plane holds a kill the host lacks. A kill the host does not take within 0.5 s (a busy
   * machine) is held, and reaches it later by retries that may fetch; a count of fetches starts after them.
   */
  const hostHasEveryKill = async () => {
    for (const client of [a, b])
      await until(
        async () => (await client.get('/healthz')).body.gitRemote,
        (r) => r.holdingKills === false,
        HELD_KILLS_PUSHED_MS,
      );
  };

  beforeAll(async () => {
    cluster = await PostgresCluster.start();
    const databaseUrl = await cluster.createDatabase();
    host = await startGitServer();
    for (let i = 0; i < 2; i++) {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), `flagops-pg-cp${i}-`));
      dirs.push(dataDir);
      // No polling: what reaches the other control plane comes by notice.
      const config = remoteConfig(dataDir, host.url, adminKey, { databaseUrl });
      configs.push(config);
      services.push(await startService(config, process.env.DEBUG_CP ? createLogger({ level: 'debug' }).child({ cp: i }) : silentLogger));
    }
    [a, b] = services.map((s) => httpClient(s.controlUrl, adminKey));
    project = (await a.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    sdkKey = (await a.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await host?.stop();
    await cluster?.destroy();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('a key made on one works on the other, and a change through one is served by the other, within a second', async () => {
    const agent = (await a.post('/api/v1/keys', { kind: 'agent', name: 'release-bot' })).body;
    await within(
      WITHIN_MS,
      () => httpClient(services[1].controlUrl, agent.key).get('/api/v1/projects'),
      (r) => r.status === 200,
    );
    const flag = (await b.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
    expect((await b.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    await within(
      WITHIN_MS,
      () => evaluate(services[0], 'checkout'),
      (r) => r?.value === true,
    );
    expect((await a.post(`/api/v1/flags/${flag.id}/environments/prod/kill`)).status).toBe(200);
    await within(
      WITHIN_MS,
      () => evaluate(services[1], 'checkout'),
      (r) => r?.reason === 'killed',
    );
  });

  it('a kill through one, then its clear through the other as soon as the other serves it: the clear takes effect, every time', async () => {
    const flag = (await a.post(`/api/v1/projects/${project.id}/flags`, { key: 'toggled' })).body;
    expect((await a.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    await within(
      WITHIN_MS,
      () => evaluate(services[1], 'toggled'),
      (r) => r?.value === true,
    );
    for (let round = 0; round < 6; round++) {
      const [killer, clearer] = round % 2 === 0 ? [a, b] : [b, a];
      const [, clearerService] = round % 2 === 0 ? services : [...services].reverse();
      const killed = await killer.post(`/api/v1/flags/${flag.id}/environments/prod/kill`);
      expect(killed.body.alreadyKilled, `round ${round}`).toBe(false);
      await within(
        WITHIN_MS,
        () => evaluate(clearerService, 'toggled'),
        (r) => r?.reason === 'killed',
      );
      const cleared = await clearer.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true });
      expect(cleared.status).toBe(200);
      expect(await evaluate(clearerService, 'toggled'), `round ${round}`).toMatchObject({ value: true });
    }
    // Each reaches the host once, in the order made, also those held because the host was slow to take them.
    await hostHasEveryKill();
    expect(killCommits(host.gitdir, 'toggled')).toEqual(Array(6).fill(['kill prod', 'clear_kill prod']).flat());
  }, 60_000);

  it('a change pushed through one is taken by the other from the notice, without a fetch from the git host', async () => {
    const flag = (await a.post(`/api/v1/projects/${project.id}/flags`, { key: 'handed-over' })).body;
    await within(
      WITHIN_MS,
      () => b.get(`/api/v1/flags/${flag.id}`),
      (r) => r.status === 200,
    );
    await hostHasEveryKill();
    const fetchesBefore = host.fetches;
    for (const rolloutPct of [30, 60, 100]) {
      expect((await a.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct })).status).toBe(200);
      await within(
        WITHIN_MS,
        () => b.get(`/api/v1/flags/${flag.id}`),
        (r) => r.body.environments.prod.rolloutPct === rolloutPct,
      );
    }
    expect(host.fetches).toBe(fetchesBefore);
    // A kill too, when the host takes its push within 0.5 s; on a machine too busy for that, the kill is held and
    // the other makes it from its record instead (fetching as it pushes them), so fetches are not counted here.
    expect((await a.post(`/api/v1/flags/${flag.id}/environments/prod/kill`)).status).toBe(200);
    await within(
      WITHIN_MS,
      () => evaluate(services[1], 'handed-over'),
      (r) => r?.reason === 'killed',
    );
    // The other's main is the host's: its own next write goes on top of what it took.
    expect((await b.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true })).status).toBe(200);
    await hostHasEveryKill();
    expect(killCommits(host.gitdir, 'handed-over')).toEqual(['kill prod', 'clear_kill prod']);
  }, 60_000);

  it("a push to one's /git/<org>.git is served by the other within a second", async () => {
    const flag = (await a.post(`/api/v1/projects/${project.id}/flags`, { key: 'pushed' })).body;
    expect((await a.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    await within(
      WITHIN_MS,
      () => evaluate(services[1], 'pushed'),
      (r) => r?.value === true,
    );
    const work = await mkdtemp(path.join(os.tmpdir(), 'flagops-pg-push-'));
    dirs.push(work);
    const checkout = path.join(work, 'flags');
    const url = `${services[1].controlUrl.replace('://', `://engineer:${adminKey}@`)}/git/acme.git`;
    expect((await gitAsync(work, 'clone', '--quiet', '--config', 'gc.auto=0', url, checkout)).ok).toBe(true);
    const config = path.join(checkout, 'projects/shop/environments/prod/pushed.yaml');
    await writeFile(config, (await readFile(config, 'utf8')).replace(/^rolloutPct: 100$/m, 'rolloutPct: 0'));
    expect((await gitAsync(checkout, 'commit', '--quiet', '-am', 'pushed: prod rollout to 0')).ok).toBe(true);
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok, pushed.stderr).toBe(true);
    await within(
      WITHIN_MS,
      () => evaluate(services[0], 'pushed'),
      (r) => r?.value === false,
    );
  });

  it('writes through both at once take turns rather than race for the remote: every one lands, none costs a fetch', async () => {
    const flags: Json[] = [];
    for (let i = 0; i < 4; i++) flags.push((await a.post(`/api/v1/projects/${project.id}/flags`, { key: `turns-${i}` })).body);
    await within(
      WITHIN_MS,
      () => b.get(`/api/v1/flags/${flags[3].id}`),
      (r) => r.status === 200,
    );
    await hostHasEveryKill();
    const fetchesBefore = host.fetches;
    const answers = await Promise.all(
      flags.map(async (flag, writer) => {
        const statuses: number[] = [];
        for (const rolloutPct of [10, 20, 30, 40, 50]) {
          const via = writer % 2 === 0 ? a : b;
          statuses.push((await via.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct })).status);
        }
        return statuses;
      }),
    );
    expect(answers.flat()).toEqual(Array(20).fill(200));
    // A push refused because the other control plane moved main first would have cost a fetch.
    expect(host.fetches).toBe(fetchesBefore);
    for (const flag of flags)
      for (const client of [a, b])
        await within(
          WITHIN_MS,
          () => client.get(`/api/v1/flags/${flag.id}`),
          (r) => r.body.environments.prod.rolloutPct === 50,
        );
  }, 60_000);

  it('with the git host down, both say they hold a kill, also once both are restarted, until the host has it', async () => {
    const flag = (await a.post(`/api/v1/projects/${project.id}/flags`, { key: 'restarted' })).body;
    expect((await a.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    const holding = async (client: HttpClient) => (await client.get('/healthz')).body.gitRemote;
    await host.down();
    try {
      expect((await a.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'held over a restart' })).status).toBe(200);
      await until(
        () => evaluate(services[1], 'restarted'),
        (r) => r?.reason === 'killed',
      );
      // The other holds the copy it made at once, and finds the host down at its first retry.
      for (const client of [a, b])
        await until(
          () => holding(client),
          (r) => r.reachable === false && r.holdingKills === true,
        );
      for (let i = 0; i < services.length; i++) {
        await services[i].stop();
        services[i] = await startService(configs[i], silentLogger);
      }
      [a, b] = services.map((s) => httpClient(s.controlUrl, adminKey));
      for (const client of [a, b]) expect(await holding(client)).toMatchObject({ reachable: false, holdingKills: true });
    } finally {
      await host.up();
    }
    await until(
      async () => killCommits(host.gitdir, 'restarted'),
      (commits) => commits.length > 0,
    );
    for (const client of [a, b])
      await until(
        () => holding(client),
        (r) => r.reachable === true && r.holdingKills === false,
      );
    expect(killCommits(host.gitdir, 'restarted')).toEqual(['kill prod']);
  });

  it('with the git host down, a kill through one is served by both at once, and reaches the host once even if the one that took it is gone', async () => {
    const flag = (await a.post(`/api/v1/projects/${project.id}/flags`, { key: 'search' })).body;
    expect((await a.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    await within(
      WITHIN_MS,
      () => evaluate(services[1], 'search'),
      (r) => r?.value === true,
    );
    await host.down();
    try {
      const killed = await a.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'host down' });
      expect(killed.status).toBe(200);
      expect(await evaluate(services[0], 'search')).toMatchObject({ value: false, reason: 'killed' });
      await within(
        WITHIN_MS,
        () => evaluate(services[1], 'search'),
        (r) => r?.reason === 'killed',
      );
      // The other control plane serves the kill as first made.
      expect((await b.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.killedAt).toBe(killed.body.environments.prod.killedAt);
      // The control plane that took the kill goes away before the host is back.
      await services[0].stop();
    } finally {
      await host.up();
    }
    await until(
      async () => killCommits(host.gitdir, 'search'),
      (commits) => commits.length > 0,
    );
    expect(killCommits(host.gitdir, 'search')).toEqual(['kill prod']);
    expect(git(host.gitdir, 'show', 'main:projects/shop/environments/prod/kills.yaml')).toContain('reason: host down');
    const audit = (await b.get('/api/v1/audit?limit=20')).body.entries.filter((e: Json) => e.flagKey === 'search' && e.action === 'kill');
    expect(audit).toHaveLength(1);
    expect(await evaluate(services[1], 'search')).toMatchObject({ value: false, reason: 'killed' });
  });
});
