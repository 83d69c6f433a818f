import type { EnvironmentView } from '../eval-server/environment-view.js';
import type { UpstreamListing } from './replica-holder.js';

/** An environment an upstream offers at an older version than the replica serves, or not at all yet. */
export interface BehindEnvironment {
  projectId: string;
  project: string;
  environment: string;
  served: number;
  /** The upstream's version, or null when it does not list the environment. */
  offered: number | null;
}

/**
 * Compares what an upstream offers with what a replica serves, per (project, environment). A version is the
 * height of the newest commit that changed what the environment serves, so on one history (control planes on
 * one git remote) a lower version is an older state: the upstream is behind there, and the replica keeps what
 * it serves (a kill included) until the upstream reaches it. An environment the upstream does not list was
 * deleted if the upstream's head is at least as high as the version served (it has seen that commit, and
 * what came after), and not yet seen otherwise. A control plane that predates `head` is trusted as before.
 */
export function compareWithServed(
  listing: UpstreamListing,
  served: readonly EnvironmentView[],
): { behind: BehindEnvironment[]; deleted: EnvironmentView[] } {
  const offered = new Map(listing.snapshots.map((s) => [`${s.projectId}/${s.environment}`, s.version]));
  const behind: BehindEnvironment[] = [];
  const deleted: EnvironmentView[] = [];
  for (const view of served) {
    const version = offered.get(`${view.projectId}/${view.environment}`);
    const lags = (v: number | null) =>
      behind.push({
        projectId: view.projectId,
        project: view.projectSlug,
        environment: view.environment,
        served: view.version,
        offered: v,
      });
    if (version !== undefined) {
      if (version < view.version) lags(version);
    } else if (listing.head === undefined || (listing.head?.height ?? 0) >= view.version) {
      deleted.push(view);
    } else {
      lags(null);
    }
  }
  return { behind, deleted };
}
