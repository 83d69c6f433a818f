import type { AuditAction, EnvironmentName } from '@flagops/core';
import type { AuditPage, AuditQuery } from '../../audit/audit-query.js';
import type { Workspace } from '../http/workspace.js';
import { flagById, projectById } from '../state-lookup.js';

export interface AuditRequest {
  projectId?: string;
  flagId?: string;
  environment?: EnvironmentName;
  action?: AuditAction;
  limit: number;
  cursor?: string;
}

/**
 * Audit entries name projects and flags by slug and key (they are read from commits), so ids are mapped
 * through the current state. An id the organisation does not have is 404 like everywhere else; a flag id
 * implies its project, and one of another project than `projectId` simply matches nothing.
 */
export async function readAudit(ws: Workspace, request: AuditRequest): Promise<AuditPage> {
  const query: AuditQuery = { limit: request.limit };
  if (request.projectId !== undefined || request.flagId !== undefined) {
    const { state } = await ws.repo.readServed();
    if (request.projectId !== undefined) query.projectSlug = projectById(state, request.projectId).project.slug;
    if (request.flagId !== undefined) {
      const { project, flag } = flagById(state, request.flagId);
      if (query.projectSlug !== undefined && query.projectSlug !== project.project.slug) return { entries: [], nextCursor: null };
      query.projectSlug = project.project.slug;
      query.flagKey = flag.meta.key;
    }
  }
  if (request.environment !== undefined) query.environment = request.environment;
  if (request.action !== undefined) query.action = request.action;
  if (request.cursor !== undefined) query.cursor = request.cursor;
  const index = await ws.deps.audit.get(ws.org);
  return index.query(query);
}
