import type Koa from 'koa';
import { type ContentCoding, compress, countBodyBytes, negotiateCoding } from './content-encoding.js';

/**
 * The Vary of answers whose body depends on the key sent and is compressed as the request accepts: a cache (a
 * CDN) keeps one copy per key and coding, and never gives a gzip body to a client that did not ask for one.
 */
export const VARY_KEY_AND_ENCODING = 'Authorization, Accept-Encoding';

/** The headers of a JSON body sent in `coding`. */
export function encodedJsonHeaders(coding: ContentCoding): Record<string, string> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8' };
  if (coding !== 'identity') headers['Content-Encoding'] = coding;
  return headers;
}

/**
 * Sets a JSON answer on a Koa context, already in `coding`. Content-Encoding is set only here, with the body,
 * so an error thrown before (while compressing) never leaves it on an error answer.
 */
export function setEncodedJson(ctx: Koa.Context, body: string | Buffer, coding: ContentCoding): void {
  ctx.set(encodedJsonHeaders(coding));
  ctx.body = body;
  countBodyBytes(coding, ctx.length ?? 0); // Koa measured it, setting Content-Length
}

/** Compresses a JSON body made for this request alone (not kept) as the request accepts, and sets it. */
export async function sendJsonPerRequest(ctx: Koa.Context, json: string): Promise<void> {
  const coding = negotiateCoding(ctx.get('accept-encoding'));
  setEncodedJson(ctx, coding === 'identity' ? json : await compress(json, coding, 'per-request'), coding);
}
