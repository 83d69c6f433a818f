import type { EnvironmentName, KillsFile, SnapshotFlag, SnapshotSegment } from '@flagops/core';
import { EnvironmentView } from '../eval-server/environment-view.js';
import type { KillChange } from './view-change.js';
import { patchedEntries, type ViewDelta } from './view-delta.js';

/** What the control plane sends for one (project, environment): GET /api/v1/replica/snapshots/:projectId/:env. */
export interface ViewBody {
  projectId: string;
  projectSlug: string;
  environment: EnvironmentName;
  version: number;
  commit: string | null;
  flags: Record<string, SnapshotFlag>;
  kills: KillsFile;
  /** The project's segments; absent from a control plane that predates them. */
  segments?: Record<string, SnapshotSegment>;
}

/** Everything a replica needs to build the same EnvironmentView: the flags, the kill overlay and the version. */
export function viewBody(view: EnvironmentView): ViewBody {
  return {
    projectId: view.projectId,
    projectSlug: view.projectSlug,
    environment: view.environment,
    version: view.version,
    commit: view.commit,
    flags: view.flags,
    kills: view.kills,
    segments: view.segments,
  };
}

/** One entry of the listing and of the stream's `version` events. */
export interface ViewListing {
  projectId: string;
  projectSlug: string;
  environment: EnvironmentName;
  version: number;
}

/** The commit an upstream serves and its height (commits on the first-parent chain from the root). */
export interface UpstreamHead {
  commit: string;
  height: number;
}

/**
 * What an upstream serves: the stream's `versions` event and GET /api/v1/replica/snapshots. `head` is null
 * before anything is committed, and absent from a control plane that predates it.
 */
export interface UpstreamListing {
  org: string;
  head?: UpstreamHead | null;
  snapshots: ViewListing[];
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
    isObject(value.kills.kills) &&
    (value.segments === undefined || isObject(value.segments))
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
  /** Views this replica had saved but found damaged at start, by key: served again once fetched from upstream. */
  private readonly lost = new Map<string, { projectId: string; environment: string }>();
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

  /**
   * Serves `body`; an older version than the one served is ignored (responses can arrive out of order), and so
   * is the same version unless `replacingSameVersion` (a view read from disk that nothing vouches for).
   */
  put(org: string, body: ViewBody, replacingSameVersion = false): boolean {
    this.org = org;
    const current = this.views.get(keyOf(body.projectId, body.environment));
    if (current && (current.version > body.version || (current.version === body.version && !replacingSameVersion))) return false;
    const { projectId, projectSlug, environment, flags, kills, version, commit, segments } = body;
    this.swap(EnvironmentView.build(org, projectId, projectSlug, environment, flags, kills, version, commit, segments ?? {}));
    return true;
  }

  /**
   * Serves a kill from the feed over the view it applies to, keeping its compiled flags, as the control plane
   * does. Undefined when this replica does not serve that view's base version: it then needs the whole view.
   */
  applyKill(org: string, change: KillChange): EnvironmentView | undefined {
    const current = org === this.org ? this.views.get(keyOf(change.projectId, change.environment)) : undefined;
    if (current === undefined || current.version !== change.baseVersion) return undefined;
    const view = current.withKills(change.kills, change.version, change.commit);
    this.swap(view);
    return view;
  }

  /**
   * Serves a delta over the view it starts from: that view's entries with the delta's. Undefined when this
   * replica does not serve the delta's `since`: it then needs the whole view. Throws (serving what it served)
   * when the result does not compile.
   */
  applyDelta(org: string, delta: ViewDelta): EnvironmentView | undefined {
    const current = org === this.org ? this.views.get(keyOf(delta.projectId, delta.environment)) : undefined;
    if (current === undefined || current.version !== delta.since) return undefined;
    const flags = patchedEntries(current.flags, delta.flags, delta.order?.flags);
    const segments = patchedEntries(current.segments, delta.segments, delta.order?.segments);
    const { projectId, projectSlug, environment, kills, version, commit } = delta;
    const view = EnvironmentView.build(org, projectId, projectSlug, environment, flags, kills, version, commit, segments);
    this.swap(view);
    return view;
  }

  remove(projectId: string, env: string): void {
    this.views.delete(keyOf(projectId, env));
    this.lost.delete(keyOf(projectId, env));
  }

  /**
   * Notes a view this replica served before a restart and cannot serve now (its saved file is damaged): its
   * sdk keys are answered 503 until upstream gives it again (put), never 404 as for a project that is gone.
   */
  markLost(projectId: string, env: string): void {
    if (!this.views.has(keyOf(projectId, env))) this.lost.set(keyOf(projectId, env), { projectId, environment: env });
  }

  isLost(projectId: string, env: string): boolean {
    return this.lost.has(keyOf(projectId, env));
  }

  /** The views noted lost, sorted. */
  lostViews(): Array<{ projectId: string; environment: string }> {
    return [...this.lost.values()].sort((a, b) => keyOf(a.projectId, a.environment).localeCompare(keyOf(b.projectId, b.environment)));
  }

  onChange(listener: (views: EnvironmentView[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private swap(view: EnvironmentView): void {
    this.views.set(keyOf(view.projectId, view.environment), view);
    this.lost.delete(keyOf(view.projectId, view.environment));
    for (const listener of this.listeners) listener([view]);
  }
}
