import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flagops } from '../cli/cli-harness.js';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { sessionHeaders, signIn } from '../dashboard/helpers/dashboard-session.js';
import { until } from '../helpers/deadlines.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { POSTGRES_MISSING } from '../helpers/postgres.js';
import { receiver } from '../webhooks/webhook-harness.js';
import { type Cluster, type ControlPlane, startCluster } from './cluster.js';
import { countedEvaluations, evaluateOn, evaluationStatus, hostActions, WITHIN_A_SECOND } from './cluster-client.js';

/** Waits for `check` on what `read` answers, within the contract's second from now. */
const withinASecond = <T>(read: () => Promise<T>, check: (value: T) => boolean) => until(read, check, WITHIN_A_SECOND);

describe.skipIf(POSTGRES_MISSING !== null)('two control planes on one database and one git remote behave as one service', () => {
  let cluster: Cluster;
  let a: ControlPlane;
  let b: ControlPlane;
  let project: Json;
  let sdkKey: string;

  /** A flag on in prod, made through `via` and served by both control planes' evaluation ports. */
  async function liveFlag(via: HttpClient, key: string): Promise<Json> {
    const flag = await createFlag(via, project.id, { key });
    expect((await via.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    for (const cp of [a, b])
      await until(
        () => evaluateOn(cp.evalUrl, sdkKey, key),
        (result) => result?.value === true,
      );
    return flag;
  }

  beforeAll(async () => {
    cluster = await startCluster({ controlPlanes: 2, replicas: 2 });
    [a, b] = cluster.controlPlanes;
    project = await createProject(a.api, 'shop');
    sdkKey = (await a.api.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    // A write through the other makes it take the remote's head on its way, whatever its notices do: the key
    // tests below then see only how keys travel.
    await createProject(b.api, 'ops');
    await until(
      () => b.api.get(`/api/v1/projects/${project.id}`),
      (res) => res.status === 200,
    );
  }, 120_000);
  afterAll(() => cluster?.stop(), 60_000);

  describe('keys, users and sessions', () => {
    it('a key created on one works on the other within a second, and a revoked one stops there within a second', async () => {
      const created = await a.api.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' });
      expect(created.status).toBe(201);
      await withinASecond(
        () => evaluationStatus(b.evalUrl, created.body.key),
        (status) => status === 200,
      );
      const agent = await b.api.post('/api/v1/keys', { kind: 'agent', name: 'deploy-bot' });
      await withinASecond(
        async () => (await httpClient(a.url, agent.body.key).get('/api/v1/projects')).status,
        (status) => status === 200,
      );

      expect((await a.api.delete(`/api/v1/keys/${created.body.id}`)).status).toBe(200);
      await withinASecond(
        () => evaluationStatus(b.evalUrl, created.body.key),
        (status) => status === 401,
      );
      expect((await b.api.delete(`/api/v1/keys/${agent.body.id}`)).status).toBe(200);
      await withinASecond(
        async () => (await httpClient(a.url, agent.body.key).get('/api/v1/projects')).status,
        (status) => status === 401,
      );
    });

    it('a user made on one signs in on the other, and the session made there works on the first', async () => {
      expect((await a.api.post('/api/v1/users', { username: 'dana', name: 'Dana Cole', password: 'dana-password-1' })).status).toBe(201);
      const session = await until(
        () => signIn(b.url, 'dana').catch(() => null),
        (signedIn) => signedIn !== null,
      );
      // At once, before the first hears of it: a browser would drop a cookie answered with a cleared one.
      const me = await fetch(`${a.url}/dashboard/api/session`, { headers: sessionHeaders(a.url, session!) });
      expect(me.status).toBe(200);
      // A write with it on the first, same-origin to that one as a browser behind the load balancer would send.
      const flag = await createFlag(a.api, project.id, { key: 'session-made' });
      const put = await fetch(`${a.url}/api/v1/flags/${flag.id}/environments/dev/config`, {
        method: 'PUT',
        headers: { ...sessionHeaders(a.url, session!), 'content-type': 'application/json' },
        body: JSON.stringify({ rolloutPct: 30 }),
      });
      expect(put.status).toBe(200);
    });

    it('a session made on one works on the other at once, and once signed out on one, a change with it on the other is refused at once', async () => {
      for (let i = 0; i < 5; i++) {
        const session = await signIn(a.url, 'dana');
        const me = await fetch(`${b.url}/dashboard/api/session`, { headers: sessionHeaders(b.url, session) });
        expect(me.status).toBe(200);
        const out = await fetch(`${a.url}/dashboard/api/session`, { method: 'DELETE', headers: sessionHeaders(a.url, session) });
        expect(out.status).toBe(200);
        const create = await fetch(`${b.url}/api/v1/projects`, {
          method: 'POST',
          headers: { ...sessionHeaders(b.url, session), 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Signed out ${i}`, slug: `signed-out-${i}` }),
        });
        expect(create.status).toBe(401);
      }
    });
  });

  describe('changes and kills', () => {
    it("a change through one is served by the other's evaluation port and by a replica following the other within a second", async () => {
      const flag = await createFlag(a.api, project.id, { key: 'banner' });
      const replicaOfB = cluster.replicas[1];
      expect((await httpClient(replicaOfB.url, cluster.adminKey).get('/healthz')).body.following).toBe(b.url);
      expect((await a.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
      await Promise.all(
        [b.evalUrl, replicaOfB.url].map((url) =>
          withinASecond(
            () => evaluateOn(url, sdkKey, 'banner'),
            (result) => result?.value === true,
          ),
        ),
      );
    });

    it('a kill through one is served by the other and by every replica within a second', async () => {
      await liveFlag(a.api, 'search');
      const flag = (await b.api.get(`/api/v1/flags/lookup?projectSlug=shop&key=search`)).body;
      expect((await b.api.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'search errors' })).status).toBe(200);
      await Promise.all(
        [a.evalUrl, ...cluster.replicas.map((r) => r.url)].map((url) =>
          withinASecond(
            () => evaluateOn(url, sdkKey, 'search'),
            (result) => result?.reason === 'killed',
          ),
        ),
      );
    });

    it("flagops import against one's data directory while it runs is served by the other's evaluation port and a replica following the other within a second", async () => {
      await liveFlag(a.api, 'imported');
      const replicaOfA = cluster.replicas[0];
      expect((await httpClient(replicaOfA.url, cluster.adminKey).get('/healthz')).body.following).toBe(a.url);
      const work = await mkdtemp(path.join(os.tmpdir(), 'flagops-cluster-import-'));
      try {
        // The organisation's files as the git host has them, with the flag's prod rollout turned to 0.
        const checkout = path.join(work, 'flags');
        git(work, 'clone', '--quiet', '--config', 'gc.auto=0', '--config', 'maintenance.auto=false', cluster.gitHost.gitdir, checkout);
        const config = path.join(checkout, 'projects/shop/environments/prod/imported.yaml');
        await writeFile(config, (await readFile(config, 'utf8')).replace(/^rolloutPct: 100$/m, 'rolloutPct: 0'));
        const imported = await flagops(['import', checkout, '--org', 'acme', '--replace'], work, {
          FLAGOPS_DATA_DIR: b.dataDir,
          FLAGOPS_DATABASE_URL: cluster.databaseUrl,
          FLAGOPS_GIT_REMOTE: cluster.gitHost.url,
        });
        expect(imported.code, imported.stderr).toBe(0);
        expect(imported.stdout).toMatch(/^imported .* into acme: commit [0-9a-f]{40}$/m);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
      // No control plane polls the git remote here: only B's word through the database brings the import to A.
      await Promise.all(
        [b.evalUrl, a.evalUrl, replicaOfA.url].map((url) =>
          withinASecond(
            () => evaluateOn(url, sdkKey, 'imported'),
            (result) => result?.value === false,
          ),
        ),
      );
    });

    it('two writes with the same expectedVersion through the two: one answers 200, the other 409', async () => {
      const flag = await liveFlag(a.api, 'contested');
      for (let round = 0; round < 3; round++) {
        const version = (await a.api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.version;
        await until(
          () => b.api.get(`/api/v1/flags/${flag.id}`),
          (seen) => seen.body.environments?.prod.version === version,
        );
        const answers = await Promise.all(
          [a, b].map((cp, i) =>
            cp.api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 10 * round + i, expectedVersion: version }),
          ),
        );
        expect(answers.map((r) => r.status).sort(), JSON.stringify(answers.map((r) => r.body))).toEqual([200, 409]);
        expect(answers.find((r) => r.status === 409)?.body.error.code).toBe('version_conflict');
      }
    });
  });

  describe('exactly once', () => {
    it("a trigger made on one kills through the other's hook, and fired at both at once makes one kill", async () => {
      const flag = await liveFlag(a.api, 'payments');
      const trigger = (await a.api.post(`/api/v1/flags/${flag.id}/environments/prod/triggers`, { name: 'alerts' })).body;
      const hookPath = new URL(trigger.url).pathname;
      const fire = (cp: ControlPlane) =>
        fetch(`${cp.url}${hookPath}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ reason: 'error rate' }),
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }));
      // The trigger reaches the other control plane: its hook answers there.
      await until(
        async () => (await b.api.get(`/api/v1/flags/${flag.id}/environments/prod/triggers`)).body.triggers?.length,
        (count) => count === 1,
      );
      const outcomes = await Promise.all([fire(a), fire(b)]);
      expect(outcomes.map((o) => o.status)).toEqual([202, 202]);
      expect(outcomes.map((o) => o.body.outcome)).toContain('killed');
      for (const url of [a.evalUrl, b.evalUrl])
        await until(
          () => evaluateOn(url, sdkKey, 'payments'),
          (result) => result?.reason === 'killed',
        );
      expect(hostActions(cluster.gitHost.gitdir).filter((line) => line === 'kill payments prod')).toHaveLength(1);
      const kills = (await b.api.get(`/api/v1/audit?flagId=${flag.id}&action=kill`)).body.entries;
      expect(kills).toHaveLength(1);
    });

    it('a webhook made on one is delivered once for each change through either, to a receiver that counts', async () => {
      const hook = await receiver();
      const created = await a.api.post('/api/v1/webhooks', { url: hook.url, actions: ['config_update'] });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const webhook = created.body;
      const flag = await liveFlag(a.api, 'hooked');
      const deliveries = async () => (await a.api.get(`/api/v1/webhooks/${webhook.id}/deliveries`)).body.deliveries as Json[];
      const before = (await deliveries()).length;
      const changes = 6;
      for (let i = 0; i < changes; i++) {
        const via = i % 2 === 0 ? a : b;
        expect((await via.api.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { rolloutPct: i + 1 })).status).toBe(200);
      }
      // The flag's own first change may still be on its way when `before` is read: wait until the log and the
      // receiver agree (a delivery made twice would keep them apart for good).
      const delivered = await until(
        deliveries,
        (list) => list.length >= before + changes && list.every((d) => d.status === 'delivered') && list.length === hook.received.length,
      );
      expect(delivered).toHaveLength(hook.received.length);
      const entryIds = hook.received.map((r) => JSON.parse(r.body).entry.id as string);
      expect(new Set(entryIds).size).toBe(entryIds.length);
      expect(new Set(hook.received.map((r) => r.headers['x-flagops-delivery'])).size).toBe(hook.received.length);
    });

    it('evaluations counted on both evaluation ports and a replica land once in the stats of each', async () => {
      // Not evaluated before the count begins: a flag off everywhere counts as `off`, served as soon as it exists.
      const flag = await createFlag(a.api, project.id, { key: 'counted' });
      const where = [a.evalUrl, b.evalUrl, cluster.replicas[0].url];
      for (const url of where)
        await until(
          async () => JSON.stringify((await httpClient(url, sdkKey).get('/v1/snapshot')).body),
          (snapshot) => snapshot.includes('"counted"'),
        );
      for (const [i, url] of where.entries()) for (let n = 0; n <= i; n++) expect(await evaluateOn(url, sdkKey, 'counted')).toBeDefined();
      const total = 1 + 2 + 3;
      for (const cp of [a, b])
        await until(
          () => countedEvaluations(cp.url, cluster.adminKey, flag.id, 'prod'),
          (count) => count >= total,
        );
      // A later evaluation arrives after any duplicate of the earlier ones would have: the sum stays exact.
      await evaluateOn(b.evalUrl, sdkKey, 'counted');
      for (const cp of [a, b]) {
        const counted = await until(
          () => countedEvaluations(cp.url, cluster.adminKey, flag.id, 'prod'),
          (count) => count >= total + 1,
        );
        expect(counted).toBe(total + 1);
      }
    });
  });
});
