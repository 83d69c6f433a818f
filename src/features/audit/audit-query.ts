import { AUDIT_ACTIONS, type AuditAction, type AuditEntry, type EnvironmentName, isEnvironmentName } from '@flagops/core';
import { InvalidInputError } from '../../foundations/errors/kinds.js';

/** A read of the audit trail (`GET /api/v1/audit`, docs/api.md); the route maps projectId/flagId to slug/key. */
export interface AuditQuery {
  projectSlug?: string;
  /** Only entries of these projects (a credential limited to projects); organisation-wide entries are left out. */
  projectSlugs?: ReadonlySet<string>;
  flagKey?: string;
  environment?: EnvironmentName;
  action?: AuditAction;
  /** Who acted: a person's or key's name, or a key prefix (exact, ignoring case). */
  actor?: string;
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
    (query.projectSlugs === undefined || (entry.projectSlug !== null && query.projectSlugs.has(entry.projectSlug))) &&
    (query.flagKey === undefined || entry.flagKey === query.flagKey) &&
    (query.environment === undefined || entry.environment === query.environment) &&
    (query.action === undefined || entry.action === query.action) &&
    (query.actor === undefined || actorMatches(entry.actor, query.actor))
  );
}

function actorMatches(actor: AuditEntry['actor'], wanted: string): boolean {
  const needle = wanted.toLowerCase();
  return actor.name?.toLowerCase() === needle || actor.keyPrefix?.toLowerCase() === needle;
}

/**
 * A cursor names the last entry a page returned: its commit and its place among that commit's entries.
 * Naming the commit rather than a position keeps a cursor valid when new commits land (they come before
 * it) and when the index is rebuilt after a force push that kept the commit. Base64url keeps it opaque.
 */
export interface CursorPosition {
  commit: string;
  offset: number;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const DECODED = /^([0-9a-f]{40}|[0-9a-f]{64}):(\d{1,6})$/;

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(`${position.commit}:${position.offset}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): CursorPosition {
  const m = typeof cursor === 'string' && BASE64URL.test(cursor) ? DECODED.exec(Buffer.from(cursor, 'base64url').toString('utf8')) : null;
  const position = m ? { commit: m[1], offset: Number(m[2]) } : null;
  // Base64 decoding forgives stray trailing characters; a cursor must be exactly what was given out.
  if (!position || encodeCursor(position) !== cursor) throw invalidCursor();
  return position;
}

export function invalidCursor(why = 'is not one this audit trail gave out'): InvalidInputError {
  return new InvalidInputError(`cursor ${why}; start again without a cursor`, 'cursor');
}
