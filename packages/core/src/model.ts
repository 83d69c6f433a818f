/**
 * The flagops data model: the repository's files as typed objects, what a commit holds, the snapshot an
 * environment serves, and the context and result of an evaluation. Types and constants only.
 */

/** Every reason an evaluation result can carry; `error` is the SDKs' own, for failures on their side. */
export const REASONS = [
  'killed',
  'archived',
  'flag_disabled',
  'prerequisite_failed',
  'rule_match',
  'rollout',
  'default',
  'flag_not_found',
  'error',
] as const;
export type Reason = (typeof REASONS)[number];

export type Variation = 'on' | 'off' | 'default';

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

/** What a flag is for; `release` and `experiment` flags are meant to be removed once rolled out. */
export const FLAG_TYPES = ['release', 'experiment', 'operational', 'permission', 'kill-switch'] as const;
export type FlagType = (typeof FLAG_TYPES)[number];

/** Who owns a flag, what it is for and when it should be gone: the data stale-flag detection works from. */
export interface FlagLifecycle {
  type: FlagType;
  owner?: string;
  /** An ISO-8601 date (`2027-03-31`, the end of that day in UTC) or date-time. */
  expiresAt?: string;
}

/** The actor types a project may require approval from: the ones that change flags through the API. */
export const APPROVAL_ACTOR_TYPES = ['admin', 'agent', 'session'] as const;
export type ApprovalActorType = (typeof APPROVAL_ACTOR_TYPES)[number];

/** Per environment, whose config updates and promotions into it wait for approval (a proposal). */
export type RequireApproval = Partial<Record<EnvironmentName, ApprovalActorType[]>>;

/**
 * How much of an environment's users the changes of the listed actor types may move in an hour (the sum of
 * their impacts' `movedPct` over the last 60 minutes) before their next change waits for approval.
 */
export interface EnvironmentBudget {
  /** 0 to 100. */
  movedPctPerHour: number;
  actors: ApprovalActorType[];
}

/** Per environment, its budget; absent: changes into it are never held for budget. */
export type Budgets = Partial<Record<EnvironmentName, EnvironmentBudget>>;

/** projects/<slug>/project.yaml */
export interface ProjectFile {
  id: string;
  name: string;
  slug: string;
  /** Absent: every change is applied at once. */
  requireApproval?: RequireApproval;
  /** Absent: no change waits for budget. */
  budgets?: Budgets;
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
  lifecycle?: FlagLifecycle;
}

/** A condition on one attribute of the context. */
export interface AttributeCondition {
  attribute: string;
  op: Operator;
  value: JsonValue;
}

/** The two operators that test membership of a project's segment; their condition has no attribute. */
export const SEGMENT_OPERATORS = ['in_segment', 'not_in_segment'] as const;
export type SegmentOperator = (typeof SEGMENT_OPERATORS)[number];

/** A condition on segment membership: `value` is the segment's key. */
export interface SegmentCondition {
  op: SegmentOperator;
  value: string;
}

/**
 * A rule's condition: on an attribute (AttributeCondition), or on segment membership (SegmentCondition, which
 * has no attribute). One shape for both, so code that walks conditions reads them the same way.
 */
export interface Condition {
  /** Absent exactly for in_segment and not_in_segment. */
  attribute?: string;
  op: Operator | SegmentOperator;
  value: JsonValue;
}

export function isSegmentCondition(condition: Condition): condition is Condition & SegmentCondition {
  return condition.op === 'in_segment' || condition.op === 'not_in_segment';
}

/**
 * What a rule serves: `on` (valueOn, or one of the variants by the variant bucket when the config has
 * variants), `off` (valueOff), or a variant by name, which every context the rule applies to gets.
 */
export type Serve = 'on' | 'off' | (string & {});

export interface Rule {
  id: string;
  description?: string;
  conditions: Condition[];
  serve: Serve;
  rolloutPct?: number;
}

/** Variant names: lower-case, and never one of the fixed variations, which results already use. */
export const VARIANT_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,62}$/;
export const RESERVED_VARIANT_NAMES: readonly string[] = ['on', 'off', 'default'];
export const MAX_VARIANTS = 32;
export const MAX_PREREQUISITES = 16;
export const MAX_SEGMENT_USER_IDS = 10_000;
export const MAX_SEGMENT_CONDITIONS = 32;

/** One arm of an A/B/n test: served to `weight` percent of the users that would get valueOn. */
export interface Variant {
  name: string;
  value: JsonValue;
  /** Percent, at most two decimals; a config's weights sum to exactly 100. */
  weight: number;
  description?: string;
}

/** The flag is served only when `flag`, evaluated for the same context in the same environment, serves `variation`. */
export interface Prerequisite {
  flag: string;
  /** `on`, `off`, `default` or a variant name of that flag. */
  variation: string;
}

/** projects/<slug>/environments/<env>/<key>.yaml */
export interface EnvironmentConfig {
  enabled: boolean;
  rolloutPct: number;
  valueOn: JsonValue;
  valueOff: JsonValue;
  version: number;
  rules: Rule[];
  /** Absent when the config has none: it serves valueOn. */
  variants?: Variant[];
  /** Absent when the config has none. */
  prerequisites?: Prerequisite[];
  /** Changes the service makes when each step falls due, oldest first; absent when there are none. */
  schedule?: ScheduleStep[];
}

/** projects/<slug>/segments/<key>.yaml: a reusable audience of a project's flags. */
export interface SegmentFile {
  key: string;
  name?: string;
  description?: string;
  version: number;
  userIds: string[];
  /** Attribute conditions only: a segment does not refer to other segments. */
  conditions: AttributeCondition[];
}

/** The fields a scheduled step may set. */
export const SCHEDULE_FIELDS = ['enabled', 'rolloutPct'] as const;

/** At most this many steps in one environment's schedule. */
export const MAX_SCHEDULE_STEPS = 50;

/** One step of a schedule: at `at` (ISO-8601 UTC), the service sets these fields in one commit. */
export interface ScheduleStep {
  at: string;
  set: { enabled?: boolean; rolloutPct?: number };
  /** A metric that must hold from when it is written until the last step is applied, and when its step falls due; a failure stops the rollout. */
  guard?: ScheduleGuard;
}

/** Default seconds between two checks of a guard while its rollout runs. */
export const GUARD_DEFAULT_INTERVAL_SECONDS = 60;

/**
 * A PromQL instant query whose value (the first sample's) must stay at most `max` and at least `min` (one or
 * both given), checked every `intervalSeconds` (default 60) and when the step falls due.
 */
export interface ScheduleGuard {
  query: string;
  max?: number;
  min?: number;
  intervalSeconds?: number;
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
  /** The project's segments by key; absent in states built before segments existed (read it as empty). */
  segments?: ReadonlyMap<string, SegmentFile>;
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
  /** The variant bucket, when a variant was chosen by it. */
  variantBucket?: number;
  /** The prerequisite that did not serve its variation (reason prerequisite_failed). */
  prerequisiteKey?: string;
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
  variants?: Variant[];
  prerequisites?: Prerequisite[];
}

/** A segment as a snapshot serves it: what membership needs. */
export interface SnapshotSegment {
  userIds: string[];
  conditions: AttributeCondition[];
}

export interface Snapshot {
  version: number;
  environment: EnvironmentName;
  flags: Record<string, SnapshotFlag>;
  /** The project's segments by key. */
  segments?: Record<string, SnapshotSegment>;
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
  /** Sessions: the role the person acted with (`editor@shop`), as `Flagops-Actor-Role` records it. */
  role?: string;
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
  'project_update',
  'project_delete',
  'segment_update',
  'segment_delete',
  'import',
  'change',
  'scheduled_change',
  'scheduled_change_skipped',
  'guard_failed',
  'proposal_open',
  'proposal_reject',
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
  /** For segment_update and segment_delete. */
  segmentKey?: string;
  /** `role`: a session's role when it acted (commits made before roles have none: they were admins). */
  actor: { type: Actor['type']; keyPrefix?: string; name?: string; role?: string };
  /** proposal_open, proposal_reject, and the commit that applied an approved proposal. */
  proposalId?: string;
  /** The commit that applied an approved proposal: who proposed it (the entry's actor approved it). */
  proposedBy?: { type: Actor['type']; keyPrefix?: string; name?: string; role?: string };
  /** The credential that pushed the commit over git over HTTP; absent for commits that arrived otherwise. */
  pushedBy?: Pusher;
  /** A kill or clear made again (docs/audit.md): the id of the entry that first made it. */
  madeFrom?: string;
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
