import type {
  AttributeCondition,
  Condition,
  EnvironmentName,
  FlagKind,
  JsonValue,
  Prerequisite,
  RequireApproval,
  ScheduleStep,
  Serve,
  Variant,
} from '@flagops/core';

/** The request bodies the schemas in schemas/api/ accept, typed for the control plane. */
export interface ProjectCreateBody {
  name: string;
  slug: string;
}

export interface FlagCreateBody {
  key: string;
  name?: string;
  description?: string;
  kind?: FlagKind;
  defaultValue?: JsonValue;
}

export interface FlagPatchBody {
  name?: string;
  description?: string;
}

/** A rule as sent by a client: without `id`, the server assigns one; `conditions` absent means none. */
export interface RuleInput {
  id?: string;
  description?: string;
  conditions?: Condition[];
  serve: Serve;
  rolloutPct?: number;
}

export interface ConfigUpdateBody {
  enabled?: boolean;
  rolloutPct?: number;
  rules?: RuleInput[];
  valueOn?: JsonValue;
  valueOff?: JsonValue;
  /** null removes them. */
  variants?: Variant[] | null;
  /** null or [] removes them. */
  prerequisites?: Prerequisite[] | null;
  /** Replaces the schedule; [] cancels every step. */
  schedule?: ScheduleStep[];
  clearKill?: boolean;
  expectedVersion?: number;
}

export interface PromoteBody {
  fromEnv: EnvironmentName;
}

export interface KillBody {
  reason?: string;
}

export interface KeyCreateBody {
  kind: 'admin' | 'agent' | 'sdk';
  name?: string;
  projectId?: string;
  environment?: EnvironmentName;
}

/** PUT /projects/:id/segments/:key: the whole segment; fields left out are empty. */
export interface SegmentPutBody {
  name?: string;
  description?: string;
  userIds?: string[];
  conditions?: AttributeCondition[];
  expectedVersion?: number;
}

/** A progressive rollout to write as a schedule (src/schedule/rollout-plan.ts). */
export interface RolloutPlanBody {
  startPct: number;
  stepPct: number;
  /** `30s`, `15m`, `1h`, `2d`. */
  every: string;
  maxPct?: number;
  startAt?: string;
  expectedVersion?: number;
}

export interface TriggerCreateBody {
  name?: string;
}

/** PATCH /api/v1/projects/:id: the fields sent replace the current ones; `requireApproval: null` or `{}` removes it. */
export interface ProjectPatchBody {
  name?: string;
  requireApproval?: RequireApproval | null;
}

export interface ProposalRejectBody {
  reason?: string;
}

/** A change to preview: a config update, or a promotion from `fromEnv` (exactly one). */
export interface ChangePreviewBody {
  config?: ConfigUpdateBody;
  fromEnv?: EnvironmentName;
}

export interface ApiBodies {
  'project-create': ProjectCreateBody;
  'project-patch': ProjectPatchBody;
  'flag-create': FlagCreateBody;
  'flag-patch': FlagPatchBody;
  'config-update': ConfigUpdateBody;
  promote: PromoteBody;
  kill: KillBody;
  'key-create': KeyCreateBody;
  'segment-put': SegmentPutBody;
  'rollout-plan': RolloutPlanBody;
  'trigger-create': TriggerCreateBody;
  'proposal-reject': ProposalRejectBody;
  'change-preview': ChangePreviewBody;
}
