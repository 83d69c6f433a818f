import type { Snapshot } from '../model/index.js';
import { discardBody, type Http, httpError } from './http.js';

export type SnapshotFetch = { modified: true; snapshot: Snapshot; etag: string } | { modified: false };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks the outer shape of a snapshot; the flags themselves are checked by compiling them. */
export function parseSnapshot(value: unknown): Snapshot {
  if (!isPlainObject(value) || typeof value.version !== 'number' || !Number.isFinite(value.version) || !isPlainObject(value.flags)) {
    throw new Error('the snapshot is not { version, environment, flags }');
  }
  for (const key of Object.keys(value.flags)) {
    if (!isPlainObject(value.flags[key])) throw new Error(`the snapshot entry of ${key} is not an object`);
  }
  return value as unknown as Snapshot;
}

/** The ETag the server gives a snapshot version (service-spec §4: the letter v and the version, quoted). */
export function etagOf(version: number): string {
  return `"v${version}"`;
}

/** The version an ETag names, or null when it is not one of ours. */
export function versionOfEtag(etag: string | null): number | null {
  const match = etag === null ? null : /^(?:W\/)?"v(\d+)"$/.exec(etag.trim());
  return match ? Number(match[1]) : null;
}

/** GET /v1/snapshot with If-None-Match: 304 costs the server a header comparison and us nothing. */
export function fetchSnapshot(http: Http, etag: string | null): Promise<SnapshotFetch> {
  return http.call('/v1/snapshot', { method: 'GET', headers: etag === null ? {} : { 'if-none-match': etag } }, async (res) => {
    if (res.status === 304) {
      await discardBody(res);
      return { modified: false };
    }
    if (res.status !== 200) throw await httpError(res, 'GET /v1/snapshot');
    const snapshot = parseSnapshot(await res.json());
    return { modified: true, snapshot, etag: res.headers.get('etag') ?? etagOf(snapshot.version) };
  });
}

/**
 * HEAD /v1/snapshot with If-None-Match: remote mode learns the version without downloading flags it does not
 * evaluate. Resolves with the new version, or null when it has not changed.
 */
export function probeSnapshotVersion(http: Http, etag: string | null): Promise<number | null> {
  return http.call('/v1/snapshot', { method: 'HEAD', headers: etag === null ? {} : { 'if-none-match': etag } }, async (res) => {
    await discardBody(res);
    if (res.status === 304) return null;
    if (res.status !== 200) throw await httpError(res, 'HEAD /v1/snapshot');
    const version = versionOfEtag(res.headers.get('etag'));
    if (version === null) throw new Error('HEAD /v1/snapshot answered without a version ETag');
    return version;
  });
}
