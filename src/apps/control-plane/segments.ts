import type { AttributeCondition, ProjectState, SegmentFile } from '@flagops/core';
import { type Proposal, requiresApprovalAnywhere } from '../../features/proposals/proposal-reader.js';
import { ConflictError, InvalidInputError, NotFoundError, VersionConflictError } from '../../foundations/errors/kinds.js';
import { jsonEqual } from '../../foundations/repository/json-equal.js';
import { layout } from '../../foundations/repository/layout.js';
import { segmentUsage } from '../../foundations/repository/project-checks.js';
import { serializeRepositoryFile } from '../../foundations/repository/serialize-file.js';
import { projectById } from '../../foundations/repository/state-lookup.js';
import type { Change, ServedState } from '../../foundations/storage/index.js';
import type { SegmentPutBody } from '../../foundations/validation/api-bodies.js';
import { validateDocument } from '../../foundations/validation/validate-document.js';
import { refuseHeldBack } from './flag-write.js';
import { openProposal } from './proposals.js';
import { route } from './route-table.js';
import type { Workspace } from './workspace.js';

export const segmentRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/projects/:id/segments',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, params }) => ({ body: { segments: await listSegments(ws, params.id) } }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/projects/:id/segments/:key',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, params }) => ({ body: await getSegment(ws, params.id, params.key) }),
  }),
  route({
    method: 'PUT',
    path: '/api/v1/projects/:id/segments/:key',
    permission: 'segment.update',
    body: 'segment-put',
    handle: async ({ ws, params, body }) => {
      const outcome = await putSegment(ws, params.id, params.key, body);
      if ('proposal' in outcome) return { status: 202, body: outcome };
      return { status: outcome.created ? 201 : 200, body: outcome.segment };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/projects/:id/segments/:key',
    permission: 'segment.update',
    body: 'none',
    handle: async ({ ws, params }) => {
      const outcome = await deleteSegment(ws, params.id, params.key);
      return 'proposal' in outcome ? { status: 202, body: outcome } : { body: outcome };
    },
  }),
];

/** A segment as the API answers it: every field spelled out, and the flags whose configs name it. */
export interface SegmentView {
  key: string;
  name: string;
  description: string;
  userIds: string[];
  conditions: AttributeCondition[];
  version: number;
  usedBy: string[];
}

function usedBy(project: ProjectState, key: string): string[] {
  return [...new Set(segmentUsage(project, key).map((use) => use.flag))];
}

export function segmentView(project: ProjectState, segment: SegmentFile): SegmentView {
  return {
    key: segment.key,
    name: segment.name ?? '',
    description: segment.description ?? '',
    userIds: segment.userIds,
    conditions: segment.conditions,
    version: segment.version,
    usedBy: usedBy(project, segment.key),
  };
}

function segmentOf(project: ProjectState, key: string): SegmentFile {
  const segment = project.segments?.get(key);
  if (!segment) throw new NotFoundError(`segment ${JSON.stringify(key)} in project ${JSON.stringify(project.project.slug)}`);
  return segment;
}

/** The key in the path, checked as the segment file's schema checks it. */
function checkedKey(key: string): string {
  const issue = validateDocument('segment', { key }).find((i) => i.path === '/key');
  if (issue) throw new InvalidInputError(`key: ${issue.message}`, 'key');
  return key;
}

export async function listSegments(ws: Workspace, projectId: string): Promise<SegmentView[]> {
  const project = projectById((await ws.readServed()).state, projectId);
  return [...(project.segments?.values() ?? [])].map((s) => segmentView(project, s));
}

export async function getSegment(ws: Workspace, projectId: string, key: string): Promise<SegmentView> {
  const project = projectById((await ws.readServed()).state, projectId);
  return segmentView(project, segmentOf(project, key));
}

/** What a segment change writes: the new file (or null to delete it), one commit, audited with its key. */
interface SegmentEdit {
  file: SegmentFile | null;
  summary: string;
}

type SegmentEditor = (project: ProjectState, current: SegmentFile | undefined) => SegmentEdit | null;

/** The commit a segment change makes on `served`: on main, or on a proposal branch. */
function segmentChange(
  ws: Workspace,
  served: ServedState,
  projectId: string,
  key: string,
  action: 'segment_update' | 'segment_delete',
  edit: SegmentEditor,
): Change<null> {
  const project = projectById(served.state, projectId);
  const planned = edit(project, project.segments?.get(key));
  const slug = project.project.slug;
  if (planned) refuseHeldBack(served, slug);
  const path = layout.segmentFile(slug, key);
  return {
    changes: planned
      ? [{ path, content: planned.file === null ? null : serializeRepositoryFile({ kind: 'segment', value: planned.file }) }]
      : [],
    meta: { action, summary: planned?.summary ?? action, actor: ws.actor, project: slug, segment: key },
    result: null,
  };
}

/**
 * Every segment write goes through here: one commit on main, refused while the project is held back. A
 * segment acts in every environment, so where the project requires approval of the caller's actor type in
 * any environment, the change becomes a proposal instead (null: it would change nothing).
 */
async function writeSegment(
  ws: Workspace,
  projectId: string,
  key: string,
  action: 'segment_update' | 'segment_delete',
  edit: SegmentEditor,
): Promise<{ project: ProjectState; segment: SegmentFile | undefined; committed: boolean } | { proposal: Proposal | null }> {
  const current = projectById((await ws.readServed()).state, projectId);
  if (requiresApprovalAnywhere(current.project, ws.actor.type)) {
    const proposal = await openProposal(ws, (served) => segmentChange(ws, served, projectId, key, action, edit));
    if (proposal) return { proposal };
  }
  const outcome = await ws.repo.update(async (_committed, head) =>
    segmentChange(ws, await ws.readServed(head), projectId, key, action, edit),
  );
  if (outcome.committed) await ws.served();
  const project = projectById((await ws.readServed(outcome.commit)).state, projectId);
  return { project, segment: project.segments?.get(key), committed: outcome.committed };
}

/** PUT: the body is the whole segment (fields left out are empty); version + 1; no commit when nothing changes. */
export async function putSegment(
  ws: Workspace,
  projectId: string,
  key: string,
  body: SegmentPutBody,
): Promise<{ created: boolean; segment: SegmentView } | { proposal: Proposal }> {
  checkedKey(key);
  let created = false;
  const written = await writeSegment(ws, projectId, key, 'segment_update', (_project, current) => {
    const version = current?.version ?? 0;
    if (body.expectedVersion !== undefined && body.expectedVersion !== version)
      throw new VersionConflictError(version, body.expectedVersion);
    created = current === undefined;
    const next: SegmentFile = { key, version: version + 1, userIds: [...new Set(body.userIds ?? [])], conditions: body.conditions ?? [] };
    if (body.name !== undefined) next.name = body.name;
    if (body.description !== undefined) next.description = body.description;
    if (current && jsonEqual({ ...current, version: 0 } as never, { ...next, version: 0 } as never)) return null;
    return { file: next, summary: `${created ? 'create' : 'update'} segment ${key}` };
  });
  if ('proposal' in written) {
    if (written.proposal) return { proposal: written.proposal };
    const project = projectById((await ws.readServed()).state, projectId);
    return { created: false, segment: segmentView(project, segmentOf(project, key)) };
  }
  return { created, segment: segmentView(written.project, written.segment!) };
}

/** DELETE: refused with 409 while any config names the segment, since the flags using it would break. */
export async function deleteSegment(ws: Workspace, projectId: string, key: string): Promise<SegmentView | { proposal: Proposal }> {
  let deleted: SegmentView | undefined;
  const written = await writeSegment(ws, projectId, key, 'segment_delete', (project) => {
    const segment = segmentOf(project, key);
    const uses = segmentUsage(project, key);
    if (uses.length > 0) {
      const where = uses.map((use) => `${use.flag} (${use.environment})`).join(', ');
      throw new ConflictError(`segment ${key} is used by ${where}; remove it from their rules first`);
    }
    deleted = segmentView(project, segment);
    return { file: null, summary: `delete segment ${key}` };
  });
  if ('proposal' in written && written.proposal) return { proposal: written.proposal };
  return deleted!;
}
