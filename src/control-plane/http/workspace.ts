import type { Actor } from '@flagops/core';
import type { Principal } from '../../auth/principal.js';
import type { FlagRepository } from '../../storage/flag-repository.js';
import type { ControlPlaneDeps } from '../control-deps.js';
import { actorOf } from './actor.js';

/**
 * What a service works in: the caller's organisation and nothing else. The repository is the principal's
 * own organisation's, so another organisation's resource can never be found (contract §5: 404).
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
