import type {
  Condition,
  EnvironmentConfig,
  FlagFile,
  JsonValue,
  KillEntry,
  KillsFile,
  ProjectFile,
  Rule,
  ScheduleStep,
} from '@flagops/core';
import { deriveFlagId, deriveProjectId } from './ids.js';

// Schema-valid values → typed objects with defaults filled in and keys in one fixed order, so that
// serialization is stable and two equal files give deeply equal objects.

type Loose<T> = { [K in keyof T]?: T[K] };

export function normalizeProject(value: Loose<ProjectFile>, folderSlug: string): ProjectFile {
  return { id: value.id ?? deriveProjectId(folderSlug), name: value.name!, slug: value.slug! };
}

export function normalizeFlag(value: Loose<FlagFile>, projectSlug: string): FlagFile {
  const flag = { id: value.id ?? deriveFlagId(projectSlug, value.key!), key: value.key! } as FlagFile;
  if (value.name !== undefined) flag.name = value.name;
  if (value.description !== undefined) flag.description = value.description;
  flag.kind = value.kind ?? 'boolean';
  if (value.defaultValue !== undefined) flag.defaultValue = value.defaultValue;
  flag.archivedAt = value.archivedAt ?? null;
  return flag;
}

function normalizeCondition(value: Condition): Condition {
  return { attribute: value.attribute, op: value.op, value: value.value };
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
  return { at: value.at, set };
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
  // An empty schedule is no schedule: the key is left out, so files without one read and write as before.
  if (value.schedule && value.schedule.length > 0) config.schedule = value.schedule.map(normalizeStep);
  return config;
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
