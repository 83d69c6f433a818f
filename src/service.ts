import path from 'node:path';
import type Router from '@koa/router';
import { AuditRegistry } from './audit/audit-registry.js';
import { KeyService } from './auth/key-service.js';
import type { Config } from './config/config.js';
import { createControlApp } from './control-plane/control-app.js';
import { createDashboard } from './dashboard/dashboard.js';
import { readDashboardSettings } from './dashboard/dashboard-settings.js';
import { createEvalApp, evalFastPath } from './eval-server/eval-app.js';
import { SnapshotHolder } from './eval-server/snapshot-holder.js';
import { attachStreamHub } from './eval-server/stream/stream-hubs.js';
import { ensureFirstAdminKey } from './first-run.js';
import { registerGitHttp } from './git-http/git-http-routes.js';
import { listen, type RunningServer } from './http/serve.js';
import { KillSwitch } from './kill/kill-switch.js';
import type { Logger } from './log/logger.js';
import { RemoteMode } from './remote/remote-mode.js';
import { replicaUpstream } from './replica/upstream/replica-routes.js';
import { EvaluationCounter } from './stats/evaluation-counter.js';
import { RepositoryRegistry } from './storage/repository-registry.js';

export interface Service {
  controlUrl: string;
  evalUrl: string;
  keys: KeyService;
  repos: RepositoryRegistry;
  holder: SnapshotHolder;
  /** Stops both servers (requests in flight finish), flushes counts, closes the repositories. */
  stop(): Promise<void>;
}

/**
 * The composition root: the one place that wires storage, credentials, the evaluation server, the kill fast
 * path and the control plane together. Both ports listen at once and answer /healthz 503 until every
 * organisation's current snapshot is served.
 */
export async function startService(config: Config, logger: Logger): Promise<Service> {
  const keys = await KeyService.open({ dataDir: config.dataDir });
  const { warnings } = await keys.bootstrap(config.bootstrapKeys);
  for (const warning of warnings) logger.warn(warning);
  await ensureFirstAdminKey(keys, config.dataDir, logger);
  const holder = new SnapshotHolder(logger);
  // Remote mode: one organisation's repository follows FLAGOPS_GIT_REMOTE (default: the first organisation).
  const remoteOrg = config.gitRemote ? (config.gitRemote.org ?? config.bootstrapKeys[0]?.org ?? keys.organisations()[0]?.name) : undefined;
  let remote: RemoteMode | undefined;
  const publish = (gitdir: string, commit: string, parent: string | null) => (remote ? remote.publish(gitdir, commit, parent) : Promise.resolve(true));
  const repos = new RepositoryRegistry({ dataDir: config.dataDir, logger, gcEveryCommits: config.gitGcCommits, ...(config.gitRemote ? { repository: { publish } } : {}) });
  if (config.gitRemote) {
    if (!remoteOrg) throw new Error('FLAGOPS_GIT_REMOTE needs an organisation: set FLAGOPS_GIT_REMOTE_ORG or FLAGOPS_BOOTSTRAP_KEYS');
    remote = new RemoteMode({ ...config.gitRemote, org: remoteOrg }, repos.gitdirOf(remoteOrg), logger, () => holder.served(remoteOrg));
  }
  const counter = await EvaluationCounter.open({ dataDir: config.dataDir, logger });
  const killSwitch = new KillSwitch(holder);
  const streams = attachStreamHub(holder, { logger });
  const audit = new AuditRegistry({ repos, logger, cacheDir: path.join(config.dataDir, 'state', 'audit') });
  // The lead may move FLAGOPS_TRUST_PROXY into Config; until then the dashboard reads it here.
  const dashboard = await createDashboard({ dataDir: config.dataDir, logger, ...readDashboardSettings(process.env) });

  let ready = false;
  const health = () => {
    const report = holder.health();
    const degraded = report.organisations.some((o) => o.invalidFiles.length > 0);
    const status = !ready ? 'starting' : degraded ? 'degraded' : 'ok';
    return { status: ready ? 200 : 503, body: { status, organisations: report.organisations } };
  };

  const replication = replicaUpstream({ keys, repos, holder, counter, ledgerFile: path.join(config.dataDir, 'state', 'replica-batches.jsonl') });
  const evalDeps = { keys, holder, counter, logger, health };
  const evalApp = createEvalApp(evalDeps);
  const controlApp = createControlApp(
    { keys, repos, holder, killSwitch, counter, audit, logger, health, planProjectLimit: config.planProjectLimit, principalResolvers: [dashboard.resolver] },
    // git over HTTP first: its /git/... paths must not reach the dashboard's pages.
    [{ register: (router) => registerGitHttp(router, { keys, repos, holder, logger, onPush: (org) => remote?.pushedLocally(org) }) }, { register: replication.register }, ...(remote ? [{ register: (r: Router) => remote.register(r) }] : []), dashboard.extension],
  );
  const servers: RunningServer[] = [];
  try {
    servers.push(await listen(controlApp, config.host, config.controlPort));
    servers.push(await listen(evalApp, config.host, config.evalPort, evalFastPath(evalDeps)));
    if (remote) {
      await repos.get(remote.org);
      await remote.start(); // fetch before serving: the remote is the truth
    }
    for (const org of keys.organisations()) {
      const repo = await repos.get(org.name);
      await repo.watch();
      await holder.add(org.name, repo);
      await audit.get(org.name); // build the audit index now, not on the first request
    }
  } catch (err) {
    streams.close();
    replication.close();
    remote?.close();
    await Promise.all(servers.map((s) => s.close()));
    holder.close();
    await audit.closeAll();
    await counter.close();
    await repos.closeAll();
    throw err;
  }
  ready = true;
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
        streams.close(); // SSE responses never end by themselves; ending them first lets the servers stop at once
        replication.close();
        remote?.close();
        await Promise.all(servers.map((s) => s.close()));
        await dashboard.close();
        holder.close();
        await audit.closeAll();
        await counter.close();
        await repos.closeAll();
        logger.info('flagops stopped');
      })();
      return stopping;
    },
  };
}
