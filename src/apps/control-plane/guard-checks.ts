import { flagById } from '../../foundations/repository/state-lookup.js';
import { route } from './route-table.js';

export const guardCheckRoutes = [
  /**
   * The last check of the guard watching the flag's schedule in that environment (`check`: null when none
   * has run): the step it was for, when it ran, and the value seen or why the query failed.
   */
  route({
    method: 'GET',
    path: '/api/v1/flags/:id/environments/:env/guard-check',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, params, environment }) => {
      const { project, flag } = flagById((await ws.readServed()).state, params.id);
      const checks = (await ws.deps.guardChecks?.list(ws.org)) ?? [];
      const schedule = flag.environments[environment].schedule ?? [];
      // Only a check of a guarded step the schedule still has: a check of a cancelled or stopped rollout says nothing now.
      const found = checks.find(
        (c) =>
          c.project === project.project.slug &&
          c.flag === flag.meta.key &&
          c.environment === environment &&
          schedule.some((step) => Date.parse(step.at) === Date.parse(c.stepAt) && step.guard?.query === c.query),
      );
      if (!found) return { body: { check: null } };
      const { stepAt, query, checkedAt, result, value, error, failures } = found;
      return {
        body: {
          // An infinite value (stored as null: JSON has no Infinity) is said by the verdict's result alone.
          check: { stepAt, query, checkedAt, result, ...(Number.isFinite(value) ? { value } : {}), ...(error ? { error } : {}), failures },
        },
      };
    },
  }),
];
