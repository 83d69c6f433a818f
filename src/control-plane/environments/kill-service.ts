import type { EnvironmentName } from '@flagops/core';
import { type FlagView, servedFlagView } from '../flags/flag-view.js';
import type { Workspace } from '../http/workspace.js';
import { flagById } from '../state-lookup.js';

export interface KillView extends FlagView {
  /** True when the flag was killed already: nothing changed, no commit, the first kill's details stand. */
  alreadyKilled: boolean;
}

/**
 * Kills through the fast path (service-spec §1): KillSwitch.kill resolves only once the evaluation server
 * serves valueOff, so the response never runs ahead of the edge. The config file and its version are untouched.
 */
export async function killFlag(ws: Workspace, flagId: string, env: EnvironmentName, reason?: string): Promise<KillView> {
  const { state } = await ws.repo.readServed();
  const { project, flag } = flagById(state, flagId);
  const outcome = await ws.deps.killSwitch.kill({
    org: ws.org,
    repo: ws.repo,
    projectSlug: project.project.slug,
    flagKey: flag.meta.key,
    environment: env,
    actor: ws.actor,
    reason,
  });
  const served = await ws.repo.readServed(outcome.commit);
  return { ...servedFlagView(served, flagById(served.state, flagId)), alreadyKilled: !outcome.changed };
}
