import { parseRole } from '../../../foundations/auth/roles.js';
import { InvalidInputError } from '../../../foundations/errors/kinds.js';
import { type Route, route } from '../../control-plane/route-table.js';
import type { Workspace } from '../../control-plane/workspace.js';
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
      handle: async ({ ws, body }) => {
        await refuseUnknownProjects(ws, body);
        return { status: 201, body: await deps.users.create(ws.org, body) };
      },
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

/**
 * A role limited to a project the organisation does not have (a typo: `editor@shpo`) would sign its person in to
 * nothing, with no hint why: refused naming the project, as a key limited to one is. A project removed later
 * simply drops out of the role.
 */
async function refuseUnknownProjects(ws: Workspace, body: unknown): Promise<void> {
  const text = (body as { role?: unknown } | null)?.role;
  if (typeof text !== 'string') return; // absent, or refused with the rest of the body by the user service
  const { projects } = parseRole(text);
  if (projects === undefined) return;
  const known = (await ws.readServed()).state.projects;
  const unknown = projects.filter((slug) => !known.has(slug));
  if (unknown.length === 0) return;
  const has = [...known.keys()].sort().join(', ') || 'none yet';
  throw new InvalidInputError(
    `role: ${JSON.stringify(text)} names ${unknown.map((slug) => JSON.stringify(slug)).join(', ')}, which the organisation has no project of (it has: ${has})`,
    'role',
  );
}
