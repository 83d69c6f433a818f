import path from 'node:path';
import type Router from '@koa/router';
import type Koa from 'koa';
import type { KeyService } from '../auth/key-service.js';
import type { Principal } from '../auth/principal.js';
import type { SnapshotHolder } from '../eval-server/snapshot-holder.js';
import type { Logger } from '../log/logger.js';
import type { RepositoryRegistry } from '../storage/repository-registry.js';
import { basicPassword } from './basic-auth.js';
import { runHttpBackend } from './http-backend.js';
import { installPreReceiveHook, PUSH_CHECK_ENV } from './pre-receive-hook.js';

export interface GitHttpDeps {
  keys: KeyService;
  repos: RepositoryRegistry;
  holder: SnapshotHolder;
  logger: Logger;
  /** Called once an accepted push is served (remote mode passes it on to the git remote at once). */
  onPush?: (org: string) => void;
}

const REALM = 'Basic realm="flagops", charset="UTF-8"';

function isPush(ctx: Koa.Context, rest: string): boolean {
  return rest === 'git-receive-pack' || (rest === 'info/refs' && ctx.query.service === 'git-receive-pack');
}

function refuse(ctx: Koa.Context, status: 401 | 404, message: string): void {
  ctx.status = status;
  if (status === 401) ctx.set('WWW-Authenticate', REALM);
  ctx.body = { error: { code: status === 401 ? 'unauthorized' : 'not_found', message } };
}

/**
 * `{base_url}/git/<org>.git`: each organisation's flags repository over git's smart HTTP protocol (clone,
 * fetch, push), served by `git http-backend`. HTTP basic auth with an admin or agent key as the password;
 * another organisation's repository is 404, as everywhere. Both kinds may push: contract §5 lets an agent
 * change configs in every environment, and a push is checked by the pre-receive hook like any API write.
 */
export function registerGitHttp(router: Router, deps: GitHttpDeps): void {
  const hooks = new Map<string, Promise<void>>();
  const ensureRepository = (org: string): Promise<void> => {
    let ready = hooks.get(org);
    if (!ready) {
      ready = deps.repos.get(org).then(() => installPreReceiveHook(deps.repos.gitdirOf(org)));
      ready.catch(() => hooks.delete(org));
      hooks.set(org, ready);
    }
    return ready;
  };

  router.all('/git/:repo/{*rest}', async (ctx) => {
    const password = basicPassword(ctx.get('authorization'));
    const principal: Principal | null = password === null ? null : deps.keys.authenticateRequest(password, ctx.req, 'git');
    if (principal === null || principal.kind === 'sdk') return refuse(ctx, 401, 'git over HTTP needs an admin or agent key as the password');
    const repo = ctx.params.repo;
    const rest = ctx.params.rest ?? '';
    if (repo !== `${principal.org}.git`) return refuse(ctx, 404, `repository ${repo} not found`);
    await ensureRepository(principal.org);
    const push = isPush(ctx, rest);
    ctx.respond = false; // http-backend writes the response itself
    await runHttpBackend(ctx.req, ctx.res, {
      projectRoot: path.dirname(deps.repos.gitdirOf(principal.org)),
      pathInfo: `/${repo}/${rest}`,
      remoteUser: principal.prefix,
      allowPush: true,
      env: { [PUSH_CHECK_ENV]: '1' },
      logger: deps.logger,
    });
    // Serve an accepted push at once rather than when the repository watcher notices it.
    if (push && ctx.method === 'POST') {
      await deps.holder.served(principal.org);
      deps.onPush?.(principal.org);
    }
  });
}
