import type Koa from 'koa';
import { bearerToken } from '../../auth/key-format.js';

/**
 * The SDK key of a stream request: the Authorization header, or `?sdkKey=` because a browser's EventSource
 * cannot set headers. SDK keys are publishable (service-spec §5), so a key in a URL (and so in access logs)
 * discloses nothing a page does not already ship.
 */
export function streamRequestKey(ctx: Koa.Context): string | null {
  const fromHeader = bearerToken(ctx.get('authorization'));
  if (fromHeader !== null) return fromHeader;
  const query = ctx.query.sdkKey;
  return typeof query === 'string' && query !== '' ? query : null;
}
