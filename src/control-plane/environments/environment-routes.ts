import { route } from '../http/route.js';
import { updateConfig } from './config-service.js';
import { parseKillBody } from './kill-body.js';
import { killFlag } from './kill-service.js';
import { promoteFlag } from './promote-service.js';

export const environmentRoutes = [
  route({
    method: 'PUT',
    path: '/api/v1/flags/:id/environments/:env/config',
    permission: 'config.update',
    fieldPermissions: { clearKill: 'clear_kill' },
    body: 'config-update',
    handle: async ({ ws, params, environment, body }) => ({ body: await updateConfig(ws, params.id, environment, body) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/flags/:id/environments/:env/kill',
    permission: 'kill',
    body: 'json',
    handle: async ({ ws, params, environment, body }) => ({ body: await killFlag(ws, params.id, environment, parseKillBody(body)) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/flags/:id/environments/:env/promote',
    permission: 'promote',
    body: 'promote',
    handle: async ({ ws, params, environment, body }) => ({ body: await promoteFlag(ws, params.id, environment, body.fromEnv) }),
  }),
];
