import type { SnapshotFlag, SnapshotSegment } from '@flagops/core';
import type { EnvironmentView } from './environment-view.js';

/** What a patch is made from: the keys whose snapshot entries differ between two versions of one environment. */
export interface ChangedKeys {
  flags: readonly string[];
  segments: readonly string[];
  /** Whether a flag or segment was added: the order of the keys changed (a replica takes it whole). */
  added: boolean;
}

/** What of a view a diff and a patch read. */
export type PatchedView = Pick<EnvironmentView, 'version' | 'environment' | 'flags' | 'killed' | 'segments'>;

// Entries are immutable and, across views, the same object while unchanged: each is serialized once.
const entryText = new WeakMap<object, string>();
const killedText = new WeakMap<object, string>();

function jsonOf(entry: SnapshotFlag | SnapshotSegment): string {
  let text = entryText.get(entry);
  if (text === undefined) {
    text = JSON.stringify(entry);
    entryText.set(entry, text);
  }
  return text;
}

/** A flag's entry as the view's snapshot has it: `killed: true` when the kill overlay names it, as snapshotJson does. */
function flagJson(view: PatchedView, key: string): string {
  const entry = view.flags[key];
  if (!view.killed.has(key)) return jsonOf(entry);
  let text = killedText.get(entry);
  if (text === undefined) {
    text = JSON.stringify({ ...entry, killed: true });
    killedText.set(entry, text);
  }
  return text;
}

/** Compares by reference first (unchanged entries are shared between views), then by value. */
function sameEntry(a: SnapshotFlag | SnapshotSegment, b: SnapshotFlag | SnapshotSegment): boolean {
  return a === b || sameJson(a, b);
}

/**
 * Whether two JSON values serialize the same, key order included (a replica serves the snapshot byte for byte),
 * without serializing them: cheaper than comparing their JSON when no entry is shared.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  // A difference it reports where the JSON has none (an undefined property) only sends an entry unchanged.
  for (let i = 0; i < keysA.length; i++) {
    const key = keysA[i];
    if (key !== keysB[i] || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/**
 * The flags and segments whose snapshot entries differ from `before` to `after`: added, changed (kill state
 * included) or removed. A kill alone shares the flags object between the two views, so only the kill sets are
 * compared; otherwise every key is, by reference and then by its cached JSON.
 */
export function diffViews(before: PatchedView, after: PatchedView): ChangedKeys {
  const flags: string[] = [];
  let added = false;
  if (before.flags === after.flags) {
    for (const key of after.killed) if (!before.killed.has(key)) flags.push(key);
    for (const key of before.killed) if (!after.killed.has(key)) flags.push(key);
  } else {
    for (const key of Object.keys(after.flags)) {
      if (!Object.hasOwn(before.flags, key)) {
        flags.push(key);
        added = true;
      } else if (before.killed.has(key) !== after.killed.has(key) || !sameEntry(before.flags[key], after.flags[key])) flags.push(key);
    }
    for (const key of Object.keys(before.flags)) if (!Object.hasOwn(after.flags, key)) flags.push(key);
  }
  const segments: string[] = [];
  if (before.segments !== after.segments) {
    for (const key of Object.keys(after.segments)) {
      if (!Object.hasOwn(before.segments, key)) added = true;
      if (!Object.hasOwn(before.segments, key) || !sameEntry(before.segments[key], after.segments[key])) segments.push(key);
    }
    for (const key of Object.keys(before.segments)) if (!Object.hasOwn(after.segments, key)) segments.push(key);
  }
  return { flags, segments, added };
}

/**
 * The patch `{"flags":{…},"segments":{…}}` that takes a snapshot to `view`'s: for each changed key, its entry
 * in `view` (as the full snapshot has it), or null when `view` has none. Built from cached entry JSON, so it
 * costs what the changed entries weigh, not the environment.
 */
export function patchJson(view: PatchedView, changed: ChangedKeys): string {
  let out = '{"flags":{';
  let first = true;
  for (const key of changed.flags) {
    out += `${first ? '' : ','}${JSON.stringify(key)}:${Object.hasOwn(view.flags, key) ? flagJson(view, key) : 'null'}`;
    first = false;
  }
  out += '},"segments":{';
  first = true;
  for (const key of changed.segments) {
    out += `${first ? '' : ','}${JSON.stringify(key)}:${Object.hasOwn(view.segments, key) ? jsonOf(view.segments[key]) : 'null'}`;
    first = false;
  }
  return `${out}}}`;
}

/** The delta body `{ version, environment, since, flags, segments }` from a patch that takes `since` to `view`. */
export function deltaJson(view: PatchedView, since: number, patch: string): string {
  return `{"version":${view.version},"environment":${JSON.stringify(view.environment)},"since":${since},${patch.slice(1)}`;
}
