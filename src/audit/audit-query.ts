import { AUDIT_ACTIONS, type AuditAction, type AuditEntry, type EnvironmentName, isEnvironmentName } from '@flagops/core';
import { InvalidInputError } from '../errors/index.js';

/** A read of the audit trail (contract §3 "Audit API"); the route maps projectId/flagId to slug/key. */
export interface AuditQuery {
  projectSlug?: string;
  flagKey?: string;
  environment?: EnvironmentName;
  action?: AuditAction;
  /** 1 to 500. */
  limit: number;
  /** `nextCursor` of the previous page; opaque. */
  cursor?: string;
}

/** Newest first; `nextCursor` is null on the last page. */
export interface AuditPage {
  entries: AuditEntry[];
  nextCursor: string | null;
}

export const MAX_LIMIT = 500;

/** Refuses what the route should already have refused, so a direct caller gets the same error. */
export function checkQuery(query: AuditQuery): void {
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_LIMIT) {
    throw new InvalidInputError(`limit must be an integer from 1 to ${MAX_LIMIT}`, 'limit');
  }
  if (query.environment !== undefined && !isEnvironmentName(query.environment)) {
    throw new InvalidInputError('environment must be one of dev, staging, prod', 'environment');
  }
  if (query.action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(query.action)) {
    throw new InvalidInputError(`action must be one of ${AUDIT_ACTIONS.join(', ')}`, 'action');
  }
}

/** Whether an entry passes every filter the query sets. */
export function matchesQuery(entry: AuditEntry, query: AuditQuery): boolean {
  return (
    (query.projectSlug === undefined || entry.projectSlug === query.projectSlug) &&
    (query.flagKey === undefined || entry.flagKey === query.flagKey) &&
    (query.environment === undefined || entry.environment === query.environment) &&
    (query.action === undefined || entry.action === query.action)
  );
}
