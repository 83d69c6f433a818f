import type { EnvironmentConfig, EnvironmentName, RepositoryState } from '@flagops/core';
import type { BudgetUse } from '../../features/budgets/budget-rules.js';
import { budgetedPct } from '../../features/budgets/budgeted-pct.js';
import { computeImpact, type ImpactEntry } from '../../features/proposals/impact.js';
import { requiresApproval } from '../../features/proposals/proposal-reader.js';
import type { ForbiddenError } from '../../foundations/errors/kinds.js';
import { diffStates } from '../../foundations/repository/diff-states.js';
import { formatFlagChange } from '../../foundations/repository/format-changes.js';
import { parseRepositoryFile } from '../../foundations/repository/parse-file.js';
import { flagById } from '../../foundations/repository/state-lookup.js';
import type { ChangePreviewBody } from '../../foundations/validation/api-bodies.js';
import { budgetPreview } from './budgets.js';
import { configEdit, configUpdateRoute, promoteEdit, promoteRoute } from './environments.js';
import { authorizeFields, authorizeRoute, route } from './route-table.js';
import type { Workspace } from './workspace.js';

export const previewRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/flags/:id/environments/:env/preview',
    permission: 'read',
    body: 'change-preview',
    handle: async ({ ws, principal, params, environment, body }) => {
      // Authorized as the write it previews: what that write would refuse, the preview refuses the same way.
      const write = body.fromEnv !== undefined ? promoteRoute : configUpdateRoute;
      const refusal = authorizeRoute(principal, write, environment);
      authorizeFields(principal, write, environment, body.config);
      return { body: await previewChange(ws, params.id, environment, body, refusal) };
    },
  }),
];

/** What a change would do, without making it. */
export interface ChangePreview {
  flagKey: string;
  environment: EnvironmentName;
  /** The change in words, as `flagops diff` and proposals say it; empty when it would change nothing. */
  changes: string[];
  impact: ImpactEntry[];
  /**
   * Whether the caller's change would become a proposal: the project requires approval of its actor type
   * there, or the change would take its budget past the limit.
   */
  requiresApproval: boolean;
  /**
   * When a budget of the project lists the caller's actor type there (and the environment does not require
   * its approval anyway): the use now, what this change adds, and whether it would wait.
   */
  budget?: BudgetUse & { waits: boolean };
}

/**
 * Plans a config update or a promotion exactly as the write would (the same checks: a bad field is 400) on
 * what main serves, and answers its words and impact. Nothing is written anywhere. `refusal`: the credential
 * may not make the change directly, so it is refused with that unless it would become a proposal.
 */
export async function previewChange(
  ws: Workspace,
  flagId: string,
  env: EnvironmentName,
  body: ChangePreviewBody,
  refusal?: ForbiddenError,
): Promise<ChangePreview> {
  const served = await ws.readServed();
  const ref = flagById(served.state, flagId);
  const answer = {
    flagKey: ref.flag.meta.key,
    environment: env,
    requiresApproval: requiresApproval(ref.project.project, env, ws.actor.type),
  };
  if (refusal && !answer.requiresApproval) throw refusal;
  const edit = body.fromEnv !== undefined ? promoteEdit(ws, body.fromEnv, env) : configEdit(ws, env, body.config ?? {});
  const planned = edit(ref);
  const slug = ref.project.project.slug;
  const key = ref.flag.meta.key;
  if (!planned) return { ...answer, changes: [], impact: [] };
  const config = parseRepositoryFile(planned.changes[0].path, planned.changes[0].content!).file!.value as EnvironmentConfig;
  const flag = { ...ref.flag, environments: { ...ref.flag.environments, [env]: config } };
  const project = { ...ref.project, flags: new Map(ref.project.flags).set(key, flag) };
  const after: RepositoryState = { commit: null, projects: new Map(served.state.projects).set(slug, project) };
  const changes = diffStates(served.state, after)
    .filter((c) => c.project === slug && c.flag === key)
    .map(formatFlagChange);
  const impact = computeImpact(ref.project, project, { flagKey: key, environment: env });
  // A protected environment keeps the change as a proposal whatever its budget says.
  const budget = answer.requiresApproval
    ? undefined
    : await budgetPreview(ws, ref.project.project, env, budgetedPct(ref.project, project, key, env));
  if (!budget) return { ...answer, changes, impact };
  return { ...answer, requiresApproval: answer.requiresApproval || budget.waits, changes, impact, budget };
}
