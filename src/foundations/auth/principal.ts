import type { EnvironmentName } from '@flagops/core';
import type { KeyRecord } from '../state/index.js';
import type { KeyKind } from './key-format.js';
import type { RoleName } from './roles.js';
import type { Scope } from './scope.js';

export type { KeyRecord, Organisation } from '../state/index.js';

/** Who is calling: a key of one of the three kinds, or a dashboard session (docs/credentials.md). */
export type PrincipalKind = KeyKind | 'session';

export interface Principal {
  org: string;
  kind: PrincipalKind;
  /** The key's id, or the session's id for a session. */
  keyId: string;
  /** Non-secret start of the key; what the audit trail shows. */
  prefix: string;
  name: string;
  /** SDK keys only: the one project and environment the key may evaluate. */
  projectId?: string;
  environment?: EnvironmentName;
  /** Admin and agent keys limited to projects or environments, and sessions whose role is limited to projects. */
  scope?: Scope;
  /** Keys that expire: when (ISO-8601). */
  expiresAt?: string;
  /** Sessions only: what the person may do (absent: admin, what sessions always were). */
  role?: RoleName;
  /** Sessions only: the role as written (`editor@shop`), for the audit trail. */
  roleText?: string;
}

/** A key as listed to its organisation's admins: everything but the hash. */
export type KeyView = Omit<KeyRecord, 'hash'>;

/** The answer to a key creation: the only time the key itself is shown. */
export interface CreatedKey extends KeyView {
  key: string;
}
