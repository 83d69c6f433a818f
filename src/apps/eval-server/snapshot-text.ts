import type { EnvironmentName, SnapshotFlag, SnapshotSegment } from '@flagops/core';

/**
 * The JSON of each snapshot entry, made once per entry object. Entries are immutable and an unchanged flag
 * keeps its entry object from view to view, so a new version's snapshot text is assembled from the fragments
 * of the entries it shares with the one before, and only changed entries are serialized.
 */
const fragments = new WeakMap<SnapshotFlag, string>();
/** The JSON of a killed flag's entry: the same entry with `killed` true. */
const killedFragments = new WeakMap<SnapshotFlag, string>();
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

function killedEntryJson(entry: SnapshotFlag): string {
  if (entry.killed === true) return entryJson(entry);
  let text = killedFragments.get(entry);
  if (text === undefined) {
    text = JSON.stringify({ ...entry, killed: true });
    killedFragments.set(entry, text);
  }
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
    const entry = flags[key];
    parts.push(`${JSON.stringify(key)}:${killed.has(key) ? killedEntryJson(entry) : entryJson(entry)}`);
  }
  return `{"version":${JSON.stringify(version)},"environment":${JSON.stringify(environment)},"flags":{${parts.join(',')}},"segments":${segmentsJson(segments)}}`;
}
