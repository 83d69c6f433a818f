import type Koa from 'koa';
import { bearerToken } from '../../auth/key-format.js';
import type { KeyService } from '../../auth/key-service.js';
import type { Principal } from '../../auth/principal.js';
import { ForbiddenError } from '../../errors/kinds.js';

/**
 * Replication is admin-only: a replica can verify any sdk key of the organisation and reads every project,
 * which is more than an agent key may (contract §5 keeps key matters to admins).
 */
export function replicaPrincipal(ctx: Koa.Context, keys: KeyService): Principal {
  const principal = keys.controlPlanePrincipal(bearerToken(ctx.get('authorization')), ctx.req);
  if (principal.kind !== 'admin') throw new ForbiddenError('replication needs an admin key');
  return principal;
}
