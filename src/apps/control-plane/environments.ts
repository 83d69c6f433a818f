import type { EnvironmentConfig, EnvironmentName } from '@flagops/core';
import { type BudgetUse, budgetWords } from '../../features/budgets/budget-rules.js';
import { type Proposal, requiresApproval } from '../../features/proposals/proposal-reader.js';
import { expandRolloutPlan } from '../../features/schedule/rollout-plan.js';
import type { ForbiddenError } from '../../foundations/errors/kinds.js';
import { InvalidInputError, VersionConflictError } from '../../foundations/errors/kinds.js';
import { jsonEqual } from '../../foundations/repository/json-equal.js';
import { layout } from '../../foundations/repository/layout.js';
import { configReferenceIssues } from '../../foundations/repository/project-checks.js';
import { serializeRepositoryFile } from '../../foundations/repository/serialize-file.js';
import { type FlagRef, flagById } from '../../foundations/repository/state-lookup.js';
import { type ConfigUpdateBody, onlyClearsKill, type RolloutPlanBody } from '../../foundations/validation/api-bodies.js';
import { configModelIssues } from '../../foundations/validation/config-model.js';
import type { ValidationIssue } from '../../foundations/validation/issue.js';
import { pastStepIssues } from '../../foundations/validation/schedule.js';
import { pointerToField } from '../../foundations/validation/validate-body.js';
import { validateDocument } from '../../foundations/validation/validate-document.js';
import { BudgetExceeded, checkBudget } from './budgets.js';
import { type FlagEdit, type FlagWriteResult, flagChange, writeFlag } from './flag-write.js';
import { openProposal } from './proposals.js';
import { route } from './route-table.js';
import { assignRuleIds } from './rule-ids.js';
import { type FlagView, servedFlagView } from './views.js';
import type { Workspace } from './workspace.js';

export const configUpdateRoute = route({
  method: 'PUT',
  path: '/api/v1/flags/:id/environments/:env/config',
  permission: 'config.update',
  fieldPermissions: { clearKill: 'clear_kill' },
  body: 'config-update',
  handle: async ({ ws, params, environment, body }) => reply(await updateConfig(ws, params.id, environment, body)),
});

export const promoteRoute = route({
  method: 'POST',
  path: '/api/v1/flags/:id/environments/:env/promote',
  permission: 'promote',
  proposable: true,
  body: 'promote',
  handle: async ({ ws, params, environment, body, refusal }) => reply(await promoteFlag(ws, params.id, environment, body.fromEnv, refusal)),
});

export const environmentRoutes = [
  configUpdateRoute,
  route({
    method: 'POST',
    path: '/api/v1/flags/:id/environments/:env/rollout-plan',
    permission: 'config.update',
    body: 'rollout-plan',
    handle: async ({ ws, params, environment, body }) => reply(await planRollout(ws, params.id, environment, body)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/flags/:id/environments/:env/kill',
    permission: 'kill',
    body: 'kill?',
    handle: async ({ ws, params, environment, body }) => ({ body: await killFlag(ws, params.id, environment, body?.reason) }),
  }),
  promoteRoute,
];

/** A change that became a proposal answers 202 `{ proposal }`; one applied answers 200 with the flag. */
function reply(outcome: FlagView | ProposalAnswer) {
  return 'proposal' in outcome ? { status: 202, body: outcome } : { body: outcome };
}

export interface ProposalAnswer {
  proposal: Proposal;
}

/**
 * Whether the project makes this caller's change into `env` wait for approval: then the change goes to a
 * proposal branch instead of main (null when it would change nothing). `refusal`: the credential may not
 * make the change directly, which only a protected environment turns into a proposal.
 */
async function proposeIfProtected(
  ws: Workspace,
  flagId: string,
  env: EnvironmentName,
  action: 'config_update' | 'promote',
  edit: (ref: FlagRef, now: Date) => FlagEdit | null,
  refusal?: ForbiddenError,
): Promise<{ proposal: Proposal | null } | null> {
  const { state } = await ws.readServed();
  const { project } = flagById(state, flagId);
  if (!requiresApproval(project.project, env, ws.actor.type)) {
    if (refusal) throw refusal;
    return null;
  }
  return { proposal: await openProposal(ws, (served) => flagChange(ws, served, flagId, action, edit)) };
}

const CONFIG_FIELDS = ['enabled', 'rolloutPct', 'valueOn', 'valueOff', 'rules', 'variants', 'prerequisites', 'schedule'] as const;

/** The first issue as a 400 naming its field (`rules[0].conditions[1].value: …`). */
function refuseIssues(issues: readonly ValidationIssue[]): void {
  if (issues.length === 0) return;
  const field = pointerToField(issues[0].path ?? '');
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  throw new InvalidInputError(`${field}: ${issues[0].message}${more}`, field);
}

/**
 * PUT .../config: the sent fields replace the current ones and the version goes up by one; a request that
 * changes nothing makes no commit. expectedVersion is compared inside the write, on the head it commits on.
 * With clearKill the kill is cleared after the config is written (two commits: the kill fast path owns
 * kills.yaml), so the moment the kill lifts the new config is already what serves.
 */
export async function updateConfig(
  ws: Workspace,
  flagId: string,
  env: EnvironmentName,
  body: ConfigUpdateBody,
): Promise<FlagView | ProposalAnswer> {
  const edit = configEdit(ws, env, body);
  // Nothing but a kill's clearing: nothing of the config is written, so, as a kill, it waits for no turn among
  // control planes writing to a git remote. expectedVersion is checked in the clear's own write.
  if (onlyClearsKill(body)) {
    const served = await ws.readServed();
    if (edit(flagById(served.state, flagId)) === null) return clearKill(ws, flagId, env, undefined, body.expectedVersion);
  }
  const proposed = await proposeIfProtected(ws, flagId, env, 'config_update', (ref) => {
    const planned = edit(ref);
    // A kill is lifted at once, a protected config change only once approved: the two cannot go together.
    if (planned && body.clearKill)
      throw new InvalidInputError(
        `clearKill: ${env} requires approval for this change, and a kill is cleared at once; clear the kill with its own request, or send the change without clearKill`,
        'clearKill',
      );
    return planned;
  });
  if (proposed?.proposal) return { proposal: proposed.proposal };
  const written = await writeWithinBudget(ws, flagId, 'config_update', edit, (use) => {
    // As for a protected environment: the kill would lift at once while the change waits.
    if (body.clearKill)
      throw new InvalidInputError(
        `clearKill: this change waits for approval (${budgetWords(use)}), and a kill is cleared at once; clear the kill with its own request, or send the change without clearKill`,
        'clearKill',
      );
  });
  if ('proposal' in written) return written;
  const { ref, view } = written;
  if (!body.clearKill) return view;
  // With expectedVersion the kill lifts only over the config this request wrote (or found, changing nothing).
  const writtenVersion = body.expectedVersion === undefined ? undefined : ref.flag.environments[env].version;
  return clearKill(ws, flagId, env, ref, writtenVersion);
}

/**
 * Clears the flag's kill in `env` (the kill fast path); the flag as served after it. `expectedVersion` is compared
 * on the head the clear commits on: in remote mode, the git host's main once a push refused for it fetched it.
 */
async function clearKill(ws: Workspace, flagId: string, env: EnvironmentName, ref?: FlagRef, expectedVersion?: number): Promise<FlagView> {
  const { project, flag } = ref ?? flagById((await ws.readServed()).state, flagId);
  await ws.deps.killSwitch.clear({
    org: ws.org,
    repo: ws.repo,
    projectSlug: project.project.slug,
    flagKey: flag.meta.key,
    environment: env,
    actor: ws.actor,
    expectedVersion,
  });
  const served = await ws.readServed();
  return servedFlagView(served, flagById(served.state, flagId));
}

/**
 * What a config update writes, planned on a flag as served: the sent fields replace the current ones, the
 * version goes up by one; null when nothing changes. Used by the update itself, its proposal and its preview.
 */
export function configEdit(ws: Workspace, env: EnvironmentName, body: ConfigUpdateBody): (ref: FlagRef) => FlagEdit | null {
  // A step written through the API is meant for later; one already due belongs in a push (applied at once).
  const past = body.schedule === undefined ? undefined : pastStepIssues(body.schedule, ws.now())[0];
  if (past) {
    const field = pointerToField(past.path ?? '');
    throw new InvalidInputError(`${field}: ${past.message}`, field);
  }
  const guarded = body.schedule?.findIndex((step) => step.guard !== undefined) ?? -1;
  if (guarded >= 0) refuseGuardWithoutPrometheus(ws, `schedule[${guarded}].guard`);
  return ({ project, flag }: FlagRef): FlagEdit | null => {
    const current = flag.environments[env];
    if (body.expectedVersion !== undefined && body.expectedVersion !== current.version) {
      throw new VersionConflictError(current.version, body.expectedVersion);
    }
    const next: EnvironmentConfig = {
      enabled: body.enabled ?? current.enabled,
      rolloutPct: body.rolloutPct ?? current.rolloutPct,
      valueOn: 'valueOn' in body ? body.valueOn! : current.valueOn,
      valueOff: 'valueOff' in body ? body.valueOff! : current.valueOff,
      version: current.version + 1,
      rules: body.rules ? assignRuleIds(body.rules, current.rules) : current.rules,
    };
    // `variants: null` removes them (valueOn is served again); so do `prerequisites: null` and `[]`.
    const variants = 'variants' in body ? body.variants : current.variants;
    if (variants) next.variants = variants;
    const prerequisites = 'prerequisites' in body ? body.prerequisites : current.prerequisites;
    if (prerequisites && prerequisites.length > 0) next.prerequisites = prerequisites;
    // Checked here, before the store would refuse the file, so that the 400 names the request's field.
    refuseIssues(configModelIssues(flag.meta.kind, { ...body, rules: next.rules, variants: next.variants ?? null }));
    refuseIssues(configReferenceIssues(project, flag.meta.key, env, next));
    const schedule = body.schedule ?? current.schedule ?? [];
    if (schedule.length > 0) next.schedule = schedule;
    // What the store would refuse in the file, refused here by the field it comes from, not by the file's path.
    refuseIssues(validateDocument('environment-config', next));
    const changed = CONFIG_FIELDS.filter((f) => !jsonEqual((next[f] ?? null) as never, (current[f] ?? null) as never));
    if (changed.length === 0) return null;
    const key = flag.meta.key;
    return {
      changes: [
        { path: layout.configFile(project.project.slug, env, key), content: serializeRepositoryFile({ kind: 'config', value: next }) },
      ],
      summary: `update ${key} in ${env}: ${changed.join(', ')}`,
      environment: env,
    };
  };
}

/**
 * POST .../rollout-plan: a progressive rollout written as a schedule (src/features/schedule/rollout-plan.ts). Starting
 * now, the same commit enables the flag at startPct; the plan replaces the environment's schedule.
 */
export function planRollout(
  ws: Workspace,
  flagId: string,
  env: EnvironmentName,
  body: RolloutPlanBody,
): Promise<FlagView | ProposalAnswer> {
  if (body.guard) refuseGuardWithoutPrometheus(ws, 'guard');
  const plan = expandRolloutPlan(body, ws.now());
  return updateConfig(ws, flagId, env, { ...plan.now, schedule: plan.schedule, expectedVersion: body.expectedVersion });
}

/**
 * A guard written through the API where no Prometheus is configured would only ever fail (and stop the
 * rollout): refused at once instead, naming the setting (`where`: words before it, for a guard not sent in
 * `field` itself). A guard that arrives in a push is kept, reported in /healthz, and fails safe.
 */
function refuseGuardWithoutPrometheus(ws: Workspace, field: string, where = ''): void {
  if (!ws.deps.guardsAvailable)
    throw new InvalidInputError(
      `${field}: ${where}a guard needs FLAGOPS_PROMETHEUS_URL (the Prometheus server its query runs against), which this service does not have`,
      field,
    );
}

export interface KillView extends FlagView {
  /** True when the flag was killed already: nothing changed, no commit, the first kill's details stand. */
  alreadyKilled: boolean;
}

/**
 * Kills through the fast path: KillSwitch.kill resolves only once the evaluation server serves valueOff, so
 * the response never runs ahead of the edge. The config file and its version are untouched. The body is
 * optional; its `reason` (schemas/api/kill.schema.json) reaches the commit message and kills.yaml, and a blank
 * one counts as none.
 */
export async function killFlag(ws: Workspace, flagId: string, env: EnvironmentName, sentReason?: string): Promise<KillView> {
  const reason = sentReason?.trim() === '' ? undefined : sentReason;
  const { state } = await ws.readServed();
  const { project, flag } = flagById(state, flagId);
  const outcome = await ws.deps.killSwitch.kill({
    org: ws.org,
    repo: ws.repo,
    projectSlug: project.project.slug,
    flagKey: flag.meta.key,
    environment: env,
    actor: ws.actor,
    reason,
  });
  const served = await ws.readServed(outcome.commit);
  return { ...servedFlagView(served, flagById(served.state, flagId)), alreadyKilled: !outcome.changed };
}

/**
 * Replaces the destination's whole config by the source's (a file copy), version = destination's
 * + 1. Always one commit, even when the two are equal already: a promotion is a deploy, and every deploy is
 * in the audit trail. The destination's kill state is not part of the config and stays as it is.
 */
export async function promoteFlag(
  ws: Workspace,
  flagId: string,
  to: EnvironmentName,
  from: EnvironmentName,
  refusal?: ForbiddenError,
): Promise<FlagView | ProposalAnswer> {
  const edit = promoteEdit(ws, from, to);
  const proposed = await proposeIfProtected(ws, flagId, to, 'promote', edit, refusal);
  if (proposed?.proposal) return { proposal: proposed.proposal };
  const written = await writeWithinBudget(ws, flagId, 'promote', edit);
  return 'proposal' in written ? written : written.view;
}

/**
 * Writes the change unless it is past a budget of the caller's actor type (checked in the write itself,
 * budgets.ts checkBudget); then it is kept as a proposal with reason `budget`. `refuse` may refuse the change
 * instead (a request that cannot wait).
 */
async function writeWithinBudget(
  ws: Workspace,
  flagId: string,
  action: 'config_update' | 'promote',
  edit: (ref: FlagRef, now: Date) => FlagEdit | null,
  refuse?: (use: BudgetUse) => void,
): Promise<FlagWriteResult | ProposalAnswer> {
  try {
    return await writeFlag(ws, flagId, action, edit, (served, change) => checkBudget(ws, served, change));
  } catch (err) {
    if (!(err instanceof BudgetExceeded)) throw err;
    refuse?.(err.use);
    const proposal = await openProposal(ws, (served) => flagChange(ws, served, flagId, action, edit), err.use);
    // Main changed meanwhile so that the change changes nothing any more: nothing to wait for.
    return proposal ? { proposal } : writeFlag(ws, flagId, action, edit);
  }
}

/**
 * What a promotion writes: the source's whole config in the destination, version = destination's + 1. A
 * promotion is an API write: a guard it would copy is refused without Prometheus, as one sent is.
 */
export function promoteEdit(ws: Workspace, from: EnvironmentName, to: EnvironmentName): (ref: FlagRef) => FlagEdit {
  if (from === to) throw new InvalidInputError(`fromEnv: must differ from the destination environment ${to}`, 'fromEnv');
  return ({ project, flag }: FlagRef): FlagEdit => {
    const source = flag.environments[from];
    const guarded = source.schedule?.findIndex((step) => step.guard !== undefined) ?? -1;
    if (guarded >= 0) refuseGuardWithoutPrometheus(ws, 'fromEnv', `the ${from} config's schedule[${guarded}] has a guard, and `);
    // A file copy: the whole config (variants, prerequisites and schedule too) with the destination's version + 1.
    const next: EnvironmentConfig = { ...source, version: flag.environments[to].version + 1 };
    const key = flag.meta.key;
    // What the store would refuse between files (a prerequisite the destination cannot meet, another flag's left
    // unmet), refused here by the request's field, so that a preview says so as the write does.
    const issues = configReferenceIssues(project, key, to, next);
    if (issues.length > 0) {
      const field = pointerToField(issues[0].path ?? '');
      throw new InvalidInputError(`fromEnv: the ${from} config cannot be served in ${to}: ${field}: ${issues[0].message}`, 'fromEnv');
    }
    return {
      changes: [
        { path: layout.configFile(project.project.slug, to, key), content: serializeRepositoryFile({ kind: 'config', value: next }) },
      ],
      summary: `promote ${key} from ${from} to ${to}`,
      environment: to,
      fromEnvironment: from,
    };
  };
}
