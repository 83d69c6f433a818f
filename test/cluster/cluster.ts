/**
 * Several control planes as one service, for end-to-end tests, benchmarks and the fault run: a PostgreSQL
 * cluster of its own, a git host on loopback, N control planes (each its own process and data directory, on one
 * database and one git remote, with the same bootstrap admin key) and M replicas (`flagops eval --upstream
 * <cp>,<cp>…`), all on free loopback ports.
 *
 * ```ts
 * const cluster = await startCluster({ controlPlanes: 2, replicas: 2 });
 * const [a, b] = cluster.controlPlanes;
 * await a.api.post('/api/v1/projects', { name: 'Shop', slug: 'shop' });
 * await a.sigkill(); await a.start();                  // same port and data directory
 * await cluster.gitHost.down(); await cluster.postgres.stopServer();
 * await cluster.stop();                                // whatever the test did: SIGKILLs what a SIGTERM leaves
 * ```
 *
 * Control planes poll the git remote only when asked (`gitPollSeconds`, default 0): what reaches one from
 * another does so by the service's own notices, which is what the tests prove.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { type HttpClient, httpClient } from '../helpers/http-client.js';
import { PostgresCluster } from '../helpers/postgres.js';
import { startGitServer } from '../remote/git-server.js';
import { bundleMain, freePort, type ServiceProcess, startProcess, waitHealthy } from '../service/service-process.js';

export type GitHost = Awaited<ReturnType<typeof startGitServer>>;

export interface ClusterOptions {
  controlPlanes: number;
  /** Replicas started with every control plane in `--upstream`, each list beginning at another one. */
  replicas?: number;
  /** The service's and the CLI's entry files (`dist/main.js`, `dist/apps/cli/main.js`); bundled from source when absent. */
  entries?: { service: string; cli: string };
  /** FLAGOPS_GIT_POLL_SECONDS of every control plane. */
  gitPollSeconds?: number;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** More settings for every control plane (FLAGOPS_PROMETHEUS_URL, …). */
  env?: Record<string, string>;
}

export interface ControlPlane {
  name: string;
  url: string;
  evalUrl: string;
  dataDir: string;
  /** The control-plane API with the bootstrap admin key. */
  api: HttpClient;
  process: ServiceProcess;
  /** Starts it (again) on its ports and data directory; resolves once /healthz answers 200. */
  start(): Promise<void>;
  sigkill(): Promise<void>;
  readonly running: boolean;
}

export interface Replica {
  url: string;
  dataDir: string;
  process: ServiceProcess;
}

export interface Cluster {
  adminKey: string;
  databaseUrl: string;
  postgres: PostgresCluster;
  gitHost: GitHost;
  controlPlanes: ControlPlane[];
  replicas: Replica[];
  /** A replica following `upstreams` in that order. */
  addReplica(upstreams: ControlPlane[]): Promise<Replica>;
  /** Stops everything: SIGTERM, SIGKILL for what has not exited within 5 s, then the database and the git host. */
  stop(): Promise<void>;
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'flagops-cluster-'));
  const processes: ServiceProcess[] = [];
  const bundles: Array<{ remove: () => Promise<void> }> = [];
  let postgres: PostgresCluster | undefined;
  let gitHost: GitHost | undefined;

  const stop = async () => {
    for (const p of processes) if (alive(p)) p.child.kill('SIGTERM');
    await Promise.all(processes.map((p) => Promise.race([p.exit, new Promise((r) => setTimeout(r, 5_000))])));
    for (const p of processes) if (alive(p)) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exit));
    // Each part goes even when another fails to (a git host's removal racing its gc left the root, the database's
    // dir and the host's behind); the first failure is thrown once everything is gone.
    const settled = await Promise.allSettled([
      postgres?.destroy(),
      gitHost?.stop(),
      ...bundles.map((b) => b.remove()),
      rm(root, { recursive: true, force: true }),
    ]);
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
  };

  try {
    let entries = options.entries;
    if (entries === undefined) {
      const [service, cli] = await Promise.all([bundleMain(), bundleMain({ source: 'src/apps/cli/main.ts' })]);
      bundles.push(service, cli);
      entries = { service: service.entry, cli: cli.entry };
    }
    [postgres, gitHost] = await Promise.all([PostgresCluster.start(), startGitServer()]);
    const databaseUrl = await postgres.createDatabase();
    const adminKey = generateKey('admin');
    const { service: serviceEntry, cli: cliEntry } = entries;

    const controlPlane = async (name: string): Promise<ControlPlane> => {
      const [port, evalPort] = [await freePort(), await freePort()];
      const url = `http://127.0.0.1:${port}`;
      const env = {
        FLAGOPS_DATA_DIR: path.join(root, name),
        FLAGOPS_CONTROL_PORT: String(port),
        FLAGOPS_EVAL_PORT: String(evalPort),
        FLAGOPS_BOOTSTRAP_KEYS: `acme:${adminKey}`,
        FLAGOPS_DATABASE_URL: databaseUrl,
        FLAGOPS_GIT_REMOTE: (gitHost as GitHost).url,
        FLAGOPS_GIT_POLL_SECONDS: String(options.gitPollSeconds ?? 0),
        FLAGOPS_LOG_LEVEL: options.logLevel ?? 'error',
        ...options.env,
      };
      const cp: ControlPlane = {
        name,
        url,
        evalUrl: `http://127.0.0.1:${evalPort}`,
        dataDir: env.FLAGOPS_DATA_DIR,
        api: httpClient(url, adminKey),
        process: undefined as unknown as ServiceProcess,
        async start() {
          cp.process = startProcess(serviceEntry, env);
          processes.push(cp.process);
          await waitHealthy(`${url}/healthz`, cp.process.child, 60_000);
        },
        async sigkill() {
          cp.process.child.kill('SIGKILL');
          await cp.process.exit;
        },
        get running() {
          return alive(cp.process);
        },
      };
      return cp;
    };

    const controlPlanes = await Promise.all(Array.from({ length: options.controlPlanes }, (_, i) => controlPlane(`cp${i + 1}`)));
    await Promise.all(controlPlanes.map((cp) => cp.start()));

    const replicas: Replica[] = [];
    let replicaCount = 0;
    const addReplica = async (upstreams: ControlPlane[]): Promise<Replica> => {
      const index = replicaCount++;
      const dataDir = path.join(root, `replica${index + 1}`);
      const port = await freePort();
      const env = { FLAGOPS_REPLICA_TOKEN: adminKey, FLAGOPS_DATA_DIR: dataDir, FLAGOPS_LOG_LEVEL: options.logLevel ?? 'error' };
      const args = ['eval', '--upstream', upstreams.map((cp) => cp.url).join(','), '--port', String(port)];
      const replica = { url: `http://127.0.0.1:${port}`, dataDir, process: startProcess(cliEntry, env, args) };
      processes.push(replica.process);
      replicas[index] = replica;
      await waitHealthy(`${replica.url}/healthz`, replica.process.child, 60_000);
      return replica;
    };
    // Replica i begins its list at control plane i, so the replicas between them follow every control plane.
    await Promise.all(
      Array.from({ length: options.replicas ?? 0 }, (_, i) =>
        addReplica(controlPlanes.map((_, j) => controlPlanes[(i + j) % controlPlanes.length])),
      ),
    );
    return { adminKey, databaseUrl, postgres, gitHost, controlPlanes, replicas, addReplica, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function alive(p: ServiceProcess | undefined): p is ServiceProcess {
  return p !== undefined && p.child.exitCode === null && p.child.signalCode === null;
}
