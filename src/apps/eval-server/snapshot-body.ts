import type { ContentCoding } from '../../foundations/http/content-encoding.js';
import { EncodedBodies } from '../../foundations/http/encoded-bodies.js';

/** What a snapshot answer is made from: a served view (EnvironmentView), immutable. */
export interface ServedSnapshot {
  etag: string;
  snapshotJson(): string;
}

const bodies = new EncodedBodies<ServedSnapshot>((view) => view.snapshotJson());

/**
 * The GET /v1/snapshot body of a view in `coding`: the JSON text, or its bytes compressed once per view (per
 * version) and coding however many clients fetch it, on the main server and on replicas alike.
 */
export function snapshotBody(view: ServedSnapshot, coding: ContentCoding): string | Promise<Buffer> {
  return bodies.get(view, coding);
}
