import type { PageContext } from './route.js';
import type { EnvironmentName } from './types.js';

/**
 * Whether the signed-in person's role may do this: the page offers only those controls (the server's
 * permission table decides, and refuses the rest anyway). A session answer without the list (an older server)
 * offers everything, as before roles.
 */
export function may(ctx: Pick<PageContext, 'session'>, permission: string): boolean {
  return ctx.session.permissions?.includes(permission) ?? true;
}

export function mayPromoteInto(ctx: Pick<PageContext, 'session'>, env: EnvironmentName): boolean {
  return ctx.session.promoteInto?.includes(env) ?? true;
}
