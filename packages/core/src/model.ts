/**
 * The flagops data model: the repository's files as typed objects, what a commit holds, the snapshot an
 * environment serves, and the context and result of an evaluation. Types and constants only.
 */
import type { Reason, Variation } from './reasons.js';

/** Every project has exactly these three environments. */
export const ENVIRONMENTS = ['dev', 'staging', 'prod'] as const;
export type EnvironmentName = (typeof ENVIRONMENTS)[number];

export function isEnvironmentName(value: unknown): value is EnvironmentName {
  return value === 'dev' || value === 'staging' || value === 'prod';
}

/** The twelve condition operators. */
export const OPERATORS = [
  'eq',
  'neq',
  'in',
  'not_in',
  'contains',
  'gt',
  'gte',
  'lt',
  'lte',
  'semver_eq',
  'semver_gt',
  'semver_lt',
] as const;
export type Operator = (typeof OPERATORS)[number];

/** What a condition's `value` must be for its operator; enforced by the schema at write time. */
export const OPERATOR_VALUE_TYPE: Readonly<Record<Operator, 'scalar' | 'array' | 'string-or-scalar' | 'number' | 'semver'>> = {
  eq: 'scalar',
  neq: 'scalar',
  in: 'array',
  not_in: 'array',
  contains: 'string-or-scalar',
  gt: 'number',
  gte: 'number',
  lt: 'number',
  lte: 'number',
  semver_eq: 'semver',
  semver_gt: 'semver',
  semver_lt: 'semver',
};

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export const FLAG_KINDS = ['boolean', 'string', 'number', 'json'] as const;
export type FlagKind = (typeof FLAG_KINDS)[number];

/** projects/<slug>/project.yaml */
export interface ProjectFile {
  id: string;
  name: string;
  slug: string;
}

/** projects/<slug>/flags/<key>.yaml */
export interface FlagFile {
  id: string;
  key: string;
  name?: string;
  description?: string;
  kind: FlagKind;
  defaultValue?: JsonValue;
  archivedAt: string | null;
}

export interface Condition {
  attribute: string;
  op: Operator;
  value: JsonValue;
}

export interface Rule {
  id: string;
  description?: string;
  conditions: Condition[];
  serve: 'on' | 'off';
  rolloutPct?: number;
}

/** projects/<slug>/environments/<env>/<key>.yaml */
export interface EnvironmentConfig {
  enabled: boolean;
  rolloutPct: number;
  valueOn: JsonValue;
  valueOff: JsonValue;
  version: number;
  rules: Rule[];
  /** Changes the service makes when each step falls due, oldest first; absent when there are none. */
  schedule?: ScheduleStep[];
}

/** The fields a scheduled step may set. */
export const SCHEDULE_FIELDS = ['enabled', 'rolloutPct'] as const;

/** At most this many steps in one environment's schedule. */
export const MAX_SCHEDULE_STEPS = 50;

/** One step of a schedule: at `at` (ISO-8601 UTC), the service sets these fields in one commit. */
export interface ScheduleStep {
  at: string;
  set: { enabled?: boolean; rolloutPct?: number };
}

/** One entry of projects/<slug>/environments/<env>/kills.yaml */
export interface KillEntry {
  killedAt: string;
  killedBy: string;
  reason?: string;
}

/** projects/<slug>/environments/<env>/kills.yaml: flag key → kill. A flag absent from the map is not killed. */
export interface KillsFile {
  kills: Record<string, KillEntry>;
}

/** A flag with its metadata and one config per environment, as read from one commit. */
export interface FlagState {
  meta: FlagFile;
  environments: Record<EnvironmentName, EnvironmentConfig>;
}

export interface ProjectState {
  project: ProjectFile;
  flags: Map<string, FlagState>;
  kills: Record<EnvironmentName, KillsFile>;
}

/** Everything on `main` at one commit, typed. Keyed by project slug. */
export interface RepositoryState {
  commit: string | null;
  projects: Map<string, ProjectState>;
}

/** The context an application evaluates a flag for: the user to bucket, and the attributes rules test. */
export interface EvaluationContext {
  userId?: string;
  attributes?: Record<string, unknown>;
}

export interface EvaluationResult {
  value: JsonValue;
  reason: Reason;
  variation?: Variation | string;
  ruleId?: string;
  bucket?: number;
  errorCode?: string;
}

/** One flag as an environment's snapshot serves it: its config, whether it is killed or archived, its default. */
export interface SnapshotFlag {
  enabled: boolean;
  rolloutPct: number;
  valueOn: JsonValue;
  valueOff: JsonValue;
  rules: Rule[];
  killed: boolean;
  archived: boolean;
  defaultValue: JsonValue;
}

export interface Snapshot {
  version: number;
  environment: EnvironmentName;
  flags: Record<string, SnapshotFlag>;
}

/**
 * Who can make a change. `scheduler`: the service applying a scheduled step; `trigger`: a kill made through a
 * trigger's URL (an alerting system).
 */
export const ACTOR_TYPES = ['admin', 'agent', 'session', 'git', 'scheduler', 'trigger'] as const;

/** Who made a change; becomes the commit author and the audit entry's actor. */
export interface Actor {
  type: (typeof ACTOR_TYPES)[number];
  /** Display name: the key's name, the person's name, or the git author. */
  name: string;
  /** Non-secret key prefix, for key actions. */
  keyPrefix?: string;
  email?: string;
}

export const AUDIT_ACTIONS = [
  'kill',
  'clear_kill',
  'promote',
  'config_update',
  'flag_create',
  'flag_update',
  'flag_archive',
  'flag_delete',
  'project_create',
  'project_delete',
  'import',
  'change',
  'scheduled_change',
  'scheduled_change_skipped',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  id: string;
  at: string;
  action: AuditAction;
  projectSlug: string | null;
  flagKey: string | null;
  environment: EnvironmentName | null;
  fromEnvironment?: EnvironmentName;
  actor: { type: Actor['type']; keyPrefix?: string; name?: string };
  /** The credential that pushed the commit over git over HTTP; absent for commits that arrived otherwise. */
  pushedBy?: Pusher;
  message?: string;
  reason?: string;
}

/** A key that pushed commits over git over HTTP, as recorded when the push was accepted. */
export interface Pusher {
  type: 'admin' | 'agent';
  keyPrefix: string;
  /** The key's name. */
  name?: string;
}
