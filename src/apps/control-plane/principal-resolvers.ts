import type { Context } from 'koa';
import { bearerToken } from '../../foundations/auth/key-format.js';
import type { KeyService } from '../../foundations/auth/key-service.js';
import type { Principal } from '../../foundations/auth/principal.js';
import { UnauthorizedError } from '../../foundations/errors/kinds.js';

/**
 * One way of recognising the caller. Returns null when the request does not carry this kind of credential
 * (so the next resolver is tried) and throws UnauthorizedError when it carries one that is not valid.
 */
export type PrincipalResolver = (ctx: Context) => Principal | null | Promise<Principal | null>;

/** `Authorization: Bearer <admin or agent key>`; an sdk, revoked or unknown key is 401. */
export function bearerKeyResolver(keys: KeyService): PrincipalResolver {
  return (ctx) => {
    const header = ctx.get('authorization');
    if (header === '') return null;
    const token = bearerToken(header);
    if (token === null) throw new UnauthorizedError('the Authorization header must be "Bearer <key>"');
    return keys.controlPlanePrincipal(token, ctx.req);
  };
}

/** The caller's principal: the first resolver that recognises a credential wins; none → 401. */
export async function authenticate(ctx: Context, resolvers: readonly PrincipalResolver[]): Promise<Principal> {
  for (const resolve of resolvers) {
    const principal = await resolve(ctx);
    if (principal) return principal;
  }
  throw new UnauthorizedError();
}

/**
 * git's credentials: an admin or agent key as the password of `Authorization: Basic` (the username is ignored:
 * the key says who), or as a bearer token. Wrong tries count against the address as for every key.
 */
export function gitKeyResolver(keys: KeyService): PrincipalResolver {
  return (ctx) => {
    const header = ctx.get('authorization');
    const key = basicPassword(header) ?? bearerToken(header);
    if (key === null) throw new UnauthorizedError('git over HTTP needs an admin or agent key as the password');
    const principal = keys.authenticateRequest(key, ctx.req, 'git');
    if (principal === null || (principal.kind !== 'admin' && principal.kind !== 'agent'))
      throw new UnauthorizedError('git over HTTP needs an admin or agent key as the password');
    return principal;
  };
}

/** The password of an `Authorization: Basic` header (RFC 7617), or null. */
export function basicPassword(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : decoded.slice(colon + 1);
}
