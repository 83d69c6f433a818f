import type { FlagHealth } from '../../features/health/decide-health.js';
import { DEFAULT_STALE_AFTER_DAYS } from '../../features/health/flag-health-service.js';
import { InvalidInputError } from '../../foundations/errors/kinds.js';
import { projectById } from '../../foundations/repository/state-lookup.js';
import { optionalQuery, route } from './route-table.js';
import type { Workspace } from './workspace.js';

/** The longest window asked about: a hundred years. */
const MAX_DAYS = 36_500;

/** `staleAfterDays`: a number of days, fractions allowed, from 0 to a hundred years; absent: 30. */
export function staleAfterDaysOf(query: Readonly<Record<string, string | string[] | undefined>>): number {
  const value = optionalQuery(query, 'staleAfterDays');
  if (value === undefined) return DEFAULT_STALE_AFTER_DAYS;
  const days = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || days > MAX_DAYS) {
    throw new InvalidInputError(
      `staleAfterDays: must be a number of days from 0 to ${MAX_DAYS} (got ${JSON.stringify(value)})`,
      'staleAfterDays',
    );
  }
  return days;
}

export const flagHealthRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/projects/:id/flags/health',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, params, query }) => ({ body: { flags: await projectHealth(ws, params.id, staleAfterDaysOf(query)) } }),
  }),
];

/** The health of every active flag of a project, in key order. */
export async function projectHealth(ws: Workspace, projectId: string, staleAfterDays: number): Promise<FlagHealth[]> {
  const served = await ws.readServed();
  const project = projectById(served.state, projectId);
  const flags = await ws.deps.flagHealth.report({ org: ws.org, project, now: ws.now().getTime(), staleAfterDays });
  return flags.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
