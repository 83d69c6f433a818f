import { AUDIT_ACTIONS, type AuditAction, isEnvironmentName } from '@flagops/core';
import { MAX_LIMIT } from '../../audit/audit-query.js';
import { InvalidInputError } from '../../errors/kinds.js';
import { integerQuery, optionalQuery } from '../http/params.js';
import { route } from '../http/route.js';
import { type AuditRequest, readAudit } from './audit-service.js';

type Query = Readonly<Record<string, string | string[] | undefined>>;

/** Query parameters → a checked request; a bad filter is 400 naming the parameter, never an empty page. */
function auditRequest(query: Query): AuditRequest {
  const request: AuditRequest = { limit: integerQuery(query, 'limit', { min: 1, max: MAX_LIMIT, fallback: 50 }) };
  const projectId = optionalQuery(query, 'projectId');
  const flagId = optionalQuery(query, 'flagId');
  const environment = optionalQuery(query, 'environment');
  const action = optionalQuery(query, 'action');
  const cursor = optionalQuery(query, 'cursor');
  if (projectId !== undefined) request.projectId = projectId;
  if (flagId !== undefined) request.flagId = flagId;
  if (environment !== undefined) {
    if (!isEnvironmentName(environment)) throw new InvalidInputError('environment: must be dev, staging or prod', 'environment');
    request.environment = environment;
  }
  if (action !== undefined) {
    if (!(AUDIT_ACTIONS as readonly string[]).includes(action))
      throw new InvalidInputError(`action: must be one of ${AUDIT_ACTIONS.join(', ')}`, 'action');
    request.action = action as AuditAction;
  }
  if (cursor !== undefined) request.cursor = cursor;
  return request;
}

export const auditRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/audit',
    permission: 'audit.read',
    body: 'none',
    handle: async ({ ws, query }) => ({ body: await readAudit(ws, auditRequest(query)) }),
  }),
];
