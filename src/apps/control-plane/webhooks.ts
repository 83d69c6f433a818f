import type { WebhookInput } from '../../features/webhooks/webhook-input.js';
import type { WebhookService } from '../../features/webhooks/webhook-service.js';
import { type Route, route } from './route-table.js';

/**
 * /api/v1/webhooks (docs/webhooks.md): admin keys and dashboard sessions manage their organisation's webhooks;
 * the secret is in the 201 only. Another organisation's webhook is not found.
 */
export function webhookRoutes(webhooks: WebhookService): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/v1/webhooks',
      permission: 'webhooks.manage',
      body: 'json',
      handle: async ({ ws, body }) => ({ status: 201, body: await webhooks.create(ws.org, body as WebhookInput) }),
    }),
    route({
      method: 'GET',
      path: '/api/v1/webhooks',
      permission: 'webhooks.manage',
      body: 'none',
      handle: async ({ ws }) => ({ body: { webhooks: webhooks.list(ws.org) } }),
    }),
    route({
      method: 'DELETE',
      path: '/api/v1/webhooks/:id',
      permission: 'webhooks.manage',
      body: 'none',
      handle: async ({ ws, params }) => ({ body: await webhooks.remove(ws.org, params.id) }),
    }),
    route({
      method: 'GET',
      path: '/api/v1/webhooks/:id/deliveries',
      permission: 'webhooks.manage',
      body: 'none',
      handle: async ({ ws, params }) => ({ body: { deliveries: await webhooks.deliveriesOf(ws.org, params.id) } }),
    }),
  ];
}
