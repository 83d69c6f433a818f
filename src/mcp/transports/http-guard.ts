import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { HttpSettings } from '../settings.js';
import { isLoopback } from '../settings.js';

export interface Refusal {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

/**
 * Who may use the agent key through this port. Bound to loopback, only loopback Host headers pass: a web
 * page's DNS-rebinding trick arrives with its own host name. With a token, the Authorization header must carry it.
 */
export function refuseRequest(req: IncomingMessage, settings: HttpSettings): Refusal | null {
  if (isLoopback(settings.host)) {
    const hostname = hostnameOf(req.headers.host);
    if (hostname === null || !isLoopback(hostname))
      return { status: 403, message: `Host ${JSON.stringify(req.headers.host ?? '')} is not allowed` };
  }
  if (settings.token !== undefined && !sameSecret(req.headers.authorization ?? '', `Bearer ${settings.token}`)) {
    return { status: 401, message: 'Authorization: Bearer <FLAGOPS_MCP_TOKEN> is required', headers: { 'www-authenticate': 'Bearer' } };
  }
  return null;
}

function hostnameOf(host: string | undefined): string | null {
  if (!host) return null;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
