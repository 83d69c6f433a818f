import type { TLSSocket } from 'node:tls';
import type { Context } from 'koa';

export interface OriginSettings {
  /**
   * Believe X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-For. Only behind a reverse proxy that sets
   * them: anyone can send these headers, and believing them directly would let a client pick its own origin.
   */
  trustProxy: boolean;
}

function firstValue(header: string): string {
  return header.split(',', 1)[0].trim();
}

/** Whether the browser reached us over https: the socket, or the proxy's X-Forwarded-Proto when trusted. */
export function isSecureRequest(ctx: Context, settings: OriginSettings): boolean {
  if (settings.trustProxy) {
    const forwarded = ctx.get('x-forwarded-proto');
    if (forwarded !== '') return firstValue(forwarded).toLowerCase() === 'https';
  }
  return Boolean((ctx.req.socket as TLSSocket).encrypted);
}

/** The origin the browser sees for this server: what a same-origin request carries in its Origin header. */
export function ownOrigin(ctx: Context, settings: OriginSettings): string {
  const forwardedHost = settings.trustProxy ? ctx.get('x-forwarded-host') : '';
  const host = forwardedHost !== '' ? firstValue(forwardedHost) : ctx.get('host');
  return `${isSecureRequest(ctx, settings) ? 'https' : 'http'}://${host.toLowerCase()}`;
}

/** The client's address, for sign-in throttling: the proxy's X-Forwarded-For when trusted. */
export function clientAddress(ctx: Context, settings: OriginSettings): string {
  const forwarded = settings.trustProxy ? ctx.get('x-forwarded-for') : '';
  return forwarded !== '' ? firstValue(forwarded) : (ctx.req.socket.remoteAddress ?? 'unknown');
}
