import { isEnvironmentName } from '@flagops/core';
import { statsScope } from '../../../features/stats/evaluation-counter.js';
import type { ExposureCell, TrackCell } from '../../../features/stats/event-counts.js';
import { HOUR_MS, hourStart, oldestKeptHour } from '../../../features/stats/hours.js';
import { InvalidInputError, NotFoundError } from '../../../foundations/errors/kinds.js';
import { viewCountRules } from '../../eval-server/count-rules.js';
import { parseCountReport } from '../../eval-server/counts.js';
import type { SnapshotHolder } from '../../eval-server/snapshot-holder.js';

/** A batch's events of one environment, counted as POST /v1/events counts them. */
export interface BatchEvents {
  scope: string;
  exposures: ExposureCell[];
  track: TrackCell[];
}

export interface BatchEntry {
  scope: string;
  flagKey: string;
  variation: string;
  hourStartMs: number;
  count: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A replica's counts batch: `{ batchId, scopes: [{ projectId, environment, counts: [...] }] }`, each scope's
 * `counts` in the format of POST /v1/counts and checked by the same parser. Checked whole before anything
 * is counted, so a refused batch left nothing behind; counts of a flag or variation the environment no longer
 * serves (removed while the replica held them) are left out, not a reason to refuse the batch.
 */
export function countsBatch(
  body: unknown,
  org: string,
  holder: SnapshotHolder,
): { batchId: string; entries: BatchEntry[]; events: BatchEvents[] } {
  if (!isObject(body)) throw new InvalidInputError('the body must be { batchId, scopes }', 'body');
  const { batchId, scopes } = body;
  if (typeof batchId !== 'string' || !/^[A-Za-z0-9-]{8,64}$/.test(batchId))
    throw new InvalidInputError('batchId must be 8 to 64 letters, digits or dashes', 'batchId');
  if (!Array.isArray(scopes)) throw new InvalidInputError('scopes must be an array', 'scopes');
  const now = Date.now();
  const entries: BatchEntry[] = [];
  const events: BatchEvents[] = [];
  scopes.forEach((s, i) => {
    if (!isObject(s) || typeof s.projectId !== 'string' || !isEnvironmentName(s.environment)) {
      throw new InvalidInputError(`scopes[${i}] must be { projectId, environment, counts }`, `scopes[${i}]`);
    }
    const view = holder.view(org, s.projectId, s.environment);
    if (!view) throw new NotFoundError(`project ${s.projectId}`);
    const scope = statsScope(org, s.projectId, s.environment);
    // A replica adds up what it served and what SDKs reported to it (each report bounded there) for as long as
    // upstream was away: its entries are not bound per entry, only by what the stats can hold.
    const rules = { ...viewCountRules(view, now), maxCount: Number.MAX_SAFE_INTEGER };
    for (const e of parseCountReport({ counts: s.counts }, rules).entries) entries.push({ scope, ...e });
    // Exposures and track events (replicas before events send neither): checked as evaluation counts are.
    const exposures = s.exposures === undefined ? [] : parseCountReport({ counts: s.exposures }, rules).entries;
    const track = s.track === undefined ? [] : parseTrack(s.track, `scopes[${i}].track`, now);
    if (exposures.length > 0 || track.length > 0) events.push({ scope, exposures, track });
  });
  return { batchId, entries, events };
}

const TRACK_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

function parseTrack(list: unknown, at: string, now: number): TrackCell[] {
  if (!Array.isArray(list)) throw new InvalidInputError(`${at} must be an array`, at);
  const oldest = oldestKeptHour(now);
  const newest = hourStart(now) + HOUR_MS;
  return list.map((t, i) => {
    const field = `${at}[${i}]`;
    if (!isObject(t) || typeof t.name !== 'string' || !TRACK_NAME.test(t.name))
      throw new InvalidInputError(`${field} must be { name, hour, count, sumMicros } with a valid event name`, field);
    const hourMs = typeof t.hour === 'string' ? Date.parse(t.hour) : Number.NaN;
    if (!Number.isFinite(hourMs) || hourMs % HOUR_MS !== 0 || hourMs < oldest || hourMs > newest)
      throw new InvalidInputError(`${field}.hour must be the start of an hour kept by the stats`, `${field}.hour`);
    if (typeof t.count !== 'number' || !Number.isSafeInteger(t.count) || t.count <= 0)
      throw new InvalidInputError(`${field}.count must be a positive whole number`, `${field}.count`);
    if (typeof t.sumMicros !== 'number' || !Number.isSafeInteger(t.sumMicros))
      throw new InvalidInputError(`${field}.sumMicros must be a whole number`, `${field}.sumMicros`);
    return { name: t.name, hourStartMs: hourMs, count: t.count, sumMicros: t.sumMicros };
  });
}
