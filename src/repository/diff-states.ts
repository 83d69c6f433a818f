import {
  ENVIRONMENTS,
  type EnvironmentConfig,
  type EnvironmentName,
  type FlagFile,
  type FlagKind,
  type FlagState,
  type JsonValue,
  type KillEntry,
  type ProjectState,
  type RepositoryState,
  type Rule,
  type ScheduleStep,
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
  | { type: 'rule_added'; ruleId: string }
  | { type: 'rule_removed'; ruleId: string }
  | {
      type: 'rule_changed';
      ruleId: string;
      fields: Array<{ field: RuleField; before: JsonValue | undefined; after: JsonValue | undefined }>;
    }
  | { type: 'rules_reordered' }
  | { type: 'schedule_changed'; added: number; removed: number; next: ScheduleStep | null }
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
  scheduleChanges(before.schedule ?? [], after.schedule ?? [], out);
  return out;
}

/** Steps are compared whole (time and fields): a step moved to another time is one removed and one added. */
function scheduleChanges(before: ScheduleStep[], after: ScheduleStep[], out: ChangeItem[]): void {
  const same = (a: ScheduleStep, b: ScheduleStep) => Date.parse(a.at) === Date.parse(b.at) && jsonEqual(a.set, b.set);
  const added = after.filter((step) => !before.some((old) => same(old, step))).length;
  const removed = before.filter((step) => !after.some((now) => same(now, step))).length;
  if (added > 0 || removed > 0) out.push({ type: 'schedule_changed', added, removed, next: after[0] ?? null });
}

function metaChanges(before: FlagFile, after: FlagFile): ChangeItem[] {
  const out: ChangeItem[] = [];
  if (before.archivedAt === null && after.archivedAt !== null) out.push({ type: 'flag_archived' });
  if (before.archivedAt !== null && after.archivedAt === null) out.push({ type: 'flag_unarchived' });
  for (const name of ['id', 'name', 'description', 'kind', 'defaultValue'] as const) field(out, name, before[name], after[name]);
  return out;
}

function flagChanges(project: string, key: string, before: ProjectState | undefined, after: ProjectState, out: FlagChange[]): void {
  const old: FlagState | undefined = before?.flags.get(key);
  const now = after.flags.get(key)!;
  const meta = old ? metaChanges(old.meta, now.meta) : [{ type: 'flag_added', kind: now.meta.kind } as ChangeItem];
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
    }
    if (projectItems.length > 0) out.push({ project: slug, flag: null, environment: null, changes: projectItems });
    const keys = [...new Set([...(old?.flags.keys() ?? []), ...now.flags.keys()])].sort();
    for (const key of keys) {
      if (now.flags.has(key)) flagChanges(slug, key, old, now, out);
      else out.push({ project: slug, flag: key, environment: null, changes: [{ type: 'flag_deleted' }] });
    }
  }
  return out;
}
