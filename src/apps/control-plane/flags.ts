import { canonicalJson, ENVIRONMENTS, type FlagFile } from '@flagops/core';
import { type Proposal, requiresApprovalAnywhere } from '../../features/proposals/proposal-reader.js';
import { ConflictError, type ForbiddenError } from '../../foundations/errors/kinds.js';
import { deriveFlagId } from '../../foundations/repository/ids.js';
import { layout } from '../../foundations/repository/layout.js';
import { initialConfig, initialDefaultValue } from '../../foundations/repository/new-flag.js';
import { normalizeLifecycle } from '../../foundations/repository/normalize.js';
import { serializeRepositoryFile } from '../../foundations/repository/serialize-file.js';
import { type FlagRef, flagById, flagByKey, projectById } from '../../foundations/repository/state-lookup.js';
import type { FlagCreateBody, FlagPatchBody } from '../../foundations/validation/api-bodies.js';
import { patchLifecycle } from './flag-lifecycle.js';
import { type FlagEdit, flagChange, refuseHeldBack, writeFlag } from './flag-write.js';
import { openProposal } from './proposals.js';
import { optionalQuery, requiredQuery, route } from './route-table.js';
import { type FlagView, servedFlagView } from './views.js';
import type { Workspace } from './workspace.js';

// /flags/lookup comes before /flags/:id, which would otherwise take "lookup" for an id.
export const flagRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/projects/:id/flags',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, params, query }) => ({ body: { flags: await listFlags(ws, params.id, optionalQuery(query, 'key')) } }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/projects/:id/flags',
    permission: 'flag.create',
    body: 'flag-create',
    handle: async ({ ws, params, body }) => ({ status: 201, body: await createFlag(ws, params.id, body) }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/flags/lookup',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, query }) => {
      const projectSlug = requiredQuery(query, 'projectSlug');
      const key = requiredQuery(query, 'key');
      return { body: await lookupFlag(ws, projectSlug, key) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/flags/:id',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, params }) => ({ body: await getFlag(ws, params.id) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/flags/:id',
    permission: 'flag.update',
    body: 'flag-patch',
    handle: async ({ ws, params, body }) => ({ body: await patchFlag(ws, params.id, body) }),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/flags/:id',
    permission: 'flag.archive',
    body: 'none',
    // An agent key or editor may archive only as a proposal, where its project requires approval of its actor type.
    proposable: true,
    handle: async ({ ws, params, refusal }) => {
      const outcome = await archiveOrPropose(ws, params.id, refusal);
      return 'proposal' in outcome ? { status: 202, body: outcome } : { body: outcome };
    },
  }),
];

/** Every flag of a project as served, archived ones too, or the one with `key` (none: an empty list). */
export async function listFlags(ws: Workspace, projectId: string, key?: string): Promise<FlagView[]> {
  const served = await ws.readServed();
  const project = projectById(served.state, projectId);
  const flags = key === undefined ? [...project.flags.values()] : [project.flags.get(key)].filter((f) => f !== undefined);
  return flags.map((flag) => servedFlagView(served, { project, flag }));
}

export async function getFlag(ws: Workspace, id: string): Promise<FlagView> {
  const served = await ws.readServed();
  return servedFlagView(served, flagById(served.state, id));
}

export async function lookupFlag(ws: Workspace, projectSlug: string, key: string): Promise<FlagView> {
  const served = await ws.readServed();
  return servedFlagView(served, flagByKey(served.state, projectSlug, key));
}

/** One commit: the flag file and its config in dev, staging and prod, all off at 0%. */
export async function createFlag(ws: Workspace, projectId: string, body: FlagCreateBody): Promise<FlagView> {
  const outcome = await ws.repo.update(async (_committed, head) => {
    const served = await ws.readServed(head);
    const project = projectById(served.state, projectId);
    const slug = project.project.slug;
    // A new flag in a project that an invalid file holds back would not be served.
    refuseHeldBack(served, slug);
    const lower = body.key.toLowerCase();
    // Keys differing only in case would collide as file names on case-insensitive file systems.
    const taken =
      [...project.flags.keys()].some((k) => k.toLowerCase() === lower) ||
      (head !== null && (await ws.repo.treeOid(head, layout.flagFile(slug, body.key))) !== null);
    if (taken) throw new ConflictError(`a flag with key ${JSON.stringify(body.key)} already exists in project ${JSON.stringify(slug)}`);
    const kind = body.kind ?? 'boolean';
    const meta: FlagFile = { id: deriveFlagId(slug, body.key), key: body.key, kind, archivedAt: null };
    if (body.name !== undefined) meta.name = body.name;
    if (body.description !== undefined) meta.description = body.description;
    meta.defaultValue = initialDefaultValue(kind, body.defaultValue);
    if (body.lifecycle !== undefined) meta.lifecycle = normalizeLifecycle(body.lifecycle);
    const config = serializeRepositoryFile({ kind: 'config', value: initialConfig(kind, meta.defaultValue) });
    return {
      changes: [
        { path: layout.flagFile(slug, body.key), content: serializeRepositoryFile({ kind: 'flag', value: meta }) },
        ...ENVIRONMENTS.map((env) => ({ path: layout.configFile(slug, env, body.key), content: config })),
      ],
      meta: { action: 'flag_create', summary: `create flag ${body.key} (${kind})`, actor: ws.actor, project: slug, flag: body.key },
      result: meta.id,
    };
  });
  await ws.served();
  const served = await ws.readServed(outcome.commit);
  return servedFlagView(served, flagById(served.state, outcome.result));
}

/** Metadata only (name, description, lifecycle); fields left out keep their value, `lifecycle: null` removes it. */
export async function patchFlag(ws: Workspace, id: string, body: FlagPatchBody): Promise<FlagView> {
  const { view } = await writeFlag(ws, id, 'flag_update', ({ project, flag }) => {
    const next: FlagFile = { ...flag.meta };
    if (body.name !== undefined) next.name = body.name;
    if (body.description !== undefined) next.description = body.description;
    if (body.lifecycle !== undefined) {
      const lifecycle = patchLifecycle(flag.meta.lifecycle, body.lifecycle);
      if (lifecycle === undefined) delete next.lifecycle;
      else next.lifecycle = lifecycle;
    }
    const changed = (['name', 'description', 'lifecycle'] as const).filter(
      (f) => canonicalJson(next[f] ?? null) !== canonicalJson(flag.meta[f] ?? null),
    );
    if (changed.length === 0) return null;
    return {
      changes: [{ path: layout.flagFile(project.project.slug, next.key), content: serializeRepositoryFile({ kind: 'flag', value: next }) }],
      summary: `update ${next.key}: ${changed.join(', ')}`,
    };
  });
  return view;
}

/** Soft archive: archivedAt is set once; archiving an archived flag changes nothing. */
export async function archiveFlag(ws: Workspace, id: string): Promise<FlagView> {
  const { view } = await writeFlag(ws, id, 'flag_archive', archiveEdit);
  return view;
}

function archiveEdit({ project, flag }: FlagRef, now: Date): FlagEdit | null {
  if (flag.meta.archivedAt !== null) return null;
  const next: FlagFile = { ...flag.meta, archivedAt: now.toISOString() };
  return {
    changes: [{ path: layout.flagFile(project.project.slug, next.key), content: serializeRepositoryFile({ kind: 'flag', value: next }) }],
    summary: `archive ${next.key}`,
  };
}

/**
 * An archive acts in every environment, so where the project requires approval of the caller's actor type in
 * any environment, it becomes a proposal (as a segment change does); otherwise it is made at once, or refused
 * with `refusal` (an agent key: 403). An archive that would change nothing (archived already) is answered
 * with the flag.
 */
export async function archiveOrPropose(ws: Workspace, id: string, refusal?: ForbiddenError): Promise<FlagView | { proposal: Proposal }> {
  const { project, flag } = flagById((await ws.readServed()).state, id);
  const proposes = requiresApprovalAnywhere(project.project, ws.actor.type);
  if (proposes && flag.meta.archivedAt === null) {
    const proposal = await openProposal(ws, (served) => flagChange(ws, served, id, 'flag_archive', archiveEdit));
    if (proposal) return { proposal };
  }
  // One who may archive only by a proposal, of a flag archived already (the proposal would change nothing):
  // answered with the flag, as anyone who may archive is, and nothing is written.
  if (refusal && proposes) return getFlag(ws, id);
  if (refusal) throw refusal;
  return archiveFlag(ws, id);
}
