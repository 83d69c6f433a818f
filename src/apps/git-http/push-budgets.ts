import type { ProjectFile, RepositoryState } from '@flagops/core';
import { budgetOf, budgetsActor, overBudget, roundPct } from '../../features/budgets/budget-rules.js';
import { budgetedPct } from '../../features/budgets/budgeted-pct.js';
import { classifyPath } from '../../foundations/repository/layout.js';
import { servesAsCreated } from '../../foundations/repository/new-flag.js';
import { parseRepositoryFile } from '../../foundations/repository/parse-file.js';
import { readRepositoryFiles } from '../../foundations/repository/read-repository.js';
import { firstParentChanges, readPushedFiles, ZERO_OID } from './pushed-objects.js';

/**
 * What the control plane tells the push check of the budgets (it reads the audit trail; the check runs in a
 * process git starts): the service's time and, per `<project>/<environment>`, how much of its users the
 * pusher's actor type moved there in the 60 minutes before it.
 */
export interface PushBudgetContext {
  at: string;
  used: Readonly<Record<string, number>>;
  /** Why the use could not be read (the database down): a push that adds to a budget is refused saying so. */
  unreadable?: string;
}

/**
 * Why a push must be refused for budgets, one line per file: what it would add to a budget of the pusher's
 * actor type, counted as the audit trail will count it once on main (each commit of main's first-parent line
 * against its parent, the impact proposals compute, 100 when not exact), would take that environment's use
 * of the last hour above the budget. Through the API the same change waits as a proposal, so the line says to
 * propose it there. A new flag whose config in a budgeted environment serves anyone anything but its off value
 * is refused too: the audit trail counts flag creations as such, not as the config change they contain.
 */
export async function checkPushBudgets(
  oldOid: string,
  newOid: string,
  actorType: string,
  projectFiles: ReadonlyArray<{ path: string; text: string }>,
  context: PushBudgetContext,
): Promise<string[]> {
  const projects = new Map<string, ProjectFile>();
  for (const file of projectFiles) {
    const where = classifyPath(file.path);
    const parsed = parseRepositoryFile(file.path, file.text).file;
    if (where.kind === 'project' && parsed?.kind === 'project' && budgetsActor(parsed.value, actorType))
      projects.set(where.project, parsed.value);
  }
  if (projects.size === 0) return [];
  const states = new Map<string, Promise<RepositoryState>>();
  const stateOf = (commit: string) => {
    let state = states.get(commit);
    if (!state) {
      state =
        commit === ZERO_OID
          ? Promise.resolve({ commit: null, projects: new Map() })
          : readPushedFiles(commit).then((files) => readRepositoryFiles(files, commit).state);
      states.set(commit, state);
    }
    return state;
  };
  const adds = new Map<string, { pct: number; paths: Set<string> }>();
  const problems: string[] = [];
  for (const { commit, parent, changes } of await firstParentChanges(oldOid, newOid)) {
    for (const change of changes) {
      const where = classifyPath(change.path);
      if (where.kind !== 'config') continue;
      const project = projects.get(where.project);
      if (!project || !budgetOf(project, where.environment, actorType)) continue;
      if (change.change === 'added') {
        const created = (await stateOf(parent)).projects.get(where.project)?.flags.has(where.flag) === false;
        const flag = (await stateOf(commit)).projects.get(where.project)?.flags.get(where.flag);
        const config = flag?.environments[where.environment];
        // A schedule's steps would turn it on later, uncounted: they count when written.
        if (created && flag && config && !servesAsCreated(config, flag.meta))
          problems.push(
            `${change.path}: a new flag serving users (or scheduled to) in ${where.environment}, where ${actorType} changes have a budget in project ${where.project}; create it off, then change its config through the API or MCP, where a change past the budget waits for approval`,
          );
        continue;
      }
      if (change.change !== 'modified') continue;
      const [before, after] = await Promise.all([stateOf(parent), stateOf(commit)]);
      const pct = budgetedPct(before.projects.get(where.project), after.projects.get(where.project), where.flag, where.environment);
      if (pct <= 0) continue;
      const key = `${where.project}/${where.environment}`;
      const sum = adds.get(key) ?? { pct: 0, paths: new Set<string>() };
      sum.pct = roundPct(sum.pct + pct);
      sum.paths.add(change.path);
      adds.set(key, sum);
    }
  }
  for (const [key, { pct, paths }] of adds) {
    const [slug, environment] = key.split('/') as [string, never];
    if (context.unreadable !== undefined) {
      for (const path of paths)
        problems.push(
          `${path}: ${actorType} changes to ${environment} in project ${slug} have a budget, and what they moved in the last hour cannot be read: ${context.unreadable}; nothing was changed: push again once it can be read`,
        );
      continue;
    }
    const over = overBudget(projects.get(slug)!, environment, actorType, context.used[key] ?? 0, pct);
    if (!over) continue;
    for (const path of paths)
      problems.push(
        `${path}: ${over.actorType} changes to ${environment} in project ${slug} moved ${over.usedPct.toFixed(2)} % of users in the last ${over.windowMinutes} minutes; this push would add ${over.addsPct.toFixed(2)} %, past the budget of ${over.movedPctPerHour} % an hour; propose it through the API or MCP instead, where it waits for approval`,
      );
  }
  return problems;
}
