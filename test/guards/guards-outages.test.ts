import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, type ControlPlane, startCluster } from '../cluster/cluster.js';
import { hostActions } from '../cluster/cluster-client.js';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { until } from '../helpers/deadlines.js';
import type { Json } from '../helpers/http-client.js';
import { POSTGRES_MISSING } from '../helpers/postgres.js';
import { MetricsExporter, PROMETHEUS_MISSING, PrometheusServer } from '../helpers/prometheus.mjs';
import { sample } from '../metrics/prometheus-text.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const at = (msFromNow: number) => new Date(Math.ceil((Date.now() + msFromNow) / 1000) * 1000).toISOString();

describe.skipIf(POSTGRES_MISSING !== null || PROMETHEUS_MISSING !== null)(
  'a guarded rollout on two control planes, through outages',
  () => {
    let exporter: MetricsExporter;
    let prometheus: PrometheusServer;
    let cluster: Cluster;
    let project: Json;

    beforeAll(async () => {
      exporter = await MetricsExporter.start();
      prometheus = await PrometheusServer.start([`127.0.0.1:${exporter.port}`]);
      cluster = await startCluster({ controlPlanes: 2, logLevel: 'warn', env: { FLAGOPS_PROMETHEUS_URL: prometheus.url } });
      project = await createProject(cluster.controlPlanes[0].api, 'shop');
    }, 120_000);
    afterAll(async () => {
      await cluster?.stop();
      await prometheus?.stop();
      await exporter?.close();
    }, 60_000);

    /** A flag `key` rolled out at 10 % with a guard every second, watched by both control planes; its series passes. */
    async function guardedRollout(key: string) {
      const [a, b] = cluster.controlPlanes;
      const series = `checkout_error_ratio{flag="${key}"}`;
      exporter.set(series, 0.01);
      await prometheus.waitFor(series, (v) => v === 0.01);
      const flag = await createFlag(a.api, project.id, { key });
      const schedule = [{ at: at(600_000), set: { rolloutPct: 50 }, guard: { query: series, max: 0.05, intervalSeconds: 1 } }];
      const path = `/api/v1/flags/${flag.id}/environments/prod/config`;
      expect((await a.api.put(path, { enabled: true, rolloutPct: 10, schedule })).status).toBe(200);
      await until(
        async () => (await b.api.get(`/api/v1/flags/${flag.id}`)).body.environments?.prod?.schedule?.length,
        (n) => n === 1,
      );
      return { flag, series };
    }

    /** `prod` of the flag as `cp` serves it. */
    const prodOn = async (cp: ControlPlane, flag: Json) => (await cp.api.get(`/api/v1/flags/${flag.id}`)).body.environments?.prod as Json;

    /** The stops of the flag `key` counted, summed over the control planes. */
    async function stopsCounted(key: string): Promise<number> {
      let total = 0;
      for (const cp of cluster.controlPlanes) {
        const text = await (await fetch(`${cp.url}/metrics`)).text();
        total +=
          sample(text, 'flagops_guard_stops_total', { org: 'acme', project: 'shop', environment: 'prod', flag: key, reason: 'breach' }) ??
          0;
      }
      return total;
    }

    /** The `guarded rollout stopped` log lines of every control plane about the flag `key`. */
    const stopsLogged = (key: string) =>
      cluster.controlPlanes
        .flatMap((cp) => cp.process.stderr.join('').split('\n'))
        .filter((line) => line.includes('"msg":"guarded rollout stopped"') && line.includes(`"flag":"${key}"`));

    it('while the git host is down, the guard kills at once; once it is back, both commits reach it as guard_failed and the stop is counted once', async () => {
      const [a, b] = cluster.controlPlanes;
      const { flag, series } = await guardedRollout('remote-down');

      await cluster.gitHost.down();
      try {
        exporter.set(series, 0.5);
        for (const cp of [a, b])
          await until(
            () => prodOn(cp, flag),
            (prod) => prod.killed === true,
            15_000,
          );
        // Several intervals with the host down: each tries to finish the stop.
        await sleep(4_000);
      } finally {
        await cluster.gitHost.up();
      }
      for (const cp of [a, b])
        await until(
          () => prodOn(cp, flag),
          (prod) => prod.killed === true && prod.schedule.length === 0,
          30_000,
        );
      await until(
        async () => hostActions(cluster.gitHost.gitdir).filter((line) => line.endsWith(' remote-down prod')),
        (lines) => lines.filter((l) => l.startsWith('guard_failed')).length >= 2,
        15_000,
      );
      await sleep(3_000);
      // The kill keeps the guard's action whichever control plane's copy of it reached the host.
      const actions = hostActions(cluster.gitHost.gitdir).filter((line) => line.endsWith(' remote-down prod'));
      expect(actions.filter((l) => !l.startsWith('config_update'))).toEqual([
        'guard_failed remote-down prod',
        'guard_failed remote-down prod',
      ]);
      // One stop: counted and logged by the control plane whose removal reached the host.
      expect(await stopsCounted('remote-down')).toBe(1);
      expect(stopsLogged('remote-down')).toHaveLength(1);
    }, 120_000);

    it('while the database is down, the guard is still checked and kills the flag; the stop is counted once', async () => {
      const [a, b] = cluster.controlPlanes;
      const { flag, series } = await guardedRollout('database-down');

      await cluster.postgres.stopServer();
      try {
        exporter.set(series, 0.5);
        // Killed on both, and on the git host, while the database is still down.
        for (const cp of [a, b])
          await until(
            () => prodOn(cp, flag),
            (prod) => prod.killed === true,
            15_000,
          );
        await until(
          async () => hostActions(cluster.gitHost.gitdir).filter((line) => line === 'guard_failed database-down prod'),
          (lines) => lines.length >= 1,
          10_000,
        );
        await sleep(3_000);
      } finally {
        await cluster.postgres.startServer();
      }
      for (const cp of [a, b])
        await until(
          () => prodOn(cp, flag),
          (prod) => prod.killed === true && prod.schedule.length === 0,
          30_000,
        );
      await sleep(3_000);
      const actions = hostActions(cluster.gitHost.gitdir).filter((line) => line.endsWith(' database-down prod'));
      expect(actions.filter((l) => !l.startsWith('config_update'))).toEqual([
        'guard_failed database-down prod',
        'guard_failed database-down prod',
      ]);
      expect(await stopsCounted('database-down')).toBe(1);
      expect(stopsLogged('database-down')).toHaveLength(1);
    }, 120_000);
  },
);
