import {
  APPROVAL_ACTOR_TYPES,
  type AttributeCondition,
  type Budgets,
  type Condition,
  ENVIRONMENTS,
  type EnvironmentConfig,
  type FlagFile,
  type FlagLifecycle,
  type JsonValue,
  type KillEntry,
  type KillsFile,
  type Prerequisite,
  type ProjectFile,
  type RequireApproval,
  type Rule,
  type ScheduleGuard,
  type ScheduleStep,
  type SegmentFile,
  type Variant,
} from '@flagops/core';
import { deriveFlagId, deriveProjectId } from './ids.js';

// Schema-valid values → typed objects with defaults filled in and keys in one fixed order, so that
// serialization is stable and two equal files give deeply equal objects.

type Loose<T> = { [K in keyof T]?: T[K] };

export function normalizeProject(value: Loose<ProjectFile>, folderSlug: string): ProjectFile {
  const project: ProjectFile = { id: value.id ?? deriveProjectId(folderSlug), name: value.name!, slug: value.slug! };
  const policy = normalizeRequireApproval(value.requireApproval);
  if (policy) project.requireApproval = policy;
  const budgets = normalizeBudgets(value.budgets);
  if (budgets) project.budgets = budgets;
  return project;
}

/** Environments in their fixed order, actor types without duplicates; a budget naming no actor type is none. */
export function normalizeBudgets(value: Budgets | undefined | null): Budgets | undefined {
  if (!value) return undefined;
  const budgets: Budgets = {};
  for (const env of ENVIRONMENTS) {
    const budget = value[env];
    if (!budget || budget.actors.length === 0) continue;
    budgets[env] = { movedPctPerHour: budget.movedPctPerHour, actors: APPROVAL_ACTOR_TYPES.filter((t) => budget.actors.includes(t)) };
  }
  return Object.keys(budgets).length > 0 ? budgets : undefined;
}

/** Environments in their fixed order, actor types without duplicates; an empty policy is none. */
export function normalizeRequireApproval(value: RequireApproval | undefined | null): RequireApproval | undefined {
  if (!value) return undefined;
  const policy: RequireApproval = {};
  for (const env of ENVIRONMENTS) {
    const types = value[env];
    if (types && types.length > 0) policy[env] = APPROVAL_ACTOR_TYPES.filter((t) => types.includes(t));
  }
  return Object.keys(policy).length > 0 ? policy : undefined;
}

export function normalizeFlag(value: Loose<FlagFile>, projectSlug: string): FlagFile {
  const flag = { id: value.id ?? deriveFlagId(projectSlug, value.key!), key: value.key! } as FlagFile;
  if (value.name !== undefined) flag.name = value.name;
  if (value.description !== undefined) flag.description = value.description;
  flag.kind = value.kind ?? 'boolean';
  if (value.defaultValue !== undefined) flag.defaultValue = value.defaultValue;
  flag.archivedAt = value.archivedAt ?? null;
  if (value.lifecycle !== undefined) flag.lifecycle = normalizeLifecycle(value.lifecycle);
  return flag;
}

/** `type` spelled out (release when left out), then owner and expiresAt when given. */
export function normalizeLifecycle(value: Partial<FlagLifecycle>): FlagLifecycle {
  const lifecycle: FlagLifecycle = { type: value.type ?? 'release' };
  if (value.owner !== undefined) lifecycle.owner = value.owner;
  if (value.expiresAt !== undefined) lifecycle.expiresAt = value.expiresAt;
  return lifecycle;
}

function normalizeCondition(value: Condition): Condition {
  // A segment condition has no attribute.
  if (value.attribute === undefined) return { op: value.op, value: value.value };
  return { attribute: value.attribute, op: value.op, value: value.value };
}

function normalizeVariant(value: Variant): Variant {
  const variant: Variant = { name: value.name, value: value.value, weight: value.weight };
  if (value.description !== undefined) variant.description = value.description;
  return variant;
}

function normalizePrerequisite(value: Prerequisite): Prerequisite {
  return { flag: value.flag, variation: value.variation };
}

function normalizeRule(value: Loose<Rule>): Rule {
  const rule = { id: value.id! } as Rule;
  if (value.description !== undefined) rule.description = value.description;
  rule.serve = value.serve!;
  if (value.rolloutPct !== undefined) rule.rolloutPct = value.rolloutPct;
  rule.conditions = (value.conditions ?? []).map(normalizeCondition);
  return rule;
}

function normalizeStep(value: ScheduleStep): ScheduleStep {
  const set: ScheduleStep['set'] = {};
  if (value.set.enabled !== undefined) set.enabled = value.set.enabled;
  if (value.set.rolloutPct !== undefined) set.rolloutPct = value.set.rolloutPct;
  if (!value.guard) return { at: value.at, set };
  const guard: ScheduleGuard = { query: value.guard.query };
  if (value.guard.max !== undefined) guard.max = value.guard.max;
  if (value.guard.min !== undefined) guard.min = value.guard.min;
  if (value.guard.intervalSeconds !== undefined) guard.intervalSeconds = value.guard.intervalSeconds;
  return { at: value.at, set, guard };
}

export function normalizeConfig(value: Loose<EnvironmentConfig>): EnvironmentConfig {
  const config: EnvironmentConfig = {
    enabled: value.enabled!,
    rolloutPct: value.rolloutPct!,
    valueOn: value.valueOn as JsonValue,
    valueOff: value.valueOff as JsonValue,
    version: value.version ?? 0,
    rules: (value.rules ?? []).map(normalizeRule),
  };
  // Left out when there are none, so configs without them read (and are written) as before.
  if (value.variants != null && value.variants.length > 0) config.variants = value.variants.map(normalizeVariant);
  if (value.prerequisites != null && value.prerequisites.length > 0) config.prerequisites = value.prerequisites.map(normalizePrerequisite);
  // An empty schedule is no schedule: the key is left out, so files without one read and write as before.
  if (value.schedule && value.schedule.length > 0) config.schedule = value.schedule.map(normalizeStep);
  return config;
}

export function normalizeSegment(value: Loose<SegmentFile>): SegmentFile {
  const segment = { key: value.key! } as SegmentFile;
  if (value.name !== undefined) segment.name = value.name;
  if (value.description !== undefined) segment.description = value.description;
  segment.version = value.version ?? 0;
  segment.userIds = [...(value.userIds ?? [])];
  segment.conditions = (value.conditions ?? []).map((c) => normalizeCondition(c) as AttributeCondition);
  return segment;
}

function normalizeKill(value: KillEntry): KillEntry {
  const kill: KillEntry = { killedAt: value.killedAt, killedBy: value.killedBy };
  if (value.reason !== undefined) kill.reason = value.reason;
  return kill;
}

/** Entries sorted by flag key, so the file reads (and diffs) the same whatever order kills happened in. */
export function normalizeKills(value: { kills?: Record<string, KillEntry> | null } | null): KillsFile {
  const kills: Record<string, KillEntry> = {};
  const source = value?.kills ?? {};
  for (const key of Object.keys(source).sort()) kills[key] = normalizeKill(source[key]);
  return { kills };
}
