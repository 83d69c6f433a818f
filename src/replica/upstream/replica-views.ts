import type { EnvironmentView } from '../../eval-server/environment-view.js';
import type { SnapshotHolder } from '../../eval-server/snapshot-holder.js';
import { ENVIRONMENTS } from '../../model/index.js';
import type { RepositoryRegistry } from '../../storage/repository-registry.js';

/** One served (project, environment) as a replica lists it. */
export interface ReplicaListing {
  projectId: string;
  projectSlug: string;
  environment: string;
  version: number;
}

/** Everything a replica needs to build the same EnvironmentView: the flags, the kill overlay and the version. */
export function viewBody(view: EnvironmentView) {
  return {
    projectId: view.projectId,
    projectSlug: view.projectSlug,
    environment: view.environment,
    version: view.version,
    commit: view.commit,
    flags: view.flags,
    kills: view.kills,
  };
}

export const listing = (view: EnvironmentView): ReplicaListing => ({
  projectId: view.projectId,
  projectSlug: view.projectSlug,
  environment: view.environment,
  version: view.version,
});

/** Every view the holder serves for `org`. The project ids come from main; the holder has the views. */
export async function servedViews(org: string, repos: RepositoryRegistry, holder: SnapshotHolder): Promise<EnvironmentView[]> {
  await holder.served(org);
  const { state } = await (await repos.get(org)).readState();
  const views: EnvironmentView[] = [];
  for (const project of state.projects.values()) {
    for (const env of ENVIRONMENTS) {
      const view = holder.view(org, project.project.id, env);
      if (view) views.push(view);
    }
  }
  return views;
}
