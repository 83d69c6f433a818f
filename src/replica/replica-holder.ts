import type { EnvironmentName, KillsFile, SnapshotFlag } from '@flagops/core';
import { EnvironmentView } from '../eval-server/environment-view.js';

/** What the control plane sends for one (project, environment): GET /api/v1/replica/snapshots/:projectId/:env. */
export interface ViewBody {
  projectId: string;
  projectSlug: string;
  environment: EnvironmentName;
  version: number;
  commit: string | null;
  flags: Record<string, SnapshotFlag>;
  kills: KillsFile;
}

/** One entry of the listing and of the stream's `version` events. */
export interface ViewListing {
  projectId: string;
  projectSlug: string;
  environment: EnvironmentName;
  version: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A defensive check of what came over the network or from disk: a bad body is never served. */
export function isViewBody(value: unknown): value is ViewBody {
  return (
    isObject(value) &&
    typeof value.projectId === 'string' &&
    typeof value.projectSlug === 'string' &&
    typeof value.environment === 'string' &&
    Number.isSafeInteger(value.version) &&
    isObject(value.flags) &&
    isObject(value.kills) &&
    isObject(value.kills.kills)
  );
}

const keyOf = (projectId: string, env: string) => `${projectId}\u0000${env}`;

/**
 * The views a replica serves, built from the control plane's with the same evaluation core
 * (EnvironmentView), so snapshots, versions and ETags are byte for byte the control plane's. A view is
 * swapped whole; listeners (the replica's SDK stream hub) hear each swap in the same turn.
 */
export class ReplicaHolder {
  private readonly views = new Map<string, EnvironmentView>();
  private readonly listeners = new Set<(views: EnvironmentView[]) => void>();
  org: string | null = null;

  view(org: string, projectId: string, env: EnvironmentName): EnvironmentView | undefined {
    return org === this.org ? this.views.get(keyOf(projectId, env)) : undefined;
  }

  versionOf(projectId: string, env: string): number | undefined {
    return this.views.get(keyOf(projectId, env))?.version;
  }

  entries(): EnvironmentView[] {
    return [...this.views.values()];
  }

  /** Serves `body`; an older version than the one served is ignored (responses can arrive out of order). */
  put(org: string, body: ViewBody): boolean {
    this.org = org;
    const current = this.views.get(keyOf(body.projectId, body.environment));
    if (current && current.version >= body.version) return false;
    const view =
      current && JSON.stringify(current.flags) === JSON.stringify(body.flags)
        ? current.withKills(body.kills, body.version, body.commit) // a kill: keep the compiled flags, as the control plane does
        : EnvironmentView.build(org, body.projectId, body.projectSlug, body.environment, body.flags, body.kills, body.version, body.commit);
    this.views.set(keyOf(body.projectId, body.environment), view);
    this.emit([view]);
    return true;
  }

  remove(projectId: string, env: string): void {
    this.views.delete(keyOf(projectId, env));
  }

  onChange(listener: (views: EnvironmentView[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(views: EnvironmentView[]): void {
    for (const listener of this.listeners) listener(views);
  }
}
