import type { Actor } from '@flagops/core';
import type { Context } from 'koa';
import { bearerToken } from '../auth/key-format.js';
import type { KeyService } from '../auth/key-service.js';
import type { Principal } from '../auth/principal.js';
import { UnauthorizedError } from '../errors/kinds.js';
import type { FlagRepository } from '../storage/index.js';
import type { ControlPlaneDeps } from './control-app.js';

/**
 * What a service works in: the caller's organisation and nothing else. The repository is the principal's
 * own organisation's, so another organisation's resource can never be found (404).
 */
export interface Workspace {
  org: string;
  actor: Actor;
  repo: FlagRepository;
  deps: ControlPlaneDeps;
  now(): Date;
  /** Resolves once the evaluation server serves main's head, so a writer reads its change back at once. */
  served(): Promise<void>;
}

export async function openWorkspace(deps: ControlPlaneDeps, principal: Principal): Promise<Workspace> {
  const repo = await deps.repos.get(principal.org);
  const clock = deps.clock ?? (() => new Date());
  return {
    org: principal.org,
    actor: actorOf(principal),
    repo,
    deps,
    now: clock,
    served: () => deps.holder.served(principal.org),
  };
}

/** The commit author and audit actor of a principal: keys are attributed by their prefix. */
export function actorOf(principal: Principal): Actor {
  // A session's prefix is its person's username (src/dashboard): their commits carry it, so the git log tells
  // two people of the same name apart.
  if (principal.kind === 'session') return { type: 'session', name: principal.name, email: sessionEmail(principal.prefix) };
  if (principal.kind === 'sdk') throw new TypeError('an sdk key never acts on the control plane');
  return { type: principal.kind, name: principal.name, keyPrefix: principal.prefix };
}

/** A username that is an email address is used as is; any other gets a domain that says where it comes from. */
function sessionEmail(username: string): string {
  if (username === '') return 'session@users.flagops';
  return username.includes('@') ? username : `${username}@users.flagops`;
}

/**
 * One way of recognising the caller. Returns null when the request does not carry this kind of credential
 * (so the next resolver is tried) and throws UnauthorizedError when it carries one that is not valid.
 */
export type PrincipalResolver = (ctx: Context) => Principal | null | Promise<Principal | null>;

/** `Authorization: Bearer <admin or agent key>`; an sdk, revoked or unknown key is 401. */
export function bearerKeyResolver(keys: KeyService): PrincipalResolver {
  return (ctx) => {
    const header = ctx.get('authorization');
    if (header === '') return null;
    const token = bearerToken(header);
    if (token === null) throw new UnauthorizedError('the Authorization header must be "Bearer <key>"');
    return keys.controlPlanePrincipal(token, ctx.req);
  };
}

/** The caller's principal: the first resolver that recognises a credential wins; none → 401. */
export async function authenticate(ctx: Context, resolvers: readonly PrincipalResolver[]): Promise<Principal> {
  for (const resolve of resolvers) {
    const principal = await resolve(ctx);
    if (principal) return principal;
  }
  throw new UnauthorizedError();
}
