import { h } from './dom.js';
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

/**
 * `element` as it is when the role may use `permission`; otherwise shown read-only: its fields disabled and
 * its buttons hidden (a fieldset disables every control in it), under a line saying why.
 */
export function readOnlyUnless(ctx: Pick<PageContext, 'session'>, permission: string, element: HTMLElement, what: string): HTMLElement {
  if (may(ctx, permission)) return element;
  return h(
    'fieldset',
    { class: 'read-only', disabled: true },
    h('p', { class: 'muted', 'data-slot': 'read-only' }, `Your role (${ctx.session.role ?? 'viewer'}) may not change ${what}.`),
    element,
  );
}
