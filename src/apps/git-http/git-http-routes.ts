import path from 'node:path';
import type { EnvironmentName } from '@flagops/core';
import type Koa from 'koa';
import type { AuditRegistry } from '../../features/audit/audit-registry.js';
import { BudgetLedger } from '../../features/budgets/budget-ledger.js';
import { budgetOf, budgetsActor } from '../../features/budgets/budget-rules.js';
import type { KeyService } from '../../foundations/auth/key-service.js';
import type { Principal } from '../../foundations/auth/principal.js';
import { limitedToProjects, projectInScope } from '../../foundations/auth/scope.js';
import { FlagopsError, InvalidInputError, NotFoundError, StorageFaultError } from '../../foundations/errors/kinds.js';
import { readBody } from '../../foundations/http/read-json-body.js';
import type { Logger } from '../../foundations/log/logger.js';
import type { PushLog } from '../../foundations/state/index.js';
import { writeFault } from '../../foundations/storage/git/io-faults.js';
import type { FlagRepository } from '../../foundations/storage/index.js';
import type { RepositoryRegistry } from '../../foundations/storage/repository-registry.js';
import { ANSWERED, type Route, route } from '../control-plane/route-table.js';
import type { SnapshotHolder } from '../eval-server/snapshot-holder.js';
import type { GitRunner } from './git-runner.js';
import { runHttpBackend, serveUploadPack } from './http-backend.js';
import { installPreReceiveHook, pushContextEnv } from './pre-receive-hook.js';
import { ProcessGate } from './process-gate.js';
import type { PushBudgetContext } from './push-budgets.js';
import type { PushOnTarget } from './push-on.js';
import type { PushLimits } from './push-permissions.js';

export interface GitHttpDeps {
  keys: KeyService;
  repos: RepositoryRegistry;
  holder: SnapshotHolder;
  audit: Pick<AuditRegistry, 'get'>;
  logger: Logger;
  /** FLAGOPS_PLAN_PROJECT_LIMIT: a push may not take an organisation past it. */
  planProjectLimit: number;
  /** Who pushed which commit: the push check records each accepted push there. */
  pushes: PushLog;
  /** What time it is for budgets (default: the wall clock). */
  clock?: () => Date;
  /** git processes at once, and requests waiting for one, before 503 (FLAGOPS_GIT_MAX_PROCESSES, FLAGOPS_GIT_QUEUE). */
  processes?: { max: number; queue: number };
  /** Starts the git processes (git-runner.ts); the service closes it when it stops. */
  runner?: GitRunner;
  /** Remote mode: the git remote a push to `org` must reach before main moves here; undefined for other organisations. */
  pushOn?: (org: string) => PushOnTarget | undefined;
}

/** Seconds a client turned away for load is told to wait. */
const RETRY_AFTER_SECONDS = 5;
/** The smart-HTTP endpoints git clients use; nothing else is passed to git (no dumb protocol, no other paths). */
const SERVICES = new Set(['git-upload-pack', 'git-receive-pack']);
/**
 * The largest git-upload-pack request body (a fetch's wants and haves, gzip-encoded or not) read: git's own
 * http-backend refuses more than this by default (GIT_HTTP_MAX_REQUEST_BUFFER).
 */
export const MAX_UPLOAD_PACK_REQUEST = 10 * 1024 * 1024;

/** Refuses `rest` (the path after `<org>.git/`) unless it is a request git should see. */
function checkPath(method: string, query: Readonly<Record<string, unknown>>, rest: string): void {
  const bad = (message: string) => new InvalidInputError(message);
  if (rest === 'info/refs') {
    const service = query.service;
    if (typeof service === 'string' && SERVICES.has(service)) return;
    throw bad('info/refs needs ?service=git-upload-pack or ?service=git-receive-pack');
  }
  if (SERVICES.has(rest)) {
    if (method === 'POST') return;
    throw bad(`${rest} takes POST`);
  }
  throw bad('not a git smart-HTTP path: only info/refs, git-upload-pack and git-receive-pack are served');
}

/**
 * `{base_url}/git/<org>.git`: each organisation's flags repository over git's smart HTTP protocol (clone,
 * fetch, push), served by `git http-backend`. HTTP basic auth with an admin or agent key as the password, or
 * the key as a bearer token (`git -c http.extraHeader=…`, which keeps it out of the clone's config);
 * another organisation's repository is 404, as everywhere. Both kinds may push: a push is checked by the
 * pre-receive hook, which holds it to the pushing key's permissions as the API would, and records the key
 * as the pusher of its commits for the audit trail. A push answers once it is served and in the audit trail.
 */
export function gitHttpRoutes(deps: GitHttpDeps): Route[] {
  const gate = new ProcessGate(deps.processes?.max ?? 4, deps.processes?.queue ?? 16);
  const hooks = new Map<string, Promise<void>>();
  // Written for a push only: a clone or fetch runs no hook, and must work on a repository that cannot be written.
  const ensurePushCheck = (org: string): Promise<void> => {
    let ready = hooks.get(org);
    if (!ready) {
      ready = installPreReceiveHook(deps.repos.gitdirOf(org)).catch((err: unknown) => Promise.reject(writeFault(err)));
      ready.catch(() => hooks.delete(org));
      hooks.set(org, ready);
    }
    return ready;
  };

  return [
    route({
      method: ['GET', 'POST'],
      path: '/git/:repo/{*rest}',
      permission: 'git',
      credentials: 'git',
      body: 'none',
      handle: async ({ ctx, principal }) => {
        const repo = ctx.params.repo;
        if (repo !== `${principal.org}.git`) throw new NotFoundError(`repository ${repo}`);
        const rest = ctx.params.rest ?? '';
        checkPath(ctx.method, ctx.query, rest);
        await serveGit(ctx, principal, repo, rest);
        return ANSWERED;
      },
    }),
  ];

  async function serveGit(ctx: Koa.Context, principal: Principal, repo: string, rest: string): Promise<void> {
    const release = await gate.enter((giveUp) => ctx.res.once('close', giveUp));
    if (release === null) {
      if (ctx.res.destroyed) return;
      throw new FlagopsError('unavailable', 'too many git requests at once; try again in a few seconds', {
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      });
    }
    try {
      const org = principal.org;
      const repository = await deps.repos.get(org);
      // A push is refused as an API write is (main's head not on disk, or not servable), from git's first request
      // of it on: main would move where nothing serves it. So is one the repository cannot take (read-only, a full
      // disk), looked for now rather than at the next storage check: git would fail to write what it was sent.
      if (rest === 'git-receive-pack' || ctx.query.service === 'git-receive-pack') {
        const refusal = repository.writesRefused();
        if (refusal) throw refusal;
        repository.probeWritable();
        const fault = repository.fault();
        if (fault?.kind === 'write') throw new StorageFaultError('write', fault.message);
        await ensurePushCheck(org);
      }
      const backend = {
        projectRoot: path.dirname(deps.repos.gitdirOf(org)),
        pathInfo: `/${repo}/${rest}`,
        remoteUser: principal.prefix,
        allowPush: true,
        logger: deps.logger,
        runner: deps.runner,
      };
      if (rest === 'git-upload-pack') {
        // A clone or fetch: its body is read here, then the git runner answers on the client's connection.
        // A client gone before its request was whole is counted as such (499), as on every route.
        const body = await readBody(ctx.req, MAX_UPLOAD_PACK_REQUEST);
        ctx.respond = false; // the answer is written outside Koa
        await serveUploadPack(ctx.req, ctx.res, { ...backend, body });
        return;
      }
      const push = rest === 'git-receive-pack';
      const flags = push ? repository : undefined;
      const before = flags ? await flags.head() : null;
      // The route's permission (git) is held by admin and agent keys only.
      const pusher = { type: principal.kind as 'admin' | 'agent', keyPrefix: principal.prefix, name: principal.name };
      const limits = flags ? await pushLimits(principal, flags) : undefined;
      // Everything that may fail is done before the answer is handed to http-backend: a failure after that would
      // leave the request without an answer until git gives up.
      const env = pushContextEnv({
        pusher,
        pushLog: deps.pushes.hookTarget(org),
        projectLimit: deps.planProjectLimit,
        limits,
        budget: flags ? await pushBudget(deps, org, flags, pusher.type) : undefined,
        pushOn: deps.pushOn?.(org),
      });
      ctx.respond = false; // http-backend writes the response itself
      await runHttpBackend(ctx.req, ctx.res, {
        ...backend,
        env,
        // An accepted push answers once it is served and in the audit trail, as an API change does, rather
        // than when the repository watcher notices it.
        beforeEnd: flags
          ? async () => {
              if ((await flags.head()) === before) return;
              await flags.refresh();
              await deps.holder.served(org);
              await (await deps.audit.get(org)).caughtUp();
            }
          : undefined,
      });
    } finally {
      release();
    }
  }
}

/**
 * A limited key's projects, by the slugs their files live under now, its environments and its expiry; undefined:
 * no limits.
 */
async function pushLimits(principal: Principal, repo: FlagRepository): Promise<PushLimits | undefined> {
  const { scope, expiresAt } = principal;
  if (scope === undefined) return expiresAt === undefined ? undefined : { expiresAt };
  const limits: PushLimits = expiresAt === undefined ? {} : { expiresAt };
  if (limitedToProjects(scope)) {
    const { state } = await repo.readServed();
    limits.projects = [...state.projects.values()].filter((p) => projectInScope(scope, p.project)).map((p) => p.project.slug);
  }
  if (scope.environments !== undefined) limits.environments = [...scope.environments];
  return limits;
}

/**
 * What the push check needs of budgets, read here from the audit trail (the check runs in a process of git's):
 * the pusher's use per project and environment in the last hour, as of main now. A push is based on main as
 * its client read it; should main move before git takes the push, git refuses it as not a fast-forward.
 */
async function pushBudget(deps: GitHttpDeps, org: string, flags: FlagRepository, actorType: string): Promise<PushBudgetContext> {
  const now = deps.clock?.() ?? new Date();
  // Only the budgets main has now: the impacts of changes no budget counts are never computed. A budget the
  // push itself brings starts from nothing.
  const { state } = await flags.readServed();
  const budgeted = (slug: string, env: EnvironmentName) => {
    const project = state.projects.get(slug)?.project;
    return project !== undefined && budgetOf(project, env, actorType) !== undefined;
  };
  const anyBudget = [...state.projects.values()].some((p) => budgetsActor(p.project, actorType));
  const at = now.toISOString();
  try {
    const used = anyBudget ? await BudgetLedger.of(flags, () => deps.audit.get(org)).usedBy(now, actorType, budgeted) : {};
    return { at, used };
  } catch (err) {
    // The audit index in a database that is down: said by the push check, in git's `remote:` lines, for a push that
    // adds to a budget; git shows nothing of an HTTP error's body.
    if (!(err instanceof FlagopsError && err.code === 'unavailable')) throw err;
    return { at, used: {}, unreadable: err.message };
  }
}
