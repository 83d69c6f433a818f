import { optionalQuery, requiredQuery } from '../http/params.js';
import { route } from '../http/route.js';
import { archiveFlag, createFlag, getFlag, listFlags, lookupFlag, patchFlag } from './flag-service.js';

// /flags/lookup comes before /flags/:id, which would otherwise take "lookup" for an id.
export const flagRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/projects/:id/flags',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, params, query }) => ({ body: { flags: await listFlags(ws, params.id, optionalQuery(query, 'key')) } }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/projects/:id/flags',
    permission: 'flag.create',
    body: 'flag-create',
    handle: async ({ ws, params, body }) => ({ status: 201, body: await createFlag(ws, params.id, body) }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/flags/lookup',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, query }) => {
      const projectSlug = requiredQuery(query, 'projectSlug');
      const key = requiredQuery(query, 'key');
      return { body: await lookupFlag(ws, projectSlug, key) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/flags/:id',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, params }) => ({ body: await getFlag(ws, params.id) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/flags/:id',
    permission: 'flag.update',
    body: 'flag-patch',
    handle: async ({ ws, params, body }) => ({ body: await patchFlag(ws, params.id, body) }),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/flags/:id',
    permission: 'flag.archive',
    body: 'none',
    handle: async ({ ws, params }) => ({ body: await archiveFlag(ws, params.id) }),
  }),
];
