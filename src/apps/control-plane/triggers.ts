import { triggerPath } from '../../features/triggers/trigger-service.js';
import { ForbiddenError, NotFoundError } from '../../foundations/errors/kinds.js';
import { flagById } from '../../foundations/repository/state-lookup.js';
import { route } from './route-table.js';

/**
 * Triggers of a flag in one environment: secret URLs that kill it when an alerting system posts to them
 * (src/features/triggers). Admin keys and sessions create and delete them; whoever may read flags may list them. The
 * URL, with its secret, is in the create answer only. A key that expires creates none: a trigger would outlast it,
 * and one that quietly stopped with it would fail the alert that needs it.
 */
export const triggerRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/flags/:id/environments/:env/triggers',
    permission: 'triggers.manage',
    body: 'trigger-create',
    handle: async ({ ws, params, environment, body, origin }) => {
      const { flag } = flagById((await ws.readServed()).state, params.id);
      if (ws.principal.expiresAt !== undefined)
        throw new ForbiddenError(
          `an ${ws.principal.kind} key expiring at ${ws.principal.expiresAt} may not create triggers: a trigger's URL would kill the flag past the key's expiry; it needs a key without an expiry or an admin session`,
        );
      const { trigger, secret } = await ws.deps.triggers.create({ org: ws.org, flagId: flag.meta.id, environment, name: body.name });
      const { id, name, action, createdAt } = trigger;
      return { status: 201, body: { id, name, action, url: `${origin}${triggerPath(id, secret)}`, createdAt } };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/flags/:id/environments/:env/triggers',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, params, environment }) => {
      const { flag } = flagById((await ws.readServed()).state, params.id);
      const triggers = ws.deps.triggers
        .list(ws.org, flag.meta.id, environment)
        .map(({ id, name, action, createdAt }) => ({ id, name, action, createdAt }));
      return { body: { triggers } };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/triggers/:id',
    permission: 'triggers.manage',
    body: 'none',
    environmentFromResource: true,
    handle: async ({ ws, params }) => {
      // A trigger of a flag the caller cannot see is not found to it; one of an environment outside its limits is 403.
      const trigger = ws.deps.triggers.get(ws.org, params.id);
      if (trigger) {
        const { state } = await ws.readServed();
        if (![...state.projects.values()].some((p) => [...p.flags.values()].some((f) => f.meta.id === trigger.flagId)))
          throw new NotFoundError(`trigger ${params.id}`);
        ws.authorize('triggers.manage', { environment: trigger.environment });
      }
      return { body: await ws.deps.triggers.delete(ws.org, params.id) };
    },
  }),
];
