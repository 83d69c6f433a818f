import { inheritLimits, within } from '../../foundations/auth/key-limits.js';
import type { CreatedKey, KeyView } from '../../foundations/auth/principal.js';
import { ForbiddenError, NotFoundError } from '../../foundations/errors/kinds.js';
import { projectById } from '../../foundations/repository/state-lookup.js';
import type { KeyCreateBody } from '../../foundations/validation/api-bodies.js';
import { route } from './route-table.js';
import type { Workspace } from './workspace.js';

/**
 * Keys are managed by admin keys only; the key itself is shown once, in the 201. An admin key limited to
 * projects, environments or a lifetime manages only keys within its own limits: it sees only those, and what
 * it creates is never wider than itself.
 */
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
  route({
    method: 'POST',
    path: '/api/v1/keys/:id/rotate',
    permission: 'keys.manage',
    body: 'key-rotate?',
    handle: async ({ ws, params, body }) => ({ status: 201, body: await rotateKey(ws, params.id, body?.graceSeconds ?? 0) }),
  }),
];

/**
 * An sdk key is scoped to a project of the caller's organisation, and a limited key to projects of it: another
 * organisation's project, or one outside the caller's own limits, is 404.
 */
export async function createKey(ws: Workspace, body: KeyCreateBody): Promise<CreatedKey> {
  const { state } = await ws.readServed();
  if (body.kind === 'sdk') projectById(state, body.projectId!);
  for (const id of body.projects ?? []) projectById(state, id);
  const input = { ...body, ...inheritLimits(ws.principal, body.kind, body) };
  if (!within(ws.principal, input)) {
    throw new ForbiddenError(
      'an admin key with limits may create only keys within them: the same or fewer projects and environments, expiring no later than itself',
    );
  }
  return ws.deps.keys.createKey(ws.org, input, keyIdOf(ws));
}

/** Every key of the organisation that the caller may manage. */
export function listKeys(ws: Workspace): KeyView[] {
  return ws.deps.keys.listKeys(ws.org).filter((key) => within(ws.principal, key));
}

export function revokeKey(ws: Workspace, id: string): Promise<KeyView> {
  manageable(ws, id);
  return ws.deps.keys.revokeKey(ws.org, id);
}

/** A new key of the same kind, name and limits; the old one works `graceSeconds` longer. */
export function rotateKey(ws: Workspace, id: string, graceSeconds: number): Promise<CreatedKey> {
  return ws.deps.keys.rotateKey(ws.org, id, graceSeconds, {
    rotatedBy: keyIdOf(ws),
    allowed: (record) => within(ws.principal, record),
  });
}

/** The key the caller uses, recorded as the maker of the keys it creates or rotates. */
function keyIdOf(ws: Workspace): string | undefined {
  return ws.principal.kind === 'session' ? undefined : ws.principal.keyId;
}

/** A key outside the caller's limits is not found to it, like another organisation's. */
function manageable(ws: Workspace, id: string): void {
  if (!within(ws.principal, ws.deps.keys.keyView(ws.org, id))) throw new NotFoundError(`key ${JSON.stringify(id)}`);
}
