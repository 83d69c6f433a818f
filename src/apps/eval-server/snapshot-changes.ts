import type { EnvironmentName } from '@flagops/core';
import type { EnvironmentView } from './environment-view.js';
import { type ChangedKeys, deltaJson, diffViews, patchJson } from './snapshot-patch.js';

/** A stream event carries its patch when the patch is at most this long as JSON; a bigger change is fetched. */
export const PATCH_MAX_BYTES = 64 * 1024;
/** The window of recent changes kept per environment (docs/evaluation-server.md, "Deltas"). */
export const WINDOW_VERSIONS = 64;
export const WINDOW_BYTES = 1024 * 1024;

/** What serves views and announces each swap: the evaluation server's SnapshotHolder, a replica's ReplicaHolder. */
export interface ViewHolder {
  onChange(listener: (views: EnvironmentView[]) => void): () => void;
  view(org: string, projectId: string, env: EnvironmentName): EnvironmentView | undefined;
}

/** A view swapped in, with what a stream sends of it. */
export interface AnnouncedChange {
  view: EnvironmentView;
  /** The version the view follows; null for the first view of an environment. */
  since: number | null;
  /** The patch `{"flags":…,"segments":…}` from `since`, when it is at most PATCH_MAX_BYTES; null otherwise. */
  patch: string | null;
}

interface Change {
  from: number;
  to: number;
  changed: ChangedKeys;
  bytes: number;
}

/** One environment's newest view and the changes that led to it, oldest first, each `to` the next one's `from`. */
interface Recent {
  last: EnvironmentView;
  changes: Change[];
  bytes: number;
}

export interface WindowOptions {
  versions?: number;
  bytes?: number;
}

const scopeOf = (org: string, projectId: string, env: string) => `${org}\u0000${projectId}\u0000${env}`;

/**
 * The recent changes of every environment a holder serves, for deltas (GET /v1/snapshot?since=) and stream
 * patches. It hears each swap, diffs the previous view against the new one (by reference, then by value; a
 * kill compares kill sets alone) and keeps the changed keys of the last WINDOW_VERSIONS changes, and no more
 * than WINDOW_BYTES of them as JSON: never old views, since a delta is rendered from the view it leads to.
 */
export class SnapshotChanges {
  private readonly recent = new Map<string, Recent>();
  private readonly listeners = new Set<(changes: AnnouncedChange[]) => void>();
  /** Rendered patches per view and `since`: many clients ask for the same one after a change. */
  private readonly rendered = new WeakMap<EnvironmentView, Map<number, string>>();
  private readonly maxVersions: number;
  private readonly maxBytes: number;
  private readonly stopListening: () => void;

  constructor(
    private readonly holder: ViewHolder,
    options: WindowOptions = {},
  ) {
    this.maxVersions = options.versions ?? WINDOW_VERSIONS;
    this.maxBytes = options.bytes ?? WINDOW_BYTES;
    this.stopListening = holder.onChange((views) => this.record(views));
  }

  /** Hears every swap after it is recorded, with its patch built once. */
  onChange(listener: (changes: AnnouncedChange[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The patch that takes the snapshot of version `since` of `view`'s environment to `view`'s, or undefined when
   * `since` is not a version this window knows (too old, never served here, in the future) or is `view`'s own.
   */
  patch(view: EnvironmentView, since: number): string | undefined {
    const cached = this.rendered.get(view)?.get(since);
    if (cached !== undefined) return cached;
    const changed = this.changedSince(view, since);
    if (changed === undefined) return undefined;
    const patch = patchJson(view, changed);
    this.remember(view, since, patch);
    return patch;
  }

  /** The delta body `{ version, environment, since, flags, segments }`, or undefined as for patch(). */
  delta(view: EnvironmentView, since: number): string | undefined {
    const patch = this.patch(view, since);
    return patch === undefined ? undefined : deltaJson(view, since, patch);
  }

  /** The flags and segments changed from version `since` to `view`, or undefined as for patch(). */
  changedSince(view: EnvironmentView, since: number): ChangedKeys | undefined {
    const scope = scopeOf(view.org, view.projectId, view.environment);
    const recent = this.recent.get(scope);
    // Never heard of (made before this listened): it is the start of its window from now on.
    if (recent === undefined) this.recent.set(scope, { last: view, changes: [], bytes: 0 });
    if (recent === undefined || recent.last.version !== view.version || since === view.version) return undefined;
    const { changes } = recent;
    let start = changes.length - 1;
    while (start >= 0 && changes[start].from !== since) start--;
    if (start < 0) return undefined;
    if (start === changes.length - 1) return changes[start].changed;
    const flags = new Set<string>();
    const segments = new Set<string>();
    let added = false;
    for (let i = start; i < changes.length; i++) {
      for (const key of changes[i].changed.flags) flags.add(key);
      for (const key of changes[i].changed.segments) segments.add(key);
      added ||= changes[i].changed.added;
    }
    return { flags: [...flags], segments: [...segments], added };
  }

  close(): void {
    this.stopListening();
    this.listeners.clear();
  }

  private record(views: EnvironmentView[]): void {
    const announced = views.map((view) => this.recordOne(view));
    for (const org of new Set(views.map((v) => v.org))) this.forgetRemoved(org);
    for (const listener of this.listeners) listener(announced);
  }

  private recordOne(view: EnvironmentView): AnnouncedChange {
    const scope = scopeOf(view.org, view.projectId, view.environment);
    const recent = this.recent.get(scope);
    if (recent === undefined) {
      this.recent.set(scope, { last: view, changes: [], bytes: 0 });
      return { view, since: null, patch: null };
    }
    const before = recent.last;
    recent.last = view;
    const changed = diffViews(before, view);
    const patch = patchJson(view, changed);
    const bytes = Buffer.byteLength(patch);
    // The same version with the same content, made again (a reload after a kill): what led to it still holds.
    const same = view.version === before.version && changed.flags.length === 0 && changed.segments.length === 0;
    if (view.version <= before.version && !same) {
      // History went back (main was reset): a version may now name other content, so none is known any more.
      recent.changes = [];
      recent.bytes = 0;
    } else if (view.version > before.version) {
      recent.changes.push({ from: before.version, to: view.version, changed, bytes });
      recent.bytes += bytes;
      while (recent.changes.length > this.maxVersions || (recent.changes.length > 0 && recent.bytes > this.maxBytes))
        recent.bytes -= recent.changes.shift()!.bytes;
      if (recent.changes.length > 0) this.remember(view, before.version, patch);
    }
    return { view, since: before.version, patch: bytes <= PATCH_MAX_BYTES ? patch : null };
  }

  /** Drops the windows of environments the holder no longer serves (a deleted project). */
  private forgetRemoved(org: string): void {
    for (const [scope, { last }] of this.recent)
      if (last.org === org && this.holder.view(org, last.projectId, last.environment) === undefined) this.recent.delete(scope);
  }

  private remember(view: EnvironmentView, since: number, patch: string): void {
    let byView = this.rendered.get(view);
    if (byView === undefined) {
      byView = new Map();
      this.rendered.set(view, byView);
    }
    byView.set(since, patch);
  }
}

/**
 * One SnapshotChanges per holder, shared by the snapshot route, the stream hub and the replica feed. The
 * composition root makes it before the holder serves anything (attachStreamHub, a replica's StreamHub), so
 * every change is heard.
 */
const registry = new WeakMap<ViewHolder, SnapshotChanges>();

export function changesFor(holder: ViewHolder): SnapshotChanges {
  let changes = registry.get(holder);
  if (changes === undefined) {
    changes = new SnapshotChanges(holder);
    registry.set(holder, changes);
  }
  return changes;
}

/**
 * The `since` of a request: a version number, or undefined for anything else (absent, repeated, negative,
 * not an integer), which is answered as if it were absent (the full snapshot).
 */
export function parseSince(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}
