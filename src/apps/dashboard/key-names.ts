import type { KeyService } from '../../foundations/auth/key-service.js';
import { limitedToProjects } from '../../foundations/auth/scope.js';
import { route } from '../control-plane/route-table.js';

/**
 * GET /dashboard/api/key-names: `{ keys: [ { prefix, kind, name? } ] }`, the organisation's admin and agent keys
 * (revoked ones too: they still name old kills) without ids or secrets. Kill entries record a key's prefix; the page shows
 * the key's name beside it. The audit trail already names every key that acted, so anyone who may read it may
 * read this.
 */
export function keyNamesRoute(keys: Pick<KeyService, 'listKeys'>) {
  return route({
    method: 'GET',
    path: '/dashboard/api/key-names',
    permission: 'audit.read',
    body: 'none',
    handle: async ({ ws }) => {
      // A credential limited to projects reads their audit entries only: keys of other projects only are none of its business.
      const visible = limitedToProjects(ws.principal.scope)
        ? new Set([...(await ws.readServed()).state.projects.values()].map((p) => p.project.id))
        : undefined;
      // SDK keys change nothing, so no audit entry or kill names one: they are not listed.
      const named = keys.listKeys(ws.org).filter((k) => {
        if (k.kind === 'sdk') return false;
        return visible === undefined || k.projects === undefined || k.projects.some((id) => visible.has(id));
      });
      return { body: { keys: named.map((k) => ({ prefix: k.prefix, kind: k.kind, ...(k.name ? { name: k.name } : {}) })) } };
    },
  });
}
