import type { AttributeCondition, AuditEntry, EnvironmentConfig, EnvironmentName, FlagFile } from '@flagops/core';
import type { BudgetUse } from '../../features/budgets/budget-rules.js';
import type { ImpactEntry } from '../../features/proposals/impact.js';

/**
 * The wire shapes the MCP server exchanges with the control plane (docs/api.md). Request bodies are the types
 * generated from schemas/api/ (types only: nothing of the server's code runs in flagops-mcp); answers below.
 */
export type {
  ChangePreviewBody,
  ConfigUpdateBody,
  FlagCreateBody,
  FlagPatchBody,
  RolloutPlanBody,
  SegmentPutBody,
} from '../../foundations/validation/api-types.generated.js';

export interface ProjectResponse {
  id: string;
  name: string;
  slug: string;
  environments: Array<{ id: string; name: EnvironmentName }>;
}

/** One environment of a flag response: the config plus the kill state. */
export interface EnvironmentState extends EnvironmentConfig {
  killed: boolean;
  killedAt?: string;
  killedBy?: string;
  killReason?: string;
}

/** An invalid file on main, as flag responses name it. */
export interface InvalidFileResponse {
  file: string;
  line: number | null;
  message: string;
}

export interface FlagResponse extends FlagFile {
  environments: Record<EnvironmentName, EnvironmentState>;
  /** Only while an invalid file on main holds the flag back at its last valid state. */
  invalidFiles?: InvalidFileResponse[];
  /** Only on a kill's answer: the flag was killed already and nothing changed. */
  alreadyKilled?: boolean;
}

/** One flag's health (docs/flag-health.md). */
export interface FlagHealthResponse {
  key: string;
  status: 'active' | 'potentially_stale' | 'stale';
  reasons: Array<{ code: string; message: string }>;
}

/** A change proposal (docs/proposals.md). */
export interface ProposalResponse {
  id: string;
  status: 'open' | 'merged' | 'rejected';
  /** Open, but main changed what it was made against since: it cannot be approved. */
  stale: boolean;
  staleReason?: string;
  projectSlug: string;
  flagKey: string | null;
  environment: EnvironmentName | null;
  fromEnvironment?: EnvironmentName;
  segmentKey?: string;
  action: string;
  proposedBy: AuditEntry['actor'];
  createdAt: string;
  decidedBy?: AuditEntry['actor'];
  decidedAt?: string;
  /** `budget`: kept because it is past a budget (then `budget` is set); else a rejection's words, if any. */
  reason?: string;
  rejectionReason?: string;
  budget?: BudgetUse;
  commit: string;
  changes: string[];
  impact: ImpactEntry[];
}

/** POST .../preview: what a change would do, without making it. */
export interface ChangePreviewResponse {
  flagKey: string;
  environment: EnvironmentName;
  changes: string[];
  impact: ImpactEntry[];
  requiresApproval: boolean;
  budget?: BudgetUse & { waits: boolean };
}

export interface AuditPage {
  entries: AuditEntry[];
  nextCursor: string | null;
}

export interface AuditQuery {
  projectId?: string;
  flagId?: string;
  /** Matched against the entries, so a flag deleted since is found too. */
  flagKey?: string;
  environment?: EnvironmentName;
  action?: string;
  limit?: number;
  cursor?: string;
}

/** A segment as GET/PUT /api/v1/projects/:id/segments/:key answer it. */
export interface SegmentResponse {
  key: string;
  name: string;
  description: string;
  userIds: string[];
  conditions: AttributeCondition[];
  version: number;
  usedBy: string[];
}
