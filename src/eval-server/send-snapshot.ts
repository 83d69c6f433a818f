import type { Context } from 'koa';
import { matchesEtag } from './if-none-match.js';

/**
 * Sent with every snapshot answer, 304 included. Caches (a CDN in front of replicas) may keep it but must
 * revalidate; the key in Authorization decides what is served.
 */
export function snapshotHeaders(etag: string): Record<string, string> {
  return { ETag: etag, 'Cache-Control': 'no-cache', Vary: 'Authorization' };
}

/**
 * Answers GET /v1/snapshot from a view (service-spec §4): the ETag on every answer, 304 with no body when
 * If-None-Match names it.
 */
export function sendSnapshot(ctx: Context, view: { etag: string; snapshotJson(): string }): void {
  ctx.set(snapshotHeaders(view.etag));
  if (matchesEtag(ctx.get('if-none-match'), view.etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = 'application/json';
  ctx.body = view.snapshotJson();
}
