import type { Actor } from '@flagops/core';
import { flagById } from '../../foundations/repository/state-lookup.js';
import type { RepositoryRegistry } from '../../foundations/storage/repository-registry.js';
import type { KillSwitch } from '../kill/kill-switch.js';
import type { AlertPayload } from './alert-payload.js';
import type { TriggerRecord } from './trigger-service.js';

export type TriggerOutcome = 'killed' | 'already_killed' | 'resolved';

/** The actor of a trigger's kill: type `trigger`, named by the trigger. */
export function triggerActor(record: TriggerRecord): Actor {
  return { type: 'trigger', name: record.name };
}

/**
 * What a trigger's URL does when called: kills its flag in its environment through the kill fast path (served
 * before this resolves), with the body's reason, else the alert's summary, else `trigger <name>`. A resolved
 * alert changes nothing: a kill stays until a person clears it. A flag deleted since is 404 (NotFoundError).
 */
export async function fireTrigger(
  deps: { repos: RepositoryRegistry; killSwitch: KillSwitch },
  record: TriggerRecord,
  payload: AlertPayload,
): Promise<TriggerOutcome> {
  if (payload.resolved) return 'resolved';
  const repo = await deps.repos.get(record.org);
  const { project, flag } = flagById((await repo.readServed()).state, record.flagId);
  const outcome = await deps.killSwitch.kill({
    org: record.org,
    repo,
    projectSlug: project.project.slug,
    flagKey: flag.meta.key,
    environment: record.environment,
    actor: triggerActor(record),
    reason: payload.reason ?? `trigger ${record.name}`,
  });
  return outcome.changed ? 'killed' : 'already_killed';
}
