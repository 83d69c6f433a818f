/**
 * Deltas and stream patches (docs/sdk.md, "How updates arrive"): GET /v1/snapshot?since=<version> answers what
 * changed since the version the SDK holds, or the whole snapshot when the server no longer knows that version;
 * a stream event may carry the same change as a patch.
 */
import type { Snapshot, SnapshotFlag, SnapshotSegment } from '@flagops/core';
import { discardBody, etagOf, type Http, httpError, parseSnapshot } from './http.js';

/** What changed: each key's new entry, or null when it was removed. */
export interface SnapshotPatch {
  flags: Record<string, SnapshotFlag | null>;
  segments: Record<string, SnapshotSegment | null>;
}

export type SnapshotAnswer =
  | { kind: 'unchanged' }
  | { kind: 'full'; snapshot: Snapshot; etag: string }
  | { kind: 'delta'; version: number; environment: unknown; since: number; patch: SnapshotPatch; etag: string };

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function entries(value: unknown, what: string): Record<string, never> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) throw new Error(`the patch's ${what} are not an object`);
  for (const key of Object.keys(value))
    if (value[key] !== null && !isPlainObject(value[key])) throw new Error(`the patch's entry of ${key} is neither an object nor null`);
  return value as Record<string, never>;
}

/** Checks the outer shape of a patch (`{ flags, segments }`); the entries themselves are checked by compiling them. */
export function parsePatch(value: unknown): SnapshotPatch {
  if (!isPlainObject(value)) throw new Error('the patch is not { flags, segments }');
  return { flags: entries(value.flags, 'flags'), segments: entries(value.segments, 'segments') };
}

/**
 * GET /v1/snapshot?since=<version> with If-None-Match: 304, a delta (its body names `since`) or the whole
 * snapshot (a server that no longer knows `since`, or predates deltas).
 */
export function fetchSnapshotSince(http: Http, etag: string | null, since: number): Promise<SnapshotAnswer> {
  const headers: Record<string, string> = etag === null ? {} : { 'if-none-match': etag };
  return http.call(`/v1/snapshot?since=${since}`, { method: 'GET', headers }, async (res): Promise<SnapshotAnswer> => {
    if (res.status === 304) {
      await discardBody(res);
      return { kind: 'unchanged' };
    }
    if (res.status !== 200) throw await httpError(res, 'GET /v1/snapshot');
    const body = (await res.json()) as unknown;
    if (isPlainObject(body) && body.since !== undefined) {
      const { version, since: from, environment } = body;
      if (typeof version !== 'number' || !Number.isFinite(version) || typeof from !== 'number')
        throw new Error('the delta is not { version, environment, since, flags, segments }');
      return {
        kind: 'delta',
        version,
        environment,
        since: from,
        patch: parsePatch(body),
        etag: res.headers.get('etag') ?? etagOf(version),
      };
    }
    const snapshot = parseSnapshot(body);
    return { kind: 'full', snapshot, etag: res.headers.get('etag') ?? etagOf(snapshot.version) };
  });
}
