import { route } from '../../control-plane/http/route.js';
import { checkConfigDraft } from './config-draft.js';

/**
 * POST /dashboard/api/validate-config: the live validation of the flag page's editor. Reading is enough:
 * nothing is written. It goes through the control plane's route pipeline, so it is authenticated (and its
 * body limited) like every API call.
 */
export const validateConfigRoute = route({
  method: 'POST',
  path: '/dashboard/api/validate-config',
  permission: 'read',
  body: 'json',
  handle: async ({ body }) => ({ body: checkConfigDraft(body) }),
});
