import type { EnvironmentName, KillsFile, SnapshotFlag, SnapshotSegment } from '@flagops/core';
import { setOwn } from '@flagops/core';
import type { EnvironmentView } from '../eval-server/environment-view.js';
import { parseSince, type SnapshotChanges } from '../eval-server/snapshot-changes.js';
import type { ChangedKeys } from '../eval-server/snapshot-patch.js';

/**
 * GET /api/v1/replica/snapshots/:projectId/:env?since=<version>: what changed in one view since the version the
 * replica serves. Like the view body, flags are the entries before the kill overlay (`killed` false) and the
 * kills come whole, so the replica builds the same view the control plane serves.
 */
export interface ViewDelta {
  projectId: string;
  projectSlug: string;
  environment: EnvironmentName;
  version: number;
  commit: string | null;
  since: number;
  /** Each changed flag's entry, or null when it was removed. */
  flags: Record<string, SnapshotFlag | null>;
  segments: Record<string, SnapshotSegment | null>;
  kills: KillsFile;
  /**
   * Every flag key and every segment key of the view in its order, sent when keys were added since `since`: a
   * replica's snapshot is byte for byte the control plane's, key order included.
   */
  order?: { flags: string[]; segments: string[] };
}

/** The delta from the `since` a replica sent (a query value, unchecked), or undefined: then it gets the whole view. */
export function viewDeltaFor(
  view: EnvironmentView,
  sinceParam: unknown,
  changes: Pick<SnapshotChanges, 'changedSince'>,
): ViewDelta | undefined {
  const since = parseSince(sinceParam);
  const changed = since === undefined ? undefined : changes.changedSince(view, since);
  return changed === undefined ? undefined : viewDelta(view, since!, changed);
}

function viewDelta(view: EnvironmentView, since: number, changed: ChangedKeys): ViewDelta {
  const flags: Record<string, SnapshotFlag | null> = {};
  for (const key of changed.flags) setOwn(flags, key, Object.hasOwn(view.flags, key) ? view.flags[key] : null);
  const segments: Record<string, SnapshotSegment | null> = {};
  for (const key of changed.segments) setOwn(segments, key, Object.hasOwn(view.segments, key) ? view.segments[key] : null);
  const { projectId, projectSlug, environment, version, commit, kills } = view;
  const delta: ViewDelta = { projectId, projectSlug, environment, version, commit, since, flags, segments, kills };
  if (changed.added) delta.order = { flags: Object.keys(view.flags), segments: Object.keys(view.segments) };
  return delta;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const entriesOrNull = (v: unknown) => isObject(v) && Object.values(v).every((e) => e === null || isObject(e));

/** A defensive check of a delta from the network: a bad one is never applied (the replica fetches the whole view). */
export function isViewDelta(value: unknown): value is ViewDelta {
  return (
    isObject(value) &&
    typeof value.projectId === 'string' &&
    typeof value.projectSlug === 'string' &&
    typeof value.environment === 'string' &&
    Number.isSafeInteger(value.version) &&
    Number.isSafeInteger(value.since) &&
    (value.commit === null || typeof value.commit === 'string') &&
    entriesOrNull(value.flags) &&
    entriesOrNull(value.segments) &&
    isObject(value.kills) &&
    isObject(value.kills.kills) &&
    (value.order === undefined || (isObject(value.order) && isKeyList(value.order.flags) && isKeyList(value.order.segments)))
  );
}

const isKeyList = (v: unknown) => Array.isArray(v) && v.every((k) => typeof k === 'string');

/**
 * `before` with a delta's entries (null removes; unchanged entries stay the same objects), in `order` when
 * given. Throws when `order` does not name exactly the keys the result has.
 */
export function patchedEntries<T>(
  before: Readonly<Record<string, T>>,
  changes: Record<string, T | null>,
  order?: string[],
): Record<string, T> {
  const after = { ...before };
  for (const key of Object.keys(changes)) {
    const entry = changes[key];
    if (entry === null) delete after[key];
    else setOwn(after, key, entry);
  }
  if (order === undefined) return after;
  const ordered: Record<string, T> = {};
  for (const key of order) {
    if (!Object.hasOwn(after, key)) throw new Error(`the delta orders ${key}, which the view does not have`);
    setOwn(ordered, key, after[key]);
  }
  if (Object.keys(ordered).length !== Object.keys(after).length) throw new Error('the delta does not order every key of the view');
  return ordered;
}
