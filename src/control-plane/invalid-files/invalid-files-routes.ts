import { invalidFile } from '../../repository/held-units.js';
import { route } from '../http/route.js';

/**
 * The invalid files on main of the caller's organisation: what /healthz lists per organisation, for one
 * organisation and behind its credentials (the dashboard's banner reads it). Empty when everything is valid.
 */
export const invalidFilesRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/invalid-files',
    permission: 'read',
    body: 'none',
    handle: async ({ ws }) => {
      const { commit, issues } = await ws.repo.readServed();
      return { body: { commit, invalidFiles: issues.map(invalidFile) } };
    },
  }),
];
