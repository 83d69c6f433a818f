import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { until } from '../helpers/deadlines.js';
import type { Json } from '../helpers/http-client.js';
import { POSTGRES_MISSING } from '../helpers/postgres.js';
import { receiver } from '../webhooks/webhook-harness.js';
import { type Cluster, type ControlPlane, startCluster } from './cluster.js';
import { hostActions, hostFile } from './cluster-client.js';

/** How long a delivery that should not come is waited for, once the ones that should have come. */
const STRAY_DELIVERY_WAIT_MS = 3_000;
/** How long the git host stays down after the kills are answered. */
const OUTAGE_MS = 1_500;

describe.skipIf(POSTGRES_MISSING !== null)('three control planes kill at once while the git host is down', () => {
  let cluster: Cluster;
  let controlPlanes: ControlPlane[];
  let a: ControlPlane;
  let project: Json;

  /** Waits until `cp` finds the git host answering and holds no kill it lacks. */
  const reachesTheHost = (cp: ControlPlane) =>
    until(
      async () => (await cp.api.get('/healthz')).body.gitRemote,
      (remote) => remote.reachable === true && remote.holdingKills === false,
    );

  beforeAll(async () => {
    cluster = await startCluster({ controlPlanes: 3 });
    controlPlanes = cluster.controlPlanes;
    a = controlPlanes[0];
    project = await createProject(a.api, 'shop');
  }, 120_000);
  afterAll(() => cluster?.stop(), 60_000);

  it('a webhook gets each kill the audit trail keeps once, under its id there, and no kill the rebuild dropped', async () => {
    const hook = await receiver();
    expect((await a.api.post('/api/v1/webhooks', { url: hook.url, actions: ['kill'] })).status).toBe(201);
    const delivered = (key: string) => hook.received.map((r) => JSON.parse(r.body).entry as Json).filter((entry) => entry.flagKey === key);
    // Which control plane's kill reaches the host first, and which were delivered before, varies: a few rounds.
    for (const key of ['checkout', 'search', 'banner']) {
      const flag = await createFlag(a.api, project.id, { key });
      for (const cp of controlPlanes)
        await until(
          () => cp.api.get(`/api/v1/flags/${flag.id}`),
          (res) => res.status === 200,
        );
      const before = hostActions(cluster.gitHost.gitdir);

      await cluster.gitHost.down();
      try {
        const kills = await Promise.all(
          controlPlanes.map((cp) => cp.api.post(`/api/v1/flags/${flag.id}/environments/dev/kill`, { reason: `second ${cp.name}` })),
        );
        expect(kills.map((r) => r.status)).toEqual([200, 200, 200]);
        // Long enough for each control plane to have made the others' kills and read its audit trail.
        await sleep(OUTAGE_MS);
      } finally {
        await cluster.gitHost.up();
      }
      // The three kills of one environment are one on the host (each of the others finds it killed there).
      await until(
        async () => hostActions(cluster.gitHost.gitdir).slice(before.length),
        (added) => added.length >= 1,
      );
      for (const cp of controlPlanes) await reachesTheHost(cp);
      expect(hostActions(cluster.gitHost.gitdir).slice(before.length)).toEqual([`kill ${key} dev`]);
      const trails = await Promise.all(
        controlPlanes.map((cp) =>
          until(
            async () => (await cp.api.get(`/api/v1/audit?flagId=${flag.id}&action=kill`)).body.entries as Json[],
            (entries) => entries.length >= 1,
          ),
        ),
      );
      const kept = trails[0].map((entry) => entry.id);
      for (const trail of trails) expect(trail.map((entry) => entry.id)).toEqual(kept);

      await until(
        async () => delivered(key).length,
        (n) => n >= kept.length,
      );
      await sleep(STRAY_DELIVERY_WAIT_MS);
      expect(delivered(key).map((entry) => entry.id)).toEqual(kept);
    }
  });

  it('a kill, its clear and a kill again, each through the next control plane once the one before is answered: each answer holds everywhere', async () => {
    const flag = await createFlag(a.api, project.id, { key: 'relay' });
    for (const cp of controlPlanes)
      await until(
        () => cp.api.get(`/api/v1/flags/${flag.id}`),
        (res) => res.status === 200,
      );
    const route = `/api/v1/flags/${flag.id}/environments/staging`;
    await cluster.gitHost.down();
    try {
      for (let round = 0; round < 6; round++) {
        const [first, second, third] = [0, 1, 2].map((i) => controlPlanes[(round + i) % 3]);
        const killed = await first.api.post(`${route}/kill`, { reason: `first ${round}` });
        expect(killed.status).toBe(200);
        expect(killed.body).toMatchObject({ alreadyKilled: false });
        // The clear, answered elsewhere right after: not taken as a clear of nothing there.
        const cleared = await second.api.put(`${route}/config`, { clearKill: true });
        expect(cleared.status).toBe(200);
        expect(cleared.body.environments.staging.killed, `round ${round}: the clear through ${second.name}`).toBe(false);
        // And the kill after it: neither "killed already" by the first, nor undone later by the clear.
        const again = await third.api.post(`${route}/kill`, { reason: `again ${round}` });
        expect(again.status).toBe(200);
        expect(again.body, `round ${round}: the kill through ${third.name}`).toMatchObject({ alreadyKilled: false });
        for (const cp of controlPlanes)
          await until(
            async () => (await cp.api.get(`/api/v1/flags/${flag.id}`)).body.environments.staging,
            (env) => env.killed === true && env.killReason === `again ${round}`,
          );
        // Cleared again (through the next one) before the next round.
        expect((await second.api.put(`${route}/config`, { clearKill: true })).body.environments.staging.killed).toBe(false);
        for (const cp of controlPlanes)
          await until(
            async () => (await cp.api.get(`/api/v1/flags/${flag.id}`)).body.environments.staging,
            (env) => env.killed === false,
          );
      }
    } finally {
      await cluster.gitHost.up();
    }
    for (const cp of controlPlanes) await reachesTheHost(cp);
  });

  it.each(['kill', 'clear'])(
    'kills and clears through every control plane at once, then a last %s answered once they are: the last holds once the host is back',
    async (last) => {
      const flag = await createFlag(a.api, project.id, { key: `last-${last}` });
      for (const cp of controlPlanes)
        await until(
          () => cp.api.get(`/api/v1/flags/${flag.id}`),
          (res) => res.status === 200,
        );
      const route = `/api/v1/flags/${flag.id}/environments/prod`;
      const killOrClear = (cp: ControlPlane, kill: boolean, reason: string) =>
        kill ? cp.api.post(`${route}/kill`, { reason }) : cp.api.put(`${route}/config`, { clearKill: true });
      await cluster.gitHost.down();
      try {
        await Promise.all(
          controlPlanes.map(async (cp, i) => {
            for (let n = 0; n < 8; n++) {
              // Kills and clears in an order of each control plane's own, a few milliseconds apart.
              const answer = await killOrClear(cp, (n + i) % 3 !== 0, `${cp.name} ${n}`);
              expect(answer.status).toBe(200);
              await sleep((n * 37 + i * 11) % 60);
            }
          }),
        );
        await sleep(500);
        const final = await killOrClear(a, last === 'kill', 'the last');
        expect(final.status).toBe(200);
        for (const cp of controlPlanes)
          await until(
            async () => (await cp.api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.killed,
            (killed) => killed === (last === 'kill'),
          );
      } finally {
        await cluster.gitHost.up();
      }
      for (const cp of controlPlanes) await reachesTheHost(cp);
      // Every control plane serves the last answer still, and so does the host's main.
      await sleep(1_000);
      for (const cp of controlPlanes) {
        const prod = (await cp.api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod;
        expect(prod.killed, `${cp.name} after the host is back`).toBe(last === 'kill');
      }
      const hostKills = hostFile(cluster.gitHost.gitdir, 'projects/shop/environments/prod/kills.yaml') ?? '';
      expect(hostKills.includes(`${flag.key}:`)).toBe(last === 'kill');
    },
    120_000,
  );
});
