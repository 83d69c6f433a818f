import path from 'node:path';
import { AuthGuard } from '../../foundations/auth/auth-guard.js';
import type { MetricsSettings } from '../../foundations/config/config.js';
import { trustProxies } from '../../foundations/http/client-address.js';
import type { Logger } from '../../foundations/log/logger.js';
import { EvaluationTotals } from '../../foundations/metrics/evaluation-totals.js';
import { instrumentApp } from '../../foundations/metrics/metrics-http.js';
import { ServerMetrics } from '../../foundations/metrics/server-metrics.js';
import { registerReplicaFamilies, registerServingFamilies } from '../../foundations/metrics/service-families.js';
import { bindPort } from '../../foundations/process/bind-port.js';
import { DataDirLock } from '../../foundations/process/data-dir-lock.js';
import { StreamHub } from '../eval-server/stream.js';
import { createReplicaApp, replicaFastPath } from './replica-app.js';
import { ReplicaCounts } from './replica-counts.js';
import { replicaHealth, replicaHealthFor } from './replica-health.js';
import { ReplicaHolder } from './replica-holder.js';
import { ReplicaKeys } from './replica-keys.js';
import { ReplicaSync, type SyncOptions } from './replica-sync.js';
import { SnapshotFiles } from './snapshot-files.js';
import { UpstreamClient } from './upstream-client.js';
import { UpstreamRotation } from './upstream-rotation.js';

export interface ReplicaOptions extends SyncOptions {
  /** The control planes' origins, e.g. http://control-a.internal:4000: it follows the first, and fails over in order. */
  upstreams: readonly string[];
  /** An admin key of the organisation whose flags this replica serves. */
  token: string;
  host: string;
  port: number;
  dataDir: string;
  /** FLAGOPS_TRUST_PROXY: reverse proxies in front of the replica whose X-Forwarded-For is believed (default 0). */
  trustProxy?: number;
  /** How often evaluation counts are forwarded (default 2 s, so stats show them within 5 s). */
  countsIntervalMs?: number;
  /**
   * How long start waits for the first sync before serving what is on disk (default 5 s); no longer than it
   * takes every upstream to fail once when there is something on disk to serve.
   */
  startTimeoutMs?: number;
  /** Aborted when the replica is asked to stop while it starts (SIGTERM): start waits for the first sync no longer. */
  stopSignal?: AbortSignal;
  /** FLAGOPS_METRICS and FLAGOPS_METRICS_TOKEN (default: metrics on, /metrics open). */
  metrics?: MetricsSettings;
  logger: Logger;
}

export interface Replica {
  url: string;
  holder: ReplicaHolder;
  counts: ReplicaCounts;
  stop(): Promise<void>;
}

/**
 * An evaluation replica (docs/deployment.md): the evaluation API, fed by the control plane it follows, one of
 * `upstreams` at a time. Like the service, one replica per data directory, and its port is bound before anything
 * is written there.
 */
export async function startReplica(options: ReplicaOptions): Promise<Replica> {
  const { logger } = options;
  const rotation = new UpstreamRotation(options.upstreams, options);
  const lockOptions = { what: 'flagops eval replica', setting: '--data-dir (or FLAGOPS_DATA_DIR)', logger };
  DataDirLock.assertFree(options.dataDir, lockOptions);
  const bound = await bindPort(
    options.host,
    options.port,
    { port: '--port (or FLAGOPS_EVAL_PORT)', host: '--host (or FLAGOPS_HOST)' },
    { name: 'replica', logger },
  );
  let lock: DataDirLock;
  try {
    lock = DataDirLock.acquire(options.dataDir, lockOptions);
  } catch (err) {
    await bound.running.close();
    throw err;
  }
  const upstream = new UpstreamClient({ origin: rotation.current, token: options.token });
  const holder = new ReplicaHolder();
  // What a stop could not deliver is kept in the data directory and sent after the next start.
  const counts = new ReplicaCounts(upstream, logger, Date.now, path.join(options.dataDir, 'replica', 'unsent-counts.json'));
  let sync: ReplicaSync | undefined;
  let hub: StreamHub | undefined;
  try {
    const keys = await ReplicaKeys.open(options.dataDir, upstream, logger);
    await counts.restore();
    const files = new SnapshotFiles(options.dataDir);
    sync = new ReplicaSync(upstream, rotation, holder, files, keys, logger, options);
    hub = new StreamHub(holder, { logger });
    const streams = hub;
    keys.onRetained(() => streams.recheck());

    await sync.start();
    if (!(await sync.synced(options.startTimeoutMs ?? 5_000, options.stopSignal)) && !options.stopSignal?.aborted) {
      logger.warn('no control plane reachable at start; serving the snapshots saved on disk', {
        upstreams: options.upstreams,
        views: holder.entries().length,
      });
    }
    counts.start(options.countsIntervalMs ?? 2_000);

    const status = sync.status;
    const health = replicaHealthFor({ metricsToken: options.metrics?.token, replicaToken: options.token }, () =>
      replicaHealth(
        status,
        holder.entries().length,
        holder.lostViews().map((v) => `${v.projectId}/${v.environment}`),
      ),
    );
    const guard = new AuthGuard({ logger, trustedProxies: options.trustProxy ?? 0 });
    const metrics = options.metrics?.enabled === false ? undefined : new ServerMetrics('replica', options.metrics?.token);
    const totals = metrics && new EvaluationTotals();
    const timer = metrics && ((route: string, status: number, startedAt: number) => metrics.observeRequest(route, status, startedAt));
    const appDeps = { holder, keys, counts, hub, guard, logger, health, totals, timer };
    const app = createReplicaApp(appDeps);
    trustProxies(app, options.trustProxy ?? 0);
    if (metrics && totals) {
      totals.register(metrics.registry);
      const streams = hub;
      registerServingFamilies(metrics.registry, { snapshots: () => holder.entries(), streamClients: () => streams.size });
      registerReplicaFamilies(metrics.registry, status);
      bound.serve(instrumentApp(app, metrics), replicaFastPath(appDeps));
    } else {
      bound.serve(app, replicaFastPath(appDeps));
    }
  } catch (err) {
    hub?.close();
    await bound.running.close();
    await sync?.close();
    await counts.close();
    lock.release();
    throw err;
  }
  const server = bound.running;
  logger.info('replica started', { url: server.url, upstreams: options.upstreams });

  let stopping: Promise<void> | undefined;
  return {
    url: server.url,
    holder,
    counts,
    stop: () => {
      stopping ??= (async () => {
        hub.close();
        await server.close();
        await sync.close();
        await counts.close();
        lock.release();
      })();
      return stopping;
    },
  };
}
