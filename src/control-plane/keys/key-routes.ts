import { route } from '../http/route.js';
import { createKey, listKeys, revokeKey } from './key-service.js';

/** Keys are managed by admin keys only (contract §3, §5); the key itself is shown once, in the 201. */
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
