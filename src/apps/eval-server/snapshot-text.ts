import type { EnvironmentName, SnapshotFlag, SnapshotSegment } from '@flagops/core';

/**
 * The JSON of each snapshot entry, made once per entry object. Entries are immutable and an unchanged flag
 * keeps its entry object from view to view, so a new version's snapshot text is assembled from the fragments
 * of the entries it shares with the one before, and only changed entries are serialized.
 */
const fragments = new WeakMap<SnapshotFlag, string>();
const segmentsTexts = new WeakMap<object, string>();

/** The JSON of one snapshot entry, as JSON.stringify writes it. */
export function entryJson(entry: SnapshotFlag): string {
  let text = fragments.get(entry);
  if (text === undefined) {
    text = JSON.stringify(entry);
    fragments.set(entry, text);
  }
  return text;
}

/** An entry's `"key":{...}` member of the flags object, made once per entry object (and key). */
interface Member {
  key: string;
  text: string;
}
const members = new WeakMap<SnapshotFlag, Member>();
/** The member of a killed flag: the same entry with `killed` true. */
const killedMembers = new WeakMap<SnapshotFlag, Member>();

function memberJson(key: string, entry: SnapshotFlag, killed: boolean): string {
  const cache = killed && entry.killed !== true ? killedMembers : members;
  const cached = cache.get(entry);
  if (cached !== undefined && cached.key === key) return cached.text;
  const text = `${JSON.stringify(key)}:${cache === killedMembers ? JSON.stringify({ ...entry, killed: true }) : entryJson(entry)}`;
  cache.set(entry, { key, text });
  return text;
}

function segmentsJson(segments: Readonly<Record<string, SnapshotSegment>>): string {
  let text = segmentsTexts.get(segments);
  if (text === undefined) {
    text = JSON.stringify(segments);
    segmentsTexts.set(segments, text);
  }
  return text;
}

/**
 * `{ version, environment, flags, segments }` exactly as JSON.stringify writes it (killed entries with `killed`
 * true), from the cached fragments: the cost of a new version is the entries that changed plus one copy of
 * the bytes.
 */
export function snapshotText(
  version: number,
  environment: EnvironmentName,
  /** Object.keys(flags), in that order. */
  keys: readonly string[],
  flags: Readonly<Record<string, SnapshotFlag>>,
  killed: ReadonlySet<string>,
  segments: Readonly<Record<string, SnapshotSegment>>,
): string {
  const parts: string[] = [];
  for (const key of keys) {
    parts.push(memberJson(key, flags[key], killed.has(key)));
  }
  return `{"version":${JSON.stringify(version)},"environment":${JSON.stringify(environment)},"flags":{${parts.join(',')}},"segments":${segmentsJson(segments)}}`;
}
