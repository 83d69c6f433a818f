import {
  type ApprovalActorType,
  type Budgets,
  ENVIRONMENTS,
  type EnvironmentBudget,
  type EnvironmentConfig,
  type EnvironmentName,
  type FlagFile,
  type FlagKind,
  type FlagLifecycle,
  type FlagState,
  type JsonValue,
  type KillEntry,
  type Prerequisite,
  type ProjectState,
  type RepositoryState,
  type RequireApproval,
  type Rule,
  type ScheduleGuard,
  type ScheduleStep,
  type SegmentFile,
  type Variant,
} from '@flagops/core';
import { jsonEqual } from './json-equal.js';

export type ConfigField = 'enabled' | 'rolloutPct' | 'valueOn' | 'valueOff';
export type MetaField = 'id' | 'name' | 'description' | 'kind' | 'defaultValue';
export type RuleField = 'description' | 'serve' | 'rolloutPct' | 'conditions';

/** One effective change, in terms a reviewer uses. Config version bumps alone are not changes. */
export type ChangeItem =
  | { type: 'project_added' }
  | { type: 'project_removed'; flagCount: number }
  | { type: 'flag_added'; kind: FlagKind }
  | { type: 'flag_deleted' }
  | { type: 'flag_archived' }
  | { type: 'flag_unarchived' }
  | { type: 'field_changed'; field: ConfigField | MetaField; before: JsonValue | undefined; after: JsonValue | undefined }
  /** The lifecycle (type, owner, expiry) came, went or changed; `before`/`after` absent: none. */
  | { type: 'lifecycle_changed'; before: FlagLifecycle | undefined; after: FlagLifecycle | undefined }
  | { type: 'rule_added'; ruleId: string }
  | { type: 'rule_removed'; ruleId: string }
  | {
      type: 'rule_changed';
      ruleId: string;
      fields: Array<{ field: RuleField; before: JsonValue | undefined; after: JsonValue | undefined }>;
    }
  | { type: 'rules_reordered' }
  /** One entry per variant whose weight or value changed, or that came or went; `before`/`after` absent: none. */
  | { type: 'variants_changed'; before: Variant[] | undefined; after: Variant[] | undefined }
  | { type: 'prerequisite_added'; flag: string; variation: string }
  | { type: 'prerequisite_removed'; flag: string; variation: string }
  | { type: 'segment_added'; segmentKey: string; userIds: number; conditions: number }
  | { type: 'segment_removed'; segmentKey: string }
  | {
      type: 'segment_changed';
      segmentKey: string;
      userIdsAdded: number;
      userIdsRemoved: number;
      conditionsChanged: boolean;
      fields: Array<'name' | 'description'>;
    }
  | { type: 'schedule_changed'; added: number; removed: number; next: ScheduleStep | null; guards?: ScheduleGuard[] }
  /** A project's budget for one environment came, went or changed (absent: none). */
  | { type: 'budget_changed'; environment: EnvironmentName; before: EnvironmentBudget | undefined; after: EnvironmentBudget | undefined }
  /** Whose changes to one environment need approval came, went or changed (absent: nobody's). */
  | {
      type: 'approval_changed';
      environment: EnvironmentName;
      before: ApprovalActorType[] | undefined;
      after: ApprovalActorType[] | undefined;
    }
  | { type: 'killed'; killedBy: string; reason?: string }
  | { type: 'unkilled' };

/** The changes of one project (flag null), one flag's metadata (environment null), or one flag in one environment. */
export interface FlagChange {
  project: string;
  flag: string | null;
  environment: EnvironmentName | null;
  changes: ChangeItem[];
}

/** What a new flag's config is compared with: the state the API creates a flag in (off at 0%, no rules). */
const NEW_FLAG_CONFIG: Omit<EnvironmentConfig, 'valueOn' | 'valueOff'> = { enabled: false, rolloutPct: 0, version: 0, rules: [] };

function field(out: ChangeItem[], name: ConfigField | MetaField, before: JsonValue | undefined, after: JsonValue | undefined): void {
  if (!jsonEqual(before, after)) out.push({ type: 'field_changed', field: name, before, after });
}

function budgetChanges(before: Budgets | undefined, after: Budgets | undefined, out: ChangeItem[]): void {
  for (const environment of ENVIRONMENTS) {
    const old = before?.[environment];
    const now = after?.[environment];
    if (!jsonEqual((old ?? null) as unknown as JsonValue, (now ?? null) as unknown as JsonValue))
      out.push({ type: 'budget_changed', environment, before: old, after: now });
  }
}

function approvalChanges(before: RequireApproval | undefined, after: RequireApproval | undefined, out: ChangeItem[]): void {
  for (const environment of ENVIRONMENTS) {
    const old = before?.[environment];
    const now = after?.[environment];
    if (!jsonEqual(old ?? null, now ?? null)) out.push({ type: 'approval_changed', environment, before: old, after: now });
  }
}

function ruleChanges(before: Rule[], after: Rule[], out: ChangeItem[]): void {
  const beforeById = new Map(before.map((rule) => [rule.id, rule]));
  const afterIds = new Set(after.map((rule) => rule.id));
  for (const rule of before) if (!afterIds.has(rule.id)) out.push({ type: 'rule_removed', ruleId: rule.id });
  for (const rule of after) {
    const old = beforeById.get(rule.id);
    if (!old) {
      out.push({ type: 'rule_added', ruleId: rule.id });
      continue;
    }
    const fields: Extract<ChangeItem, { type: 'rule_changed' }>['fields'] = [];
    if (old.serve !== rule.serve) fields.push({ field: 'serve', before: old.serve, after: rule.serve });
    if (old.rolloutPct !== rule.rolloutPct) fields.push({ field: 'rolloutPct', before: old.rolloutPct, after: rule.rolloutPct });
    if (!jsonEqual(old.conditions as unknown as JsonValue, rule.conditions as unknown as JsonValue)) {
      fields.push({ field: 'conditions', before: undefined, after: undefined });
    }
    if (old.description !== rule.description) fields.push({ field: 'description', before: old.description, after: rule.description });
    if (fields.length > 0) out.push({ type: 'rule_changed', ruleId: rule.id, fields });
  }
  // Order matters (first match wins): compare the order of the rules present on both sides.
  const keptBefore = before.filter((rule) => afterIds.has(rule.id));
  const keptAfter = after.filter((rule) => beforeById.has(rule.id));
  if (keptBefore.some((rule, i) => rule.id !== keptAfter[i].id)) out.push({ type: 'rules_reordered' });
}

function configChanges(
  before: Omit<EnvironmentConfig, 'valueOn' | 'valueOff'> & Partial<EnvironmentConfig>,
  after: EnvironmentConfig,
  killBefore: KillEntry | undefined,
  killAfter: KillEntry | undefined,
): ChangeItem[] {
  const out: ChangeItem[] = [];
  if (killAfter && !killBefore)
    out.push(
      killAfter.reason === undefined
        ? { type: 'killed', killedBy: killAfter.killedBy }
        : { type: 'killed', killedBy: killAfter.killedBy, reason: killAfter.reason },
    );
  if (killBefore && !killAfter) out.push({ type: 'unkilled' });
  field(out, 'enabled', before.enabled, after.enabled);
  field(out, 'rolloutPct', before.rolloutPct, after.rolloutPct);
  if ('valueOn' in before) field(out, 'valueOn', before.valueOn, after.valueOn);
  if ('valueOff' in before) field(out, 'valueOff', before.valueOff, after.valueOff);
  ruleChanges(before.rules, after.rules, out);
  if (!jsonEqual(before.variants as JsonValue | undefined, after.variants as JsonValue | undefined))
    out.push({ type: 'variants_changed', before: before.variants, after: after.variants });
  prerequisiteChanges(before.prerequisites ?? [], after.prerequisites ?? [], out);
  scheduleChanges(before.schedule ?? [], after.schedule ?? [], out);
  return out;
}

function prerequisiteChanges(before: readonly Prerequisite[], after: readonly Prerequisite[], out: ChangeItem[]): void {
  const same = (a: Prerequisite) => (b: Prerequisite) => a.flag === b.flag && a.variation === b.variation;
  for (const p of before) if (!after.some(same(p))) out.push({ type: 'prerequisite_removed', flag: p.flag, variation: p.variation });
  for (const p of after) if (!before.some(same(p))) out.push({ type: 'prerequisite_added', flag: p.flag, variation: p.variation });
}

function segmentChanges(
  before: ReadonlyMap<string, SegmentFile> | undefined,
  after: ReadonlyMap<string, SegmentFile> | undefined,
  out: ChangeItem[],
): void {
  const keys = [...new Set([...(before?.keys() ?? []), ...(after?.keys() ?? [])])].sort();
  for (const segmentKey of keys) {
    const old = before?.get(segmentKey);
    const now = after?.get(segmentKey);
    if (!now) {
      out.push({ type: 'segment_removed', segmentKey });
      continue;
    }
    if (!old) {
      out.push({ type: 'segment_added', segmentKey, userIds: now.userIds.length, conditions: now.conditions.length });
      continue;
    }
    const oldIds = new Set(old.userIds);
    const newIds = new Set(now.userIds);
    const userIdsAdded = [...newIds].filter((id) => !oldIds.has(id)).length;
    const userIdsRemoved = [...oldIds].filter((id) => !newIds.has(id)).length;
    const conditionsChanged = !jsonEqual(old.conditions as unknown as JsonValue, now.conditions as unknown as JsonValue);
    const fields = (['name', 'description'] as const).filter((name) => old[name] !== now[name]);
    if (userIdsAdded > 0 || userIdsRemoved > 0 || conditionsChanged || fields.length > 0)
      out.push({ type: 'segment_changed', segmentKey, userIdsAdded, userIdsRemoved, conditionsChanged, fields });
  }
}

/**
 * Steps are compared whole (time, fields and guard): a step moved to another time, or given another guard, is
 * one removed and one added. The guards of the new schedule (each once) go with the change, so a reviewer
 * reads what will stop the rollout.
 */
function scheduleChanges(before: ScheduleStep[], after: ScheduleStep[], out: ChangeItem[]): void {
  const same = (a: ScheduleStep, b: ScheduleStep) =>
    Date.parse(a.at) === Date.parse(b.at) && jsonEqual(a.set, b.set) && jsonEqual(guardJson(a), guardJson(b));
  const added = after.filter((step) => !before.some((old) => same(old, step))).length;
  const removed = before.filter((step) => !after.some((now) => same(now, step))).length;
  if (added === 0 && removed === 0) return;
  const item: Extract<ChangeItem, { type: 'schedule_changed' }> = { type: 'schedule_changed', added, removed, next: after[0] ?? null };
  const guards: ScheduleGuard[] = [];
  for (const step of after)
    if (step.guard && !guards.some((g) => jsonEqual(guardJson({ guard: g }), guardJson(step)))) guards.push(step.guard);
  if (guards.length > 0) item.guards = guards;
  out.push(item);
}

const guardJson = (step: Pick<ScheduleStep, 'guard'>): JsonValue => (step.guard ?? null) as unknown as JsonValue;

function metaChanges(before: FlagFile, after: FlagFile): ChangeItem[] {
  const out: ChangeItem[] = [];
  if (before.archivedAt === null && after.archivedAt !== null) out.push({ type: 'flag_archived' });
  if (before.archivedAt !== null && after.archivedAt === null) out.push({ type: 'flag_unarchived' });
  for (const name of ['id', 'name', 'description', 'kind', 'defaultValue'] as const) field(out, name, before[name], after[name]);
  lifecycleChange(before.lifecycle, after.lifecycle, out);
  return out;
}

function lifecycleChange(before: FlagLifecycle | undefined, after: FlagLifecycle | undefined, out: ChangeItem[]): void {
  if (!jsonEqual(before as unknown as JsonValue | undefined, after as unknown as JsonValue | undefined))
    out.push({ type: 'lifecycle_changed', before, after });
}

/** A new flag: added, with its lifecycle when it has one (a reviewer wants to see owner and expiry). */
function addedFlag(meta: FlagFile): ChangeItem[] {
  const out: ChangeItem[] = [{ type: 'flag_added', kind: meta.kind }];
  lifecycleChange(undefined, meta.lifecycle, out);
  return out;
}

function flagChanges(project: string, key: string, before: ProjectState | undefined, after: ProjectState, out: FlagChange[]): void {
  const old: FlagState | undefined = before?.flags.get(key);
  const now = after.flags.get(key)!;
  const meta = old ? metaChanges(old.meta, now.meta) : addedFlag(now.meta);
  if (meta.length > 0) out.push({ project, flag: key, environment: null, changes: meta });
  for (const env of ENVIRONMENTS) {
    const changes = configChanges(
      old ? old.environments[env] : NEW_FLAG_CONFIG,
      now.environments[env],
      before?.kills[env].kills[key],
      after.kills[env].kills[key],
    );
    if (changes.length > 0) out.push({ project, flag: key, environment: env, changes });
  }
}

/**
 * The effective changes between two states, per project, flag and environment, in a stable order
 * (projects and flags by name, environments dev, staging, prod). A flag that appears in `after` only is
 * "added" and its configs are compared with a new flag's (off at 0%, no rules), so what goes live shows.
 */
export function diffStates(before: RepositoryState, after: RepositoryState): FlagChange[] {
  const out: FlagChange[] = [];
  const slugs = [...new Set([...before.projects.keys(), ...after.projects.keys()])].sort();
  for (const slug of slugs) {
    const old = before.projects.get(slug);
    const now = after.projects.get(slug);
    if (!now) {
      out.push({ project: slug, flag: null, environment: null, changes: [{ type: 'project_removed', flagCount: old!.flags.size }] });
      continue;
    }
    const projectItems: ChangeItem[] = [];
    if (!old) projectItems.push({ type: 'project_added' });
    else {
      field(projectItems, 'id', old.project.id, now.project.id);
      field(projectItems, 'name', old.project.name, now.project.name);
      approvalChanges(old.project.requireApproval, now.project.requireApproval, projectItems);
      budgetChanges(old.project.budgets, now.project.budgets, projectItems);
    }
    segmentChanges(old?.segments, now.segments, projectItems);
    if (projectItems.length > 0) out.push({ project: slug, flag: null, environment: null, changes: projectItems });
    const keys = [...new Set([...(old?.flags.keys() ?? []), ...now.flags.keys()])].sort();
    for (const key of keys) {
      if (now.flags.has(key)) flagChanges(slug, key, old, now, out);
      else out.push({ project: slug, flag: key, environment: null, changes: [{ type: 'flag_deleted' }] });
    }
  }
  return out;
}
