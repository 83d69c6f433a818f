import { InvalidInputError } from '../../errors/kinds.js';
import { isStatsPeriod, type StatsPeriod } from '../../stats/hours.js';
import { optionalQuery } from '../http/params.js';
import { route } from '../http/route.js';
import { flagStats } from './stats-service.js';

/** A missing period means the last 24 hours; anything but 24h, 7d or 30d is refused. */
function periodOf(query: Readonly<Record<string, string | string[] | undefined>>): StatsPeriod {
  const period = optionalQuery(query, 'period') ?? '24h';
  if (!isStatsPeriod(period)) throw new InvalidInputError(`period: must be 24h, 7d or 30d (got ${JSON.stringify(period)})`, 'period');
  return period;
}

export const statsRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/flags/:id/environments/:env/stats',
    permission: 'stats.read',
    body: 'none',
    handle: async ({ ws, params, environment, query }) => ({ body: await flagStats(ws, params.id, environment, periodOf(query)) }),
  }),
];
