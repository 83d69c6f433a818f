import path from 'node:path';
import type Router from '@koa/router';
import { createControlApp } from './apps/control-plane/control-app.js';
import { webhookRoutes } from './apps/control-plane/webhooks.js';
import { createDashboard } from './apps/dashboard/dashboard.js';
import { createEvalApp, evalFastPath } from './apps/eval-server/eval-app.js';
import { SnapshotHolder } from './apps/eval-server/snapshot-holder.js';
import { attachStreamHub } from './apps/eval-server/stream.js';
import { gitHttpRoutes } from './apps/git-http/git-http-routes.js';
import { GitRunner } from './apps/git-http/git-runner.js';
import { replicaUpstream } from './apps/replica/upstream/replica-routes.js';
import { AuditRegistry } from './features/audit/audit-registry.js';
import { GuardMonitor } from './features/guards/guard-monitor.js';
import { FlagHealthService } from './features/health/flag-health-service.js';
import { HealthWatcher } from './features/health/health-watcher.js';
import { KillSwitch } from './features/kill/kill-switch.js';
import { forgetFollowedRemote, recordFollowedRemote } from './features/remote/followed-remote.js';
import type { RemoteMode } from './features/remote/remote-mode.js';
import { type Clock, systemClock } from './features/schedule/clock.js';
import { Scheduler } from './features/schedule/scheduler.js';
import { EvaluationCounter, statsScope } from './features/stats/evaluation-counter.js';
import { TrackNameBound } from './features/stats/event-counts.js';
import { RETENTION_HOURS } from './features/stats/hours.js';
import { sampleRatioVerdicts } from './features/stats/sample-ratio-checks.js';
import { registerTriggerHook } from './features/triggers/trigger-hook.js';
import { TriggerService } from './features/triggers/trigger-service.js';
import { type DeliveryLimits, type RetryPolicy, WebhookService } from './features/webhooks/webhook-service.js';
import { AuthGuard } from './foundations/auth/auth-guard.js';
import { checkBootstrapEntry } from './foundations/auth/bootstrap.js';
import { ensureFirstAdminKey } from './foundations/auth/first-admin-key.js';
import { KeyService } from './foundations/auth/key-service.js';
import type { Config } from './foundations/config/config.js';
import { StorageFaultError } from './foundations/errors/kinds.js';
import { trustProxies } from './foundations/http/client-address.js';
import type { RunningServer } from './foundations/http/serve.js';
import type { Logger } from './foundations/log/logger.js';
import { ServiceMetrics } from './foundations/metrics/service-metrics.js';
import { type BoundPort, bindPort } from './foundations/process/bind-port.js';
import { DataDirLock } from './foundations/process/data-dir-lock.js';
import { StartupError } from './foundations/process/startup-error.js';
import { openControlState } from './foundations/state/index.js';
import { CorruptRefError, LostRepositoryError, type MainWrite } from './foundations/storage/index.js';
import { RepositoryRegistry } from './foundations/storage/repository-registry.js';
import { serviceHealth } from './service-health.js';
import { type RemoteWiring, wireRemoteMode } from './service-remote.js';

export interface Service {
  controlUrl: string;
  evalUrl: string;
  keys: KeyService;
  repos: RepositoryRegistry;
  holder: SnapshotHolder;
  /** Stops both servers (requests in flight finish), flushes counts, closes the repositories. */
  stop(): Promise<void>;
}

export interface ServiceOptions {
  /** What time it is for the scheduler and the control plane (default: the wall clock); tests move it by hand. */
  clock?: Clock;
  /** Webhook retries and bounds other than the documented defaults (tests reach the bounds with a few changes). */
  webhooks?: { retry?: Partial<RetryPolicy>; limits?: Partial<DeliveryLimits> };
}

/**
 * The composition root: the one place that wires storage, credentials, the evaluation server, the kill fast
 * path, the scheduler and the control plane together.
 *
 * Start-up order: settings are checked, then the data directory's lock is looked at and both ports are
 * bound, and only then is anything written, so a second service on the same directory or a port in use stops
 * the start with a StartupError and an untouched directory. Both ports answer /healthz 503 until every
 * organisation's current snapshot is served.
 */
export async function startService(config: Config, logger: Logger, options: ServiceOptions = {}): Promise<Service> {
  for (const [i, pair] of config.bootstrapKeys.entries()) checkBootstrapEntry(pair.org, pair.key, i);
  const lockOptions = { what: 'flagops service', setting: 'FLAGOPS_DATA_DIR', logger };
  DataDirLock.assertFree(config.dataDir, lockOptions);
  const ports = await bindPorts(config, logger);
  let lock: DataDirLock;
  try {
    lock = DataDirLock.acquire(config.dataDir, lockOptions);
  } catch (err) {
    await Promise.all(ports.map((p) => p.running.close()));
    throw err;
  }
  try {
    return await startOnLockedDirectory(config, logger, ports, lock, options.clock ?? systemClock, options.webhooks);
  } catch (err) {
    await Promise.all(ports.map((p) => p.running.close()));
    lock.release();
    throw err;
  }
}

/** Binds the control port, then the evaluation port; a failure closes what was bound. */
async function bindPorts(config: Config, logger: Logger): Promise<[BoundPort, BoundPort]> {
  if (config.controlPort !== 0 && config.controlPort === config.evalPort) {
    throw new StartupError(`FLAGOPS_CONTROL_PORT and FLAGOPS_EVAL_PORT are both ${config.controlPort}; give them different ports`, 2);
  }
  const control = await bindPort(
    config.host,
    config.controlPort,
    { port: 'FLAGOPS_CONTROL_PORT', host: 'FLAGOPS_HOST' },
    { name: 'control', logger },
  );
  try {
    const evaluation = await bindPort(
      config.host,
      config.evalPort,
      { port: 'FLAGOPS_EVAL_PORT', host: 'FLAGOPS_HOST' },
      { name: 'evaluation', logger },
    );
    return [control, evaluation];
  } catch (err) {
    await control.running.close();
    throw err;
  }
}

async function startOnLockedDirectory(
  config: Config,
  logger: Logger,
  ports: [BoundPort, BoundPort],
  lock: DataDirLock,
  clock: Clock,
  webhookOptions: ServiceOptions['webhooks'] = {},
): Promise<Service> {
  // The throttle's waits run on the service's clock, as the scheduler's steps do, so tests hold time still.
  const guard = new AuthGuard({ logger, trustedProxies: config.trustProxy ?? 0, now: () => clock.now().getTime() });
  const state = await openControlState({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, logger }).catch((err: unknown) => {
    if (!config.databaseUrl) throw err;
    // Unreachable, a wrong password, no such database: the setting to look at, in one line (pg's messages carry
    // no password).
    const why = (err instanceof Error ? err.message || (err as { code?: string }).code || err.name : String(err)).split('\n')[0];
    throw new StartupError(`FLAGOPS_DATABASE_URL: the database cannot be used: ${why}; check the URL and that PostgreSQL is running`, 1);
  });
  const keys = await KeyService.open({ state, guard, logger, now: () => clock.now() });
  const triggers = await TriggerService.open({ state, now: () => clock.now() });
  const schedulers: Scheduler[] = [];
  const guardMonitors: GuardMonitor[] = [];
  const { warnings } = await keys.bootstrap(config.bootstrapKeys);
  for (const warning of warnings) logger.warn(warning);
  await ensureFirstAdminKey(keys, config.dataDir, logger);
  const metrics = ServiceMetrics.create(config.metrics);
  const holder = new SnapshotHolder(logger);
  // Remote mode: one organisation's repository follows FLAGOPS_GIT_REMOTE (default: the first organisation).
  const remoteOrg = config.gitRemote ? (config.gitRemote.org ?? config.bootstrapKeys[0]?.org ?? keys.organisations()[0]?.name) : undefined;
  let remote: RemoteMode | undefined;
  const publish = (gitdir: string, commit: string, parent: string | null, action: string, signal?: AbortSignal, awaitRemote?: boolean) =>
    remote ? remote.publish(gitdir, commit, parent, action, signal, awaitRemote) : Promise.resolve(true);
  const publishBranch = (gitdir: string, ref: string, commit: string) =>
    remote ? remote.publishBranch(gitdir, ref, commit) : Promise.resolve();
  const fetchBranch = (gitdir: string, ref: string) => (remote ? remote.fetchBranch(gitdir, ref) : Promise.resolve());
  // Control planes sharing a database and a remote take turns to write to it (kills excepted).
  const clusterTurn = <R extends MainWrite>(gitdir: string, waitMs: number, work: () => Promise<R>) =>
    remoteWiring && gitdir === remoteWiring.remote.sync.gitdir ? remoteWiring.inTurn(waitMs, work) : work();
  const repos = new RepositoryRegistry({
    dataDir: config.dataDir,
    logger,
    gcEveryCommits: config.gitGcCommits,
    trust: state.commitTrust,
    commitSigningKey: config.commitSigningKey,
    ...(remoteOrg ? { remoteOrg } : {}),
    ...(metrics
      ? { onHousekeepingFailure: (org: string, step: string) => metrics.controlFamilies.countHousekeepingFailure(org, step) }
      : {}),
    repository: {
      // Commits are dated by the service's clock, the one the budgets' hour and the scheduler are measured by.
      clock: () => clock.now(),
      // Several control planes on one remote lose pushes to each other under load: more runs before giving up.
      ...(config.gitRemote ? { publish, publishBranch, fetchBranch, maxAttempts: REMOTE_WRITE_ATTEMPTS } : {}),
      ...(config.gitRemote && config.databaseUrl ? { clusterTurn } : {}),
      ...(metrics ? { onCommit: (action: string) => metrics.controlFamilies.countCommit(action) } : {}),
    },
  });
  // This service alone owns the data directory, so a ref lock there now is a leftover of its own crash.
  const owned = new Set([...keys.organisations().map((o) => o.name), ...(remoteOrg ? [remoteOrg] : [])]);
  await Promise.all([...owned].map((org) => repos.removeLeftoverLocks(org)));
  for (const org of owned) repos.removeLeftoverTempFiles(org);
  await Promise.all([...owned].map((org) => repos.leavePackingToTheService(org)));
  let remoteWiring: RemoteWiring | undefined;
  if (config.gitRemote) {
    if (!remoteOrg)
      throw new StartupError('FLAGOPS_GIT_REMOTE needs an organisation: set FLAGOPS_GIT_REMOTE_ORG or FLAGOPS_BOOTSTRAP_KEYS', 2);
    remoteWiring = wireRemoteMode({
      settings: { ...config.gitRemote, org: remoteOrg },
      repos,
      state,
      killSwitch: () => killSwitch,
      served: () => holder.served(remoteOrg),
      logger,
    });
    remote = remoteWiring.remote;
  }
  const counter = await EvaluationCounter.open({ state, logger });
  const trackNames = new TrackNameBound(counter, { logger });
  metrics?.watchSampleRatios(() => sampleRatioVerdicts(holder.views(), counter));
  const killSwitch = new KillSwitch(holder, {
    ...(metrics ? { onServed: (seconds: number) => metrics.controlFamilies.observeKillPropagation(seconds) } : {}),
    ...(remote ? { catchUp: (org: string) => remote!.catchUpForKill(org) } : {}),
    ...(remoteWiring ? { heldFirst: (org: string) => remoteWiring!.heldKillsFirst(org) } : {}),
    refused: (org: string) => holder.noState(org),
  });

  const streams = attachStreamHub(holder, { logger });
  keys.onKeysChanged(() => streams.recheck());
  metrics?.watchServing({
    snapshots: () => holder.views(),
    streamClients: () => streams.size,
    invalidFiles: () => holder.health().organisations.map((o) => ({ org: o.org, count: o.invalidFiles.length })),
    storageFaults: () => holder.health().organisations.flatMap((o) => (o.fault ? [{ org: o.org, kind: o.fault.kind }] : [])),
  });
  const flagHealth = new FlagHealthService({
    repos,
    lastEvaluated: (org, projectId, env) => counter.lastEvaluated(statsScope(org, projectId, env)),
    countsKeptDays: RETENTION_HOURS / 24,
    cacheDir: path.join(config.dataDir, 'state', 'health'),
    logger: logger.child({ component: 'flag-health' }),
  });
  const audit = new AuditRegistry({ repos, logger, cacheDir: path.join(config.dataDir, 'state', 'audit'), pushes: state.pushes });
  const dashboard = await createDashboard({ state, logger, guard, repos, keys, ...(config.oidc ? { oidc: config.oidc } : {}) });
  const webhooks = await WebhookService.open({
    state,
    audit,
    repos,
    ...(remoteWiring ? { heldBack: remoteWiring.heldBack } : {}),
    logger: logger.child({ component: 'webhooks' }),
    ...webhookOptions,
  });
  metrics?.watchWebhooks(() => webhooks.deliveryCounts());
  const gitRunner = new GitRunner(logger, { dataDir: config.dataDir });
  // Started now, while the service is small: starting it forks this process, which stalls the event loop in
  // proportion to the memory held (tens of ms once every organisation's flags are parsed), not what the first
  // clone should cost the evaluations. Not before the state files are read, though: a damaged one ends the
  // start, and a runner started by then would be left to outlive it.
  void gitRunner.helperRunning();
  // Flags turn stale with time, not only with commits: checked every few minutes, for the gauge and the webhooks.
  const healthWatcher = new HealthWatcher({
    health: flagHealth,
    orgs: () => keys.organisations().map((o) => o.name),
    projects: async (org) => (await (await repos.get(org)).readServed()).state.projects.values(),
    clock,
    onChecked: (org, flags) => webhooks.recordFlagHealth(org, flags),
    logger: logger.child({ component: 'flag-health' }),
  });
  metrics?.watchFlagHealth(() => healthWatcher.statusCounts());

  let ready = false;
  let storageChecks: ReturnType<typeof setInterval> | undefined;
  /** The last storage check started: a stop waits for it, or it could open an audit index after they are closed. */
  let storageCheck: Promise<void> = Promise.resolve();
  const health = serviceHealth({
    keys,
    report: () => holder.health(),
    projectIdOf: (org, slug) => holder.projectIdOf(org, slug),
    // Remote mode with nothing of the remote read yet (no main here): nothing is served, so not ready.
    ready: () => ready && remote?.sync.unread() === undefined,
    metricsToken: config.metrics?.token,
    ...(dashboard.sso ? { sso: dashboard.sso } : {}),
    shared: () => {
      const refused = config.databaseUrl ? state.writesRefused() : undefined;
      return {
        ...(config.databaseUrl ? { database: { reachable: refused === undefined, ...(refused ? { error: refused.message } : {}) } } : {}),
        ...(remote ? { gitRemote: { org: remote.org, ...remote.sync.health() } } : {}),
        guards: { watched: guardMonitors.reduce((n, g) => n + g.size, 0), prometheus: config.prometheusUrl !== undefined },
      };
    },
  });

  const replication = replicaUpstream({
    keys,
    repos,
    holder,
    counter,
    trackNames,
    batches: state.replicaBatches,
  });
  const evalDeps = {
    keys,
    holder,
    counter,
    trackNames,
    logger,
    health,
    ...(metrics ? { totals: metrics.totals, timer: metrics.evaluationTimer } : {}),
  };
  const evalApp = createEvalApp(evalDeps);
  trustProxies(evalApp, config.trustProxy ?? 0);
  const controlApp = createControlApp(
    {
      keys,
      repos,
      holder,
      killSwitch,
      counter,
      audit,
      logger,
      health,
      flagHealth,
      planProjectLimit: config.planProjectLimit,
      triggers,
      clock: () => clock.now(),
      guardsAvailable: config.prometheusUrl !== undefined,
      guardChecks: state.guards,
      principalResolvers: [dashboard.resolver],
      writesRefused: () => state.writesRefused(),
      ...(remote ? { catchUp: (org: string) => remote.catchUp(org) } : {}),
    },
    // git over HTTP first: its /git/... paths must not reach the dashboard's pages.
    [
      {
        routes: gitHttpRoutes({
          keys,
          repos,
          holder,
          audit,
          logger,
          planProjectLimit: config.planProjectLimit,
          clock: () => clock.now(),
          pushes: state.pushes,
          processes: config.gitProcesses,
          runner: gitRunner,
          pushOn: (org) => (remote && config.gitRemote && org === remote.org ? remote.pushTarget() : undefined),
        }),
      },
      { register: (router) => registerTriggerHook(router, { triggers, guard, repos, killSwitch }) },
      { routes: replication.routes },
      { routes: webhookRoutes(webhooks) },
      ...(remote ? [{ register: (r: Router) => remote.register(r) }] : []),
      dashboard.extension,
    ],
  );
  trustProxies(controlApp, config.trustProxy ?? 0);
  const [controlPort, evalPort] = ports;
  if (metrics) {
    controlPort.serve(metrics.controlApp(controlApp));
    evalPort.serve(metrics.evaluationApp(evalApp), evalFastPath(evalDeps));
  } else {
    controlPort.serve(controlApp);
    evalPort.serve(evalApp, evalFastPath(evalDeps));
  }
  const servers: RunningServer[] = [controlPort.running, evalPort.running];
  /**
   * Ends every part in order, on a failed start and on stop alike. `closeServers` runs first: from then on no
   * request is taken, and those in flight finish while everything they use (repositories, the remote) is open.
   */
  const closeParts = async (closeServers: () => Promise<unknown>) => {
    const serversClosed = closeServers();
    clearInterval(storageChecks);
    // Streams (SSE, the replicas' feed) never end by themselves; ended now, they do not hold the servers' stop.
    streams.close();
    dashboard.live.close();
    replication.close();
    // Clones answered on handed-off connections get a grace period; the control server's close waits for them.
    gitRunner.finishHandedOff();
    await Promise.all(schedulers.map((s) => s.stop())); // a run in progress finishes: its commits are whole
    await serversClosed;
    await storageCheck.catch(() => {});
    remoteWiring?.close(); // after the requests in flight: a write among them pushes in this control plane's turn
    await dashboard.close();
    holder.close();
    await gitRunner.close();
    await healthWatcher.stop();
    await webhooks.close();
    await audit.closeAll();
    await flagHealth.closeAll();
    await counter.close();
    await repos.closeAll();
    await state.close();
  };
  try {
    if (remote && config.gitRemote) {
      await repos.get(remote.org);
      // Read by `flagops import`, whose commits must reach the remote before main moves, as the service's do.
      await recordFollowedRemote(repos.gitdirOf(remote.org), config.gitRemote.url);
      await remote.start(); // fetch before serving: the remote is the truth
    }
    for (const org of keys.organisations()) {
      const repo = await repos.get(org.name);
      if (org.name !== remote?.org) await forgetFollowedRemote(repos.gitdirOf(org.name));
      await repo.watch();
      await holder.add(org.name, repo, org.name === remote?.org ? () => remote!.sync.unread() : undefined);
      // The audit index is built now, not on the first request. One that cannot read the history (main's head
      // missing after a crash, a corrupt object) does not stop the start, so the other organisations are served:
      // its queries answer 503 with the fault, and it is built once the repository reads again (checkStorage).
      await audit.get(org.name).catch((err: unknown) => {
        if (!(err instanceof StorageFaultError)) throw err;
      });
      flagHealth.warm(org.name); // read flag history in the background, not on the first health question
      // Steps that fell due while the service was stopped are applied here, before it reports ready.
      const guards = new GuardMonitor({
        org: org.name,
        repo,
        clock,
        logger,
        store: state.guards,
        sharedStateDown: () => state.writesRefused() !== undefined,
        killSwitch,
        ...(remote ? { catchUp: (name: string) => remote!.catchUpForKill(name) } : {}),
        ...(config.prometheusUrl ? { prometheusUrl: config.prometheusUrl } : {}),
        ...(metrics ? { metrics: metrics.guards } : {}),
      });
      guardMonitors.push(guards);
      const scheduler = new Scheduler({ org: org.name, repo, clock, logger, guards });
      schedulers.push(scheduler);
      await scheduler.start();
    }
    await remoteWiring?.listen();
    lock.verify();
  } catch (err) {
    await closeParts(async () => {}); // startService closes the ports and releases the lock
    throw err instanceof CorruptRefError ? corruptRefAtStart(err) : err instanceof LostRepositoryError ? lostRepositoryAtStart(err) : err;
  }
  ready = true;
  healthWatcher.start();
  storageChecks = setInterval(() => {
    storageCheck = checkStorage(keys, repos, holder, audit);
  }, STORAGE_CHECK_MS);
  storageChecks.unref();
  const [control, evaluation] = servers;
  logger.info('flagops started', { control: control.url, evaluation: evaluation.url, dataDir: config.dataDir });

  let stopping: Promise<void> | undefined;
  return {
    controlUrl: control.url,
    evalUrl: evaluation.url,
    keys,
    repos,
    holder,
    stop: () => {
      stopping ??= (async () => {
        const drainMs = drainTimeoutMs(remote);
        await closeParts(() => Promise.all(servers.map((s) => s.close(drainMs))));
        lock.release();
        logger.info('flagops stopped');
      })();
      return stopping;
    },
  };
}

/**
 * A damaged ref found at start: nothing served before is in memory, so there is nothing to serve from. The
 * operator is told which file and how to repair it, without a stack trace.
 */
function corruptRefAtStart(err: CorruptRefError): StartupError {
  return new StartupError(
    `${err.file} ${err.problem}, so the flags repository cannot be read; write the id of the commit ${err.ref} ` +
      'should point at into it (a clone shows it: git rev-parse origin/main), then start again',
  );
}

/**
 * The repository of an organisation that had one is missing, or has lost its main: a new empty one would
 * answer as if the organisation had no projects and orphan its history, so the start stops, naming the path.
 */
function lostRepositoryAtStart(err: LostRepositoryError): StartupError {
  const { gitdir } = err;
  return new StartupError(
    err.missing === 'folder'
      ? `${gitdir} is missing, though the organisation's flags repository was there before; restore it from a backup, ` +
          `or from a clone (git clone --bare <clone> ${gitdir}), then start again`
      : `${path.join(gitdir, 'refs', 'heads', 'main')} is missing (and packed-refs has no main) though the repository holds ` +
          "objects; write the id of main's last commit into it (a clone shows it: git rev-parse origin/main), or restore " +
          'the repository from a backup, then start again',
  );
}

/** How long a write waits for `main`'s lock (and, in remote mode, its turn among control planes) before a 409. */
const WRITE_WAIT_MS = 5_000;
/** What a stop allows a request in flight beyond a write's own deadlines: its commit, its answer. */
const DRAIN_MARGIN_MS = 5_000;

/**
 * How long a stop waits for the requests in flight to be answered before cutting them off: longer than a write
 * can take, its wait for the lock and, in remote mode, its push (FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS), so a change
 * being made when the stop begins is answered, whichever way it goes. 10 s, or 20 s in remote mode by default.
 */
function drainTimeoutMs(remote: RemoteMode | undefined): number {
  return WRITE_WAIT_MS + (remote ? remote.pushTarget().timeoutMs : 0) + DRAIN_MARGIN_MS;
}

/** How many times a write runs before answering 409 in remote mode, where each lost push costs a fetch. */
const REMOTE_WRITE_ATTEMPTS = 30;

/** How often each repository's storage is looked at (a fault appears, or goes) while nothing else touches it. */
const STORAGE_CHECK_MS = 5_000;

/**
 * Looks whether each organisation's repository can be written (a read-only or full disk shows before the next
 * write fails), and, where what main serves could not be read, tries again: a repaired repository is served
 * again without a restart, and its audit index, if it could not be built, is built then.
 */
async function checkStorage(keys: KeyService, repos: RepositoryRegistry, holder: SnapshotHolder, audit: AuditRegistry): Promise<void> {
  for (const { name } of keys.organisations()) {
    if (!holder.has(name)) continue;
    const repo = await repos.get(name);
    repo.probeWritable();
    // Main's head as the files on disk hold it, not as memory does: a removed folder or pack shows now, not
    // after a restart that could serve none of what was acknowledged meanwhile.
    await repo.probeReadable();
    // The holder's fault covers main's head not being served too (a commit missing from its history).
    if (holder.fault(name)?.kind !== 'read') continue;
    // Read again: a success clears the fault, and the holder serves main's head again.
    const readable = await repo.readServed().then(
      () => true,
      () => false,
    );
    if (!readable) continue;
    await holder.served(name);
    // Built (or caught up) now rather than on the first audit query; a failure is logged, and the next query tries again.
    await audit
      .get(name)
      .then((index) => index.caughtUp())
      .catch(() => {});
  }
}
