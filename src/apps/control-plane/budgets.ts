import { ENVIRONMENTS, type EnvironmentName, type ProjectFile } from '@flagops/core';
import { BudgetLedger } from '../../features/budgets/budget-ledger.js';
import { BUDGET_WINDOW_MINUTES, type BudgetUse, budgetOf, overBudget, roundPct } from '../../features/budgets/budget-rules.js';
import { plannedBudgetedPct } from '../../features/budgets/planned-impact.js';
import { projectById } from '../../foundations/repository/state-lookup.js';
import type { Change, ServedState } from '../../foundations/storage/index.js';
import { route } from './route-table.js';
import type { Workspace } from './workspace.js';

export const budgetRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/projects/:id/budgets',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, params }) => ({ body: await budgetUse(ws, params.id) }),
  }),
];

/** One budget's use: an environment and an actor type it lists. */
export interface BudgetUseView {
  environment: EnvironmentName;
  actorType: string;
  movedPctPerHour: number;
  usedPct: number;
  remainingPct: number;
  /** The changes counted, newest first. */
  changes: Array<{ commit: string; at: string; flagKey: string; movedPct: number }>;
}

/** The organisation's ledger of the last hour's use, read from its audit trail. */
function budgetLedger(ws: Workspace): BudgetLedger {
  const { audit } = ws.deps;
  const org = ws.org;
  return BudgetLedger.of(ws.repo, () => audit.get(org));
}

/** GET .../budgets: every budget of the project with its use over the last 60 minutes. */
export async function budgetUse(ws: Workspace, projectId: string): Promise<{ windowMinutes: number; budgets: BudgetUseView[] }> {
  const { project } = projectById((await ws.readServed()).state, projectId);
  const slug = project.slug;
  const { spends } = await budgetLedger(ws).spends(ws.now(), (s, env, type) => s === slug && budgetOf(project, env, type) !== undefined);
  const budgets: BudgetUseView[] = [];
  for (const environment of ENVIRONMENTS) {
    const budget = project.budgets?.[environment];
    for (const actorType of budget?.actors ?? []) {
      const mine = spends.filter((s) => s.environment === environment && s.actorType === actorType);
      const usedPct = BudgetLedger.used(mine, slug, environment, actorType);
      budgets.push({
        environment,
        actorType,
        movedPctPerHour: budget!.movedPctPerHour,
        usedPct,
        remainingPct: roundPct(Math.max(0, budget!.movedPctPerHour - usedPct)),
        changes: mine.map((s) => ({ commit: s.commit, at: s.at, flagKey: s.flagKey, movedPct: s.movedPct })),
      });
    }
  }
  return { windowMinutes: BUDGET_WINDOW_MINUTES, budgets };
}

/**
 * For a preview: the caller's budget in `environment`, its use now and what a change adding `addsPct` would
 * make of it (`waits`: it would be kept as a proposal); undefined when no budget lists the caller's actor type.
 */
export async function budgetPreview(
  ws: Workspace,
  project: ProjectFile,
  environment: EnvironmentName,
  addsPct: number,
): Promise<(BudgetUse & { waits: boolean }) | undefined> {
  const actorType = ws.actor.type;
  const budget = budgetOf(project, environment, actorType);
  if (!budget) return undefined;
  const slug = project.slug;
  const { spends } = await budgetLedger(ws).spends(ws.now(), (s, env, type) => s === slug && env === environment && type === actorType);
  const usedPct = BudgetLedger.used(spends, slug, environment, actorType);
  const waits = overBudget(project, environment, actorType, usedPct, addsPct) !== null;
  return {
    environment,
    actorType: actorType as BudgetUse['actorType'],
    movedPctPerHour: budget.movedPctPerHour,
    usedPct,
    addsPct: roundPct(addsPct),
    windowMinutes: BUDGET_WINDOW_MINUTES,
    waits,
  };
}

/** A write past a budget: the route keeps the change as a proposal instead of committing it. */
export class BudgetExceeded extends Error {
  constructor(readonly use: BudgetUse) {
    super(`past the budget of ${use.actorType} changes to ${use.environment}`);
  }
}

/**
 * Run inside the write, on the head it commits on, so that two changes racing each other (here or on another
 * control plane) are each checked against the other: throws BudgetExceeded when the caller's change of one
 * flag's config in one environment would take its actor type's use of the last 60 minutes past the project's
 * budget. The use is read from main as it is now; should main have moved past `served`, the write's
 * compare-and-swap fails and this runs again on the new head.
 */
export async function checkBudget(ws: Workspace, served: ServedState, change: Change<null>): Promise<void> {
  const { project: slug, flag, environment } = change.meta;
  if (slug === undefined || flag === undefined || environment === undefined || change.changes.length === 0) return;
  const project = served.state.projects.get(slug);
  const actorType = ws.actor.type;
  if (!project || !budgetOf(project.project, environment, actorType)) return;
  const addsPct = plannedBudgetedPct(project, change.changes, flag, environment);
  if (addsPct <= 0) return;
  const { spends } = await budgetLedger(ws).spends(
    ws.now(),
    (s, env, type) => s === slug && env === environment && type === actorType,
    served.commit,
  );
  const over = overBudget(project.project, environment, actorType, BudgetLedger.used(spends, slug, environment, actorType), addsPct);
  if (over) throw new BudgetExceeded(over);
}
