/**
 * startTestService(): the whole flagops service (control plane + evaluation API, src/service.ts) on free
 * loopback ports, with a fresh temp FLAGOPS_DATA_DIR and bootstrap keys, for tests over real HTTP.
 *
 * ```ts
 * const svc = await startTestService();                       // one organisation, "acme"
 * const res = await fetch(`${svc.controlUrl}/api/v1/projects`, { headers: { authorization: `Bearer ${svc.admin}` } });
 * await svc.stop();                                           // stops the service and deletes the data dir
 * ```
 *
 * - `orgs: ['acme', 'globex']` bootstraps an admin and an agent key in each (`svc.orgs.globex.admin`);
 *   `svc.admin` / `svc.agent` are the first organisation's.
 * - `svc.gitdir(org)` is the organisation's bare flags repository (`<dataDir>/repos/<org>.git`), for git CLI pushes.
 * - `svc.restart()` stops and starts again on the same data dir and keys (the ports change: read the URLs again).
 * - Logs are dropped unless `logLevel` is given (they go to stderr then) or a `logger` is.
 * - `trustProxy` is FLAGOPS_TRUST_PROXY (reverse proxies whose X-Forwarded-For is believed).
 * - `webhooks: { retry, limits }` sets webhook retries and bounds, so tests reach them with a few changes.
 * - `databaseUrl` is FLAGOPS_DATABASE_URL (a database of test/helpers/postgres.ts): the state is in PostgreSQL.
 * - `prometheusUrl` is FLAGOPS_PROMETHEUS_URL (a server of test/helpers/prometheus.ts): guards can be checked.
 * - `oidc` is single sign-on's settings (parseOidcSettings of FLAGOPS_OIDC_*; test/helpers/oidc-provider.mjs is a provider).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Clock } from '../../src/features/schedule/clock.js';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import type { Config } from '../../src/foundations/config/config.js';
import { createLogger, type Logger, type LogLevel, silentLogger } from '../../src/foundations/log/logger.js';
import { type Service, type ServiceOptions, startService } from '../../src/service.js';

export interface TestOrg {
  name: string;
  /** A bootstrap admin key (`svc_adm_…`) of the organisation. */
  admin: string;
  /** A bootstrap agent key (`svc_agt_…`) of the organisation. */
  agent: string;
}

export interface TestServiceOptions {
  /** Organisations to bootstrap, each with one admin and one agent key. Default `['acme']`. */
  orgs?: string[];
  /** FLAGOPS_PLAN_PROJECT_LIMIT. Default 25, as in production. */
  planProjectLimit?: number;
  /** Print the service's logs at this level (default: none). */
  logLevel?: LogLevel;
  /** Keep the data dir after stop() (default: deleted). */
  keepDataDir?: boolean;
  /** FLAGOPS_GIT_MAX_PROCESSES and FLAGOPS_GIT_QUEUE. Default 4 and 16, as in production. */
  gitProcesses?: { max: number; queue: number };
  /** Where the service logs (default: nowhere, or stderr with `logLevel`). */
  logger?: Logger;
  /** FLAGOPS_TRUST_PROXY. Default 0. */
  trustProxy?: number;
  /** What time it is for the scheduler and the control plane (default: the wall clock). */
  clock?: Clock;
  /** FLAGOPS_METRICS and FLAGOPS_METRICS_TOKEN. Default: on, no token. */
  metrics?: Config['metrics'];
  /** Webhook retries and bounds (default: as in production). */
  webhooks?: ServiceOptions['webhooks'];
  /** FLAGOPS_DATABASE_URL. Default: none, the state is files in the data dir. */
  databaseUrl?: string;
  /** FLAGOPS_PROMETHEUS_URL. Default: none (guards are refused through the API). */
  prometheusUrl?: string;
  /** FLAGOPS_OIDC_*: single sign-on, as loadConfig reads it (parseOidcSettings). Default: none. */
  oidc?: Config['oidc'];
  /** More FLAGOPS_BOOTSTRAP_KEYS entries (hand-made keys), after each organisation's admin and agent key. */
  moreBootstrapKeys?: Config['bootstrapKeys'];
}

export interface TestService {
  controlUrl: string;
  evalUrl: string;
  dataDir: string;
  orgs: Record<string, TestOrg>;
  /** The first organisation's admin and agent keys. */
  admin: string;
  agent: string;
  /** The running service, for what HTTP cannot reach (keys, repos, holder). */
  service: Service;
  gitdir(org?: string): string;
  /** Stops and starts the service on the same data dir and keys; controlUrl and evalUrl change. */
  restart(): Promise<void>;
  /** Stops the service and deletes the data dir (unless keepDataDir), also when stopping fails. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const orgNames = options.orgs ?? ['acme'];
  if (orgNames.length === 0) throw new Error('startTestService needs at least one organisation');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-svc-'));
  const orgs: Record<string, TestOrg> = {};
  for (const name of orgNames) orgs[name] = { name, admin: generateKey('admin'), agent: generateKey('agent') };
  const config: Config = {
    dataDir,
    host: '127.0.0.1',
    controlPort: 0,
    evalPort: 0,
    bootstrapKeys: [
      ...Object.values(orgs).flatMap((o) => [
        { org: o.name, key: o.admin },
        { org: o.name, key: o.agent },
      ]),
      ...(options.moreBootstrapKeys ?? []),
    ],
    planProjectLimit: options.planProjectLimit ?? 25,
    logLevel: options.logLevel ?? 'error',
    ...(options.gitProcesses ? { gitProcesses: options.gitProcesses } : {}),
    trustProxy: options.trustProxy ?? 0,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
    ...(options.oidc ? { oidc: options.oidc } : {}),
    ...(options.prometheusUrl ? { prometheusUrl: options.prometheusUrl } : {}),
  };
  const logger = options.logger ?? (options.logLevel ? createLogger({ level: options.logLevel }) : silentLogger);

  let service: Service;
  try {
    service = await startService(config, logger, { clock: options.clock, webhooks: options.webhooks });
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  let stopped = false;
  const first = orgs[orgNames[0]];
  const handle: TestService = {
    controlUrl: service.controlUrl,
    evalUrl: service.evalUrl,
    dataDir,
    orgs,
    admin: first.admin,
    agent: first.agent,
    service,
    gitdir: (org = first.name) => service.repos.gitdirOf(org),
    async restart() {
      await handle.service.stop();
      handle.service = await startService(config, logger, { clock: options.clock, webhooks: options.webhooks });
      handle.controlUrl = handle.service.controlUrl;
      handle.evalUrl = handle.service.evalUrl;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await handle.service.stop();
      } finally {
        // Also when stopping failed (a test broke the repository, a restart did not start): the test fails, no dir stays.
        if (!options.keepDataDir) await rm(dataDir, { recursive: true, force: true });
      }
    },
  };
  return handle;
}
