import type { EnvironmentName } from '@flagops/core';
import type { KeyRecord } from '../state/index.js';
import type { KeyKind } from './key-format.js';

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
}

/** A key as listed to its organisation's admins: everything but the hash. */
export type KeyView = Omit<KeyRecord, 'hash'>;

/** The answer to a key creation: the only time the key itself is shown. */
export interface CreatedKey extends KeyView {
  key: string;
}
