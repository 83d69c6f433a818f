import { type Route, route } from '../../control-plane/route-table.js';
import type { SessionService } from '../sessions/session-service.js';
import type { UserService } from './user-service.js';

/**
 * Dashboard users, managed like keys: a user's password is a credential, so `users.manage` is held as
 * `keys.manage` is (admin keys only; a session may not create more people who can sign in), and not by a
 * limited admin key, since a user may be given any role.
 */
export function userRoutes(deps: { users: UserService; sessions: SessionService }): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/v1/users',
      permission: 'users.manage',
      body: 'json',
      handle: async ({ ws, body }) => ({ status: 201, body: await deps.users.create(ws.org, body) }),
    }),
    route({
      method: 'GET',
      path: '/api/v1/users',
      permission: 'users.manage',
      body: 'none',
      handle: async ({ ws }) => ({ body: { users: await deps.users.list(ws.org) } }),
    }),
    route({
      method: 'DELETE',
      path: '/api/v1/users/:id',
      permission: 'users.manage',
      body: 'none',
      handle: async ({ ws, params }) => {
        const removed = await deps.users.remove(ws.org, params.id);
        await deps.sessions.revokeUser(removed.id);
        return { body: removed };
      },
    }),
  ];
}
