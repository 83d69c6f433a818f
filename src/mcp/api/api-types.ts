import type { AuditEntry, EnvironmentName, FlagKind, JsonValue, Rule } from '../../model/index.js';

/** The wire shapes the MCP server reads from the control plane (service-spec §4, contract §3). */

export interface ProjectResponse {
  id: string;
  name: string;
  slug: string;
  environments: Array<{ id: string; name: EnvironmentName }>;
}

/** One environment of a flag response: the config plus the kill state (contract §3). */
export interface EnvironmentState {
  enabled: boolean;
  rolloutPct: number;
  valueOn: JsonValue;
  valueOff: JsonValue;
  version: number;
  rules: Rule[];
  killed: boolean;
  killedAt?: string;
  killedBy?: string;
  killReason?: string;
}

export interface FlagResponse {
  id: string;
  key: string;
  name?: string;
  description?: string;
  kind: FlagKind;
  defaultValue?: JsonValue;
  archivedAt: string | null;
  environments: Record<EnvironmentName, EnvironmentState>;
  /** Only on a kill's answer: the flag was killed already and nothing changed. */
  alreadyKilled?: boolean;
}

export interface AuditPage {
  entries: AuditEntry[];
  nextCursor: string | null;
}

export interface AuditQuery {
  projectId?: string;
  flagId?: string;
  environment?: EnvironmentName;
  action?: string;
  limit?: number;
  cursor?: string;
}

/** PUT .../config: every field optional; absent fields keep their value. */
export interface ConfigUpdate {
  enabled?: boolean;
  rolloutPct?: number;
  rules?: unknown[];
  valueOn?: unknown;
  valueOff?: unknown;
  clearKill?: boolean;
  expectedVersion?: number;
}

export interface FlagCreate {
  key: string;
  name?: string;
  description?: string;
  kind?: FlagKind;
  defaultValue?: unknown;
}
