import type { CreatedKey, KeyView } from '../../foundations/auth/principal.js';
import { projectById } from '../../foundations/repository/state-lookup.js';
import type { KeyCreateBody } from '../../foundations/validation/api-bodies.js';
import { route } from './route-table.js';
import type { Workspace } from './workspace.js';

/** Keys are managed by admin keys only; the key itself is shown once, in the 201. */
export const keyRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/keys',
    permission: 'keys.manage',
    body: 'key-create',
    handle: async ({ ws, body }) => ({ status: 201, body: await createKey(ws, body) }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/keys',
    permission: 'keys.manage',
    body: 'none',
    handle: async ({ ws }) => ({ body: { keys: listKeys(ws) } }),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/keys/:id',
    permission: 'keys.manage',
    body: 'none',
    handle: async ({ ws, params }) => ({ body: await revokeKey(ws, params.id) }),
  }),
];

/** An sdk key is scoped to a project of the caller's organisation: another organisation's project is 404. */
export async function createKey(ws: Workspace, body: KeyCreateBody): Promise<CreatedKey> {
  if (body.kind === 'sdk') {
    const { state } = await ws.repo.readServed();
    projectById(state, body.projectId!);
  }
  return ws.deps.keys.createKey(ws.org, body);
}

export function listKeys(ws: Workspace): KeyView[] {
  return ws.deps.keys.listKeys(ws.org);
}

export function revokeKey(ws: Workspace, id: string): Promise<KeyView> {
  return ws.deps.keys.revokeKey(ws.org, id);
}
