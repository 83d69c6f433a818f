import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { until } from '../helpers/deadlines.js';
import { git } from '../helpers/git-cli.js';
import type { HttpResponse, Json } from '../helpers/http-client.js';
import { POSTGRES_MISSING } from '../helpers/postgres.js';
import { type Cluster, type ControlPlane, startCluster } from './cluster.js';
import { evaluateOn, hostActions, hostFile, servedOnAll } from './cluster-client.js';

/** The push deadline the control planes run with here (FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS). */
const PUSH_TIMEOUT_SECONDS = 8;

/** A request not answered yet, and its answer once it is. */
function pending(request: Promise<HttpResponse>) {
  const answer: { res?: HttpResponse } = {};
  const done = request.then((res) => {
    answer.res = res;
    return res;
  });
  return {
    done,
    get answered() {
      return answer.res !== undefined;
    },
  };
}

describe.skipIf(POSTGRES_MISSING !== null)('a kill beside config writes waiting for their turn or for the git host', () => {
  let cluster: Cluster;
  let a: ControlPlane;
  let b: ControlPlane;
  let project: Json;
  let sdkKey: string;
  /** Every evaluation port and replica. */
  let everywhere: string[];

  const servedEverywhere = (key: string, check: (result: Json) => boolean) => servedOnAll(everywhere, sdkKey, key, check);

  /** A flag on at 100 % in prod, served everywhere. */
  async function liveFlag(key: string): Promise<Json> {
    const flag = await createFlag(a.api, project.id, { key });
    expect((await a.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    await servedEverywhere(key, (result) => result.value === true);
    return flag;
  }

  /** Waits until `cp` finds the git host answering and holds no kill it lacks. */
  const reachesTheHost = (cp: ControlPlane) =>
    until(
      async () => (await cp.api.get('/healthz')).body.gitRemote,
      (remote) => remote.reachable === true && remote.holdingKills === false,
    );

  /** Control planes waiting for the turn to write to the git remote (an advisory lock not granted yet). */
  async function waitingForTheTurn(): Promise<number> {
    const client = new pg.Client({ connectionString: cluster.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
      return rows[0].n;
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    cluster = await startCluster({
      controlPlanes: 2,
      replicas: 2,
      env: { FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS: String(PUSH_TIMEOUT_SECONDS) },
    });
    [a, b] = cluster.controlPlanes;
    everywhere = [a.evalUrl, b.evalUrl, ...cluster.replicas.map((r) => r.url)];
    project = await createProject(a.api, 'shop');
    sdkKey = (await a.api.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
  }, 120_000);
  afterAll(() => cluster?.stop(), 60_000);

  it('a kill is answered and served everywhere while a config write through the same control plane waits for its turn', async () => {
    const pricing = await liveFlag('pricing');
    const search = await liveFlag('search');
    const before = hostActions(cluster.gitHost.gitdir);

    // Another control plane's turn: held (as a control plane holds it) until released below.
    const other = new pg.Client({ connectionString: cluster.databaseUrl });
    await other.connect();
    let config: ReturnType<typeof pending> | undefined;
    try {
      await other.query('BEGIN');
      await other.query("SELECT pg_advisory_xact_lock(hashtextextended('flagops:git-remote:acme', 0))");
      config = pending(b.api.put(`/api/v1/flags/${search.id}/environments/prod/config`, { rolloutPct: 0 }));
      await until(waitingForTheTurn, (n) => n >= 1);

      const kill = await b.api.post(`/api/v1/flags/${pricing.id}/environments/prod/kill`, { reason: 'beside a waiting write' });
      expect(kill.status).toBe(200);
      expect(config.answered).toBe(false);
      await servedEverywhere('pricing', (result) => result.reason === 'killed');
      expect(config.answered).toBe(false);
    } finally {
      await other.query('COMMIT').catch(() => undefined);
      await other.end();
    }
    // The turn is free: the config write lands on top of the kill, which it keeps.
    expect((await config.done).status).toBe(200);
    await servedEverywhere('search', (result) => result.value === false);
    await servedEverywhere('pricing', (result) => result.reason === 'killed');
    expect(hostActions(cluster.gitHost.gitdir).slice(before.length)).toEqual(['kill pricing prod', 'config_update search prod']);
  });

  it('a push the git host never answers is given up after its deadline with 503 git_remote_timeout; the turn is let go and the next write works', async () => {
    const banner = await liveFlag('banner');
    const before = hostActions(cluster.gitHost.gitdir);

    cluster.gitHost.hang();
    try {
      const refused = await a.api.put(`/api/v1/flags/${banner.id}/environments/prod/config`, { rolloutPct: 0 });
      expect(refused.status).toBe(503);
      expect(refused.body.error).toEqual({
        code: 'git_remote_timeout',
        message: expect.stringMatching(new RegExp(`did not answer within ${PUSH_TIMEOUT_SECONDS} s; the change was not made here`)),
      });
      expect(cluster.gitHost.unanswered).toBeGreaterThanOrEqual(1);
      // Nothing acknowledged, nothing served.
      for (const url of everywhere) expect((await evaluateOn(url, sdkKey, 'banner'))?.value, url).toBe(true);
    } finally {
      cluster.gitHost.answer();
    }

    // The turn was let go: the next write works through the other control plane, and again through the first.
    const retried = await b.api.put(`/api/v1/flags/${banner.id}/environments/prod/config`, { rolloutPct: 0 });
    expect(retried.status).toBe(200);
    expect((await a.api.put(`/api/v1/flags/${banner.id}/environments/dev/config`, { rolloutPct: 5 })).status).toBe(200);
    await servedEverywhere('banner', (result) => result.value === false);
    expect(hostActions(cluster.gitHost.gitdir).slice(before.length)).toEqual(['config_update banner prod', 'config_update banner dev']);
    expect(hostFile(cluster.gitHost.gitdir, 'projects/shop/environments/prod/banner.yaml')).toContain('rolloutPct: 0');
  });

  it('kills through either control plane are answered and served everywhere while a config write waits for a git host that hangs', async () => {
    const checkout = await liveFlag('checkout');
    const search = await liveFlag('search-v2');
    const promo = await liveFlag('promo');
    const before = hostActions(cluster.gitHost.gitdir);

    cluster.gitHost.hang();
    let config: ReturnType<typeof pending> | undefined;
    try {
      config = pending(a.api.put(`/api/v1/flags/${promo.id}/environments/prod/config`, { rolloutPct: 0 }));
      // A's push is with the host, which does not answer: A holds the turn, and its write queue, meanwhile.
      await until(
        async () => cluster.gitHost.unanswered,
        (n) => n >= 1,
      );
      const kills = await Promise.all([
        a.api.post(`/api/v1/flags/${checkout.id}/environments/prod/kill`, { reason: 'git host hung' }),
        b.api.post(`/api/v1/flags/${search.id}/environments/prod/kill`, { reason: 'git host hung' }),
      ]);
      expect(kills.map((r) => r.status)).toEqual([200, 200]);
      await servedEverywhere('checkout', (result) => result.reason === 'killed');
      await servedEverywhere('search-v2', (result) => result.reason === 'killed');

      // The config write made way for the kills, rather than keep them waiting to its deadline: refused, nothing
      // of it served.
      const refused = await config.done;
      expect(refused.status).toBe(503);
      expect(refused.body.error).toEqual({
        code: 'git_remote_timeout',
        message: expect.stringMatching(/did not answer while a kill waited behind this change; the change was not made here/),
      });
      for (const url of everywhere) expect((await evaluateOn(url, sdkKey, 'promo'))?.value, url).toBe(true);
    } finally {
      cluster.gitHost.answer();
    }

    // Back: each kill reaches the host once, and writes work again.
    const added = await until(
      async () => hostActions(cluster.gitHost.gitdir).slice(before.length),
      (actions) => actions.length >= 2,
    );
    expect([...added].sort()).toEqual(['kill checkout prod', 'kill search-v2 prod']);
    for (const flag of [checkout, search]) {
      const entries = (await b.api.get(`/api/v1/audit?flagId=${flag.id}&action=kill`)).body.entries;
      expect(entries, flag.key).toHaveLength(1);
    }
    await until(
      () => a.api.put(`/api/v1/flags/${promo.id}/environments/prod/config`, { rolloutPct: 0 }),
      (res) => res.status === 200,
    );
    await servedEverywhere('promo', (result) => result.value === false);
    await servedEverywhere('checkout', (result) => result.reason === 'killed');
    expect(
      hostActions(cluster.gitHost.gitdir)
        .slice(before.length)
        .filter((action) => action === 'config_update promo prod'),
    ).toHaveLength(1);
  });

  it('a kill one control plane holds for a git host that hangs is made by the other without a push of its own', async () => {
    const banner = await liveFlag('hung-banner');
    const before = hostActions(cluster.gitHost.gitdir);
    cluster.gitHost.hang();
    const pushesBefore = cluster.gitHost.pushesUnanswered;
    try {
      const kill = await a.api.post(`/api/v1/flags/${banner.id}/environments/prod/kill`, { reason: 'git host hung' });
      expect(kill.status).toBe(200);
      await servedEverywhere('hung-banner', (result) => result.reason === 'killed');
      // A tried the host once and held the kill; B made it from A's record, knowing A had tried the host.
      expect(cluster.gitHost.pushesUnanswered - pushesBefore).toBe(1);
      for (const cp of [a, b]) expect((await cp.api.get('/healthz')).body.gitRemote, cp.name).toMatchObject({ holdingKills: true });
    } finally {
      cluster.gitHost.answer();
    }
    const added = await until(
      async () => hostActions(cluster.gitHost.gitdir).slice(before.length),
      (actions) => actions.length >= 1,
    );
    expect(added).toEqual(['kill hung-banner prod']);
    for (const cp of [a, b]) {
      await reachesTheHost(cp);
      const entries = (await cp.api.get(`/api/v1/audit?flagId=${banner.id}&action=kill`)).body.entries;
      expect(entries, cp.name).toHaveLength(1);
    }
  });

  it("a kill through a control plane holding another one's kill for a git host that hangs is held at once, without a push of its own", async () => {
    const [first, second] = [await liveFlag('hung-first'), await liveFlag('hung-second')];
    const before = hostActions(cluster.gitHost.gitdir);
    cluster.gitHost.hang();
    const pushesBefore = cluster.gitHost.pushesUnanswered;
    try {
      expect((await a.api.post(`/api/v1/flags/${first.id}/environments/prod/kill`, { reason: 'git host hung' })).status).toBe(200);
      await servedEverywhere('hung-first', (result) => result.reason === 'killed');
      // B holds A's kill now, made from A's record: its own kill joins it rather than wait for the host again.
      expect((await b.api.post(`/api/v1/flags/${second.id}/environments/prod/kill`, { reason: 'git host hung' })).status).toBe(200);
      await servedEverywhere('hung-second', (result) => result.reason === 'killed');
      expect(cluster.gitHost.pushesUnanswered - pushesBefore).toBe(1);
    } finally {
      cluster.gitHost.answer();
    }
    const added = await until(
      async () => hostActions(cluster.gitHost.gitdir).slice(before.length),
      (actions) => actions.length >= 2,
    );
    expect(added).toEqual(['kill hung-first prod', 'kill hung-second prod']);
    for (const cp of [a, b]) await reachesTheHost(cp);
    for (const flag of [first, second])
      expect((await a.api.get(`/api/v1/audit?flagId=${flag.id}&action=kill`)).body.entries, flag.key).toHaveLength(1);
  });

  it('a clear of a kill waits for no turn: answered and served everywhere while another control plane holds the turn', async () => {
    const flag = await liveFlag('clear-beside-turn');
    expect((await b.api.post(`/api/v1/flags/${flag.id}/environments/prod/kill`)).status).toBe(200);
    await servedEverywhere('clear-beside-turn', (result) => result.reason === 'killed');
    const version: number = (await a.api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.version;
    // The turn is held, as another control plane writing to the remote would hold it, until the clear is served.
    const holder = new pg.Client({ connectionString: cluster.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT pg_advisory_xact_lock(hashtextextended('flagops:git-remote:acme', 0))");
      const cleared = await a.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true, expectedVersion: version });
      expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
      expect(cleared.body.environments.prod.killed).toBe(false);
      await servedEverywhere('clear-beside-turn', (result) => result.value === true);
      // expectedVersion still counts: a stale one is refused, and nothing changes.
      const stale = await a.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true, expectedVersion: version - 1 });
      expect(stale.status).toBe(409);
      expect(stale.body.error.code).toBe('version_conflict');
    } finally {
      await holder.query('COMMIT');
      await holder.end();
    }
  });

  it('a kill held by one control plane and cleared through another is not made again after the clear when it reaches the git host later', async () => {
    const flag = await liveFlag('held-then-cleared');
    const before = hostActions(cluster.gitHost.gitdir);
    cluster.gitHost.hang();
    try {
      expect((await a.api.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'git host hung' })).status).toBe(200);
      await servedEverywhere('held-then-cleared', (result) => result.reason === 'killed');
      // B holds A's kill, made from its record; the clear through B goes after it.
      expect((await b.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true })).status).toBe(200);
      await servedEverywhere('held-then-cleared', (result) => result.value === true);
      // A stops before the host answers again, so B's kill and clear reach the host first.
      await a.sigkill();
    } finally {
      cluster.gitHost.answer();
    }
    const added = await until(
      async () => hostActions(cluster.gitHost.gitdir).slice(before.length),
      (actions) => actions.length >= 2,
    );
    expect(added).toEqual(['kill held-then-cleared prod', 'clear_kill held-then-cleared prod']);
    // A comes back holding its own commit of the kill, which the host has already, with the clear after it.
    await a.start();
    await reachesTheHost(a);
    await until(
      async () => git(path.join(a.dataDir, 'repos', 'acme.git'), 'rev-parse', 'main'),
      (local) => local === git(cluster.gitHost.gitdir, 'rev-parse', 'main'),
    );
    expect(hostActions(cluster.gitHost.gitdir).slice(before.length)).toEqual(added);
    await servedEverywhere('held-then-cleared', (result) => result.value === true);
    expect((await a.api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.killed).toBe(false);
  });

  it('a config write through a control plane holding another one’s kill the git host is slow to take answers 200, after the kill', async () => {
    const [flag, other] = [await liveFlag('slow-kill'), await liveFlag('slow-neighbour')];
    const before = hostActions(cluster.gitHost.gitdir);
    // Each request answered 0.6 s late: a push takes longer than a kill waits for it, so the kill is held and B makes it from A's record.
    cluster.gitHost.slow(600);
    try {
      expect((await a.api.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'slow host' })).status).toBe(200);
      await servedEverywhere('slow-kill', (result) => result.reason === 'killed');
      // B's main holds its copy of the kill, which A's push puts on the host meanwhile.
      const write = await b.api.put(`/api/v1/flags/${other.id}/environments/prod/config`, { rolloutPct: 0 });
      expect(write.status, JSON.stringify(write.body)).toBe(200);
      expect(write.body.environments.prod.rolloutPct).toBe(0);
    } finally {
      cluster.gitHost.slow(0);
    }
    await servedEverywhere('slow-neighbour', (result) => result.value === false);
    const added = await until(
      async () => hostActions(cluster.gitHost.gitdir).slice(before.length),
      (actions) => actions.length >= 2,
    );
    expect(added).toEqual(['kill slow-kill prod', 'config_update slow-neighbour prod']);
    await servedEverywhere('slow-kill', (result) => result.reason === 'killed');
  });

  it('kills and clears alternating through both control planes while the git host is slow: each served everywhere, on the host once each, in order', async () => {
    const flag = await liveFlag('slow-alternating');
    const neighbour = await liveFlag('slow-alternating-neighbour');
    const before = hostActions(cluster.gitHost.gitdir);
    // Each request answered 0.6 s late: every kill's push takes longer than a kill waits for it.
    cluster.gitHost.slow(600);
    const writes: Promise<HttpResponse>[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const [first, second] = i % 2 === 0 ? [a, b] : [b, a];
        expect((await first.api.post(`/api/v1/flags/${flag.id}/environments/prod/kill`)).status).toBe(200);
        // A config write through the other control plane meanwhile, as a busy team makes them.
        writes.push(second.api.put(`/api/v1/flags/${neighbour.id}/environments/dev/config`, { rolloutPct: i }));
        await servedEverywhere('slow-alternating', (result) => result.reason === 'killed');
        expect((await second.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true })).status).toBe(200);
        await servedEverywhere('slow-alternating', (result) => result.value === true);
      }
    } finally {
      cluster.gitHost.slow(0);
    }
    // Config writes may be cut off for a kill (503 git_remote_timeout, nothing changed); none is lost or half-made.
    for (const write of await Promise.all(writes)) expect([200, 503], JSON.stringify(write.body)).toContain(write.status);
    const kills = await until(
      async () =>
        hostActions(cluster.gitHost.gitdir)
          .slice(before.length)
          .filter((action) => action.includes('slow-alternating prod')),
      (actions) => actions.length >= 6,
    );
    expect(kills).toEqual(Array.from({ length: 3 }, () => ['kill slow-alternating prod', 'clear_kill slow-alternating prod']).flat());
    for (const cp of [a, b]) await reachesTheHost(cp);
    await servedEverywhere('slow-alternating', (result) => result.value === true);
    for (const cp of [a, b]) {
      const entries = (await cp.api.get(`/api/v1/audit?flagId=${flag.id}&environment=prod`)).body.entries;
      expect(
        entries.filter((e: Json) => e.action === 'kill'),
        cp.name,
      ).toHaveLength(3);
      expect(
        entries.filter((e: Json) => e.action === 'clear_kill'),
        cp.name,
      ).toHaveLength(3);
    }
  });
});
