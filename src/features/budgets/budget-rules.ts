import type { ApprovalActorType, AuditEntry, EnvironmentBudget, EnvironmentName, ProjectFile } from '@flagops/core';
import type { CommitInfo } from '../../foundations/storage/index.js';
import type { ImpactEntry } from '../proposals/impact.js';

/** The window a budget counts over. */
export const BUDGET_WINDOW_MINUTES = 60;
export const BUDGET_WINDOW_MS = BUDGET_WINDOW_MINUTES * 60_000;

/** What a change past a budget is kept with: the budget, the use so far and what the change would add. */
export interface BudgetUse {
  environment: EnvironmentName;
  actorType: ApprovalActorType;
  movedPctPerHour: number;
  /** The sum of `movedPct` of that actor type's changes to that environment in the last 60 minutes. */
  usedPct: number;
  /** What this change would add: its impact's `movedPct`, 100 when not exact. */
  addsPct: number;
  windowMinutes: number;
}

/** The budget of `actorType`'s changes into `environment`, if the project sets one. */
export function budgetOf(project: ProjectFile, environment: EnvironmentName, actorType: string): EnvironmentBudget | undefined {
  const budget = project.budgets?.[environment];
  return budget?.actors.includes(actorType as ApprovalActorType) ? budget : undefined;
}

/** Whether any environment of the project budgets `actorType`'s changes. */
export function budgetsActor(project: ProjectFile, actorType: string): boolean {
  return Object.values(project.budgets ?? {}).some((b) => b?.actors.includes(actorType as ApprovalActorType));
}

/** A change's share of users, as budgets count it: its `movedPct`, or 100 when the impact is not exact. */
export function countedPct(impact: ImpactEntry | undefined): number {
  if (!impact) return 0;
  return impact.exact && impact.movedPct !== null ? impact.movedPct : 100;
}

/** Percent with two decimals, as impacts give them, so that sums do not drift (0.1 + 0.2). */
export function roundPct(value: number): number {
  return Math.round(value * 100) / 100;
}

/**
 * The use that keeps a change as a proposal, or null when it may be applied: a change that moves someone and
 * would bring the use of the last 60 minutes above the budget. A change that moves nobody never waits.
 */
export function overBudget(
  project: ProjectFile,
  environment: EnvironmentName,
  actorType: string,
  usedPct: number,
  addsPct: number,
): BudgetUse | null {
  const budget = budgetOf(project, environment, actorType);
  if (!budget || addsPct <= 0 || roundPct(usedPct + addsPct) <= budget.movedPctPerHour) return null;
  return {
    environment,
    actorType: actorType as ApprovalActorType,
    movedPctPerHour: budget.movedPctPerHour,
    usedPct: roundPct(usedPct),
    addsPct: roundPct(addsPct),
    windowMinutes: BUDGET_WINDOW_MINUTES,
  };
}

const pct = (value: number) => `${value.toFixed(2)} %`;

/**
 * A budget use in words, for answers, the audit trail and `remote:` lines: `agent changes to prod moved
 * 8.00 % of users in the last 60 minutes; this change would add 25.00 %, past the budget of 10 % an hour`.
 */
export function budgetWords(use: BudgetUse): string {
  return `${use.actorType} changes to ${use.environment} moved ${pct(use.usedPct)} of users in the last ${use.windowMinutes} minutes; this change would add ${pct(use.addsPct)}, past the budget of ${use.movedPctPerHour} % an hour`;
}

/** The audit actions whose changes count against a budget: what moves users, by an actor that chose to. */
const COUNTED = new Set<AuditEntry['action']>(['config_update', 'promote']);

/**
 * Whose change an entry of main is, for budgets: a merged proposal is its proposer's, a commit pushed over
 * git over HTTP is the pushing key's; null when the entry never counts (kills, scheduled steps, settings).
 */
export function spenderOf(entry: AuditEntry): string | null {
  if (!COUNTED.has(entry.action) || entry.projectSlug === null || entry.flagKey === null || entry.environment === null) return null;
  if (entry.proposalId !== undefined && entry.proposedBy) return entry.proposedBy.type;
  if (entry.actor.type === 'git') return entry.pushedBy?.type ?? null;
  return entry.actor.type;
}

/**
 * Whether an entry spenderOf charges is one of an import (`flagops import`), which never counts: an operator's
 * action outside the actor types a budget lists, like an engineer's commit reaching main outside the service.
 * Only trailers the audit trail believed say so: those of an entry whose actor is not git (a pushed commit's
 * entries are git's, whatever trailers it claims).
 */
export function isImportEntry(entry: AuditEntry, commit: Pick<CommitInfo, 'flagops' | 'unsignedFlagops'>): boolean {
  if (entry.actor.type === 'git') return false;
  return (commit.flagops ?? commit.unsignedFlagops)?.action === 'import';
}
