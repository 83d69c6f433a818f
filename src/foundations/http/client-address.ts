import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';

/**
 * Makes a Koa app believe the X-Forwarded-* headers of `proxies` reverse proxies (FLAGOPS_TRUST_PROXY):
 * `ctx.ip` is then the address the outermost trusted proxy saw, `ctx.protocol` and `ctx.host` what the browser
 * used. With 0 the headers are ignored, as anyone can send them.
 */
export function trustProxies(app: Koa, proxies: number): void {
  app.proxy = proxies > 0;
  app.maxIpsCount = proxies;
}

/**
 * The client's address as `ctx.ip` gives it in an app set up by trustProxies, for code that answers before Koa
 * (the evaluation fast path). Each proxy appends the address it saw to X-Forwarded-For, so the client's is the
 * `proxies`-th entry from the end; entries before it are whatever the client chose to send.
 */
export function clientAddress(req: IncomingMessage, proxies: number): string {
  const forwarded = proxies > 0 ? req.headers['x-forwarded-for'] : undefined;
  if (typeof forwarded === 'string' && forwarded !== '') {
    const entries = forwarded.split(',');
    const entry = entries[Math.max(0, entries.length - proxies)].trim();
    if (entry !== '') return entry;
  }
  return req.socket.remoteAddress ?? '';
}
