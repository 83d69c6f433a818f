import type { Actor } from '@flagops/core';
import type { Principal } from '../../foundations/auth/principal.js';
import type { FlagRepository } from '../../foundations/storage/index.js';
import type { ControlPlaneDeps } from './deps.js';

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
  // A session's prefix is its person's username (src/apps/dashboard): their commits carry it, so the git log tells
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
