import type { KeyService } from '../../foundations/auth/key-service.js';
import { limitedToProjects } from '../../foundations/auth/scope.js';
import { route } from '../control-plane/route-table.js';

/**
 * GET /dashboard/api/key-names: `{ keys: [ { prefix, kind, name? } ] }`, the organisation's keys (revoked ones
 * too: they still name old kills) without ids or secrets. Kill entries record a key's prefix; the page shows
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
      const named = keys.listKeys(ws.org).filter((k) => {
        const projects = k.kind === 'sdk' ? [k.projectId] : k.projects;
        return visible === undefined || projects === undefined || projects.some((id) => id !== undefined && visible.has(id));
      });
      return { body: { keys: named.map((k) => ({ prefix: k.prefix, kind: k.kind, ...(k.name ? { name: k.name } : {}) })) } };
    },
  });
}
