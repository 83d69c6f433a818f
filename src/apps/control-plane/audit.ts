import { AUDIT_ACTIONS, type AuditAction, type EnvironmentName, isEnvironmentName } from '@flagops/core';
import { type AuditPage, type AuditQuery, MAX_LIMIT } from '../../features/audit/audit-query.js';
import { entryChanges } from '../../features/audit/entry-changes.js';
import { limitedToProjects } from '../../foundations/auth/scope.js';
import { InvalidInputError } from '../../foundations/errors/kinds.js';
import { flagById, projectById } from '../../foundations/repository/state-lookup.js';
import { proposalAuditEntries } from './proposals.js';
import { integerQuery, optionalQuery, route } from './route-table.js';
import type { Workspace } from './workspace.js';

type Query = Readonly<Record<string, string | string[] | undefined>>;

/** Query parameters → a checked request; a bad filter is 400 naming the parameter, never an empty page. */
function auditRequest(query: Query): AuditRequest {
  const request: AuditRequest = { limit: integerQuery(query, 'limit', { min: 1, max: MAX_LIMIT, fallback: 50 }) };
  const projectId = optionalQuery(query, 'projectId');
  const flagId = optionalQuery(query, 'flagId');
  const flagKey = optionalQuery(query, 'flagKey');
  const environment = optionalQuery(query, 'environment');
  const action = optionalQuery(query, 'action');
  const cursor = optionalQuery(query, 'cursor');
  const actor = optionalQuery(query, 'actor');
  const include = optionalQuery(query, 'include');
  if (include !== undefined) {
    if (include !== 'changes') throw new InvalidInputError('include: the only value is changes', 'include');
    request.includeChanges = true;
  }
  if (actor !== undefined) {
    if (actor.length > 200) throw new InvalidInputError('actor: at most 200 characters', 'actor');
    request.actor = actor;
  }
  if (projectId !== undefined) request.projectId = projectId;
  if (flagId !== undefined) request.flagId = flagId;
  if (flagKey !== undefined) {
    if (flagId !== undefined) throw new InvalidInputError('flagKey: give flagId or flagKey, not both', 'flagKey');
    if (flagKey.length === 0 || flagKey.length > 128) throw new InvalidInputError('flagKey: 1 to 128 characters', 'flagKey');
    request.flagKey = flagKey;
  }
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

export interface AuditRequest {
  projectId?: string;
  flagId?: string;
  /** A key, not an id: matched against the entries themselves, so a flag deleted since is found too. */
  flagKey?: string;
  environment?: EnvironmentName;
  action?: AuditAction;
  /** A name or key prefix: only that actor's entries. */
  actor?: string;
  /** Each entry also carries `changes`: what its commit changed there, in the words of `flagops diff`. */
  includeChanges?: boolean;
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
  // A credential limited to projects reads their entries only: the scoped state names the projects it sees.
  if (limitedToProjects(ws.principal.scope)) query.projectSlugs = new Set((await ws.readServed()).state.projects.keys());
  if (request.projectId !== undefined || request.flagId !== undefined) {
    const { state } = await ws.readServed();
    if (request.projectId !== undefined) query.projectSlug = projectById(state, request.projectId).project.slug;
    if (request.flagId !== undefined) {
      const { project, flag } = flagById(state, request.flagId);
      if (query.projectSlug !== undefined && query.projectSlug !== project.project.slug) return { entries: [], nextCursor: null };
      query.projectSlug = project.project.slug;
      query.flagKey = flag.meta.key;
    }
  }
  if (request.flagKey !== undefined) query.flagKey = request.flagKey;
  if (request.environment !== undefined) query.environment = request.environment;
  if (request.action !== undefined) query.action = request.action;
  if (request.actor !== undefined) query.actor = request.actor;
  if (request.cursor !== undefined) query.cursor = request.cursor;
  const index = await ws.deps.audit.get(ws.org);
  // Proposals opened and rejected live on their branches, not on main: merged in by time.
  const page = await index.query(query, await proposalAuditEntries(ws));
  if (!request.includeChanges) return page;
  const entries = await Promise.all(
    page.entries.map(async (entry) => {
      const changes = await entryChanges(ws.repo, entry);
      return changes === undefined ? entry : { ...entry, changes };
    }),
  );
  return { ...page, entries };
}
