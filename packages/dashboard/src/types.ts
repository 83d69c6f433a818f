/** The shapes the page reads from the control plane: the server's own types, imported for their types only. */

import type { EnvironmentName } from '@flagops/core';

export type { AuditEntry, Condition, EnvironmentName, FlagKind, FlagLifecycle, FlagType, JsonValue, Rule } from '@flagops/core';
export type { SegmentView } from '../../../src/apps/control-plane/segments.js';
export type { EnvironmentConfigView, FlagView } from '../../../src/apps/control-plane/views.js';
export type { DraftIssue, DraftResult } from '../../../src/apps/dashboard/config-draft.js';
export type { CreatedKey, KeyView } from '../../../src/foundations/auth/principal.js';
export type { InvalidFile } from '../../../src/foundations/repository/held-units.js';

export interface Project {
  id: string;
  name: string;
  slug: string;
}

export interface SessionInfo {
  user: { id: string; username: string; name: string; org: string };
  /** How the person signed in: a password, or single sign-on (OpenID Connect). */
  signedInWith?: 'password' | 'oidc';
  csrfToken: string;
  expiresAt: string;
  idleTimeoutSeconds: number;
  /** The person's role (`editor@shop`), and what it may do: the page offers only those controls. */
  role?: string;
  permissions?: string[];
  promoteInto?: EnvironmentName[];
}

/** GET /dashboard/api/sign-in-options: the password form always, single sign-on when it is set up. */
export interface SignInOptions {
  password: boolean;
  sso: { label: string; loginUrl: string; available: boolean } | null;
}

export interface StatsPoint {
  hour: string;
  variations: Record<string, number>;
  /** Exposure events (POST /v1/events) per variation; absent from servers before events. */
  exposures?: Record<string, number>;
}

export type StatsPeriod = '24h' | '7d' | '30d';
