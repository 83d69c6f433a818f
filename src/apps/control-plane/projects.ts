import { ENVIRONMENTS, type ProjectFile } from '@flagops/core';
import { ConflictError, PlanLimitError } from '../../foundations/errors/kinds.js';
import { invalidFile } from '../../foundations/repository/held-units.js';
import { deriveProjectId } from '../../foundations/repository/ids.js';
import { jsonEqual } from '../../foundations/repository/json-equal.js';
import { layout } from '../../foundations/repository/layout.js';
import { normalizeBudgets, normalizeRequireApproval } from '../../foundations/repository/normalize.js';
import { serializeRepositoryFile } from '../../foundations/repository/serialize-file.js';
import { projectById } from '../../foundations/repository/state-lookup.js';
import { heldBackBy } from '../../foundations/storage/index.js';
import type { ProjectCreateBody, ProjectPatchBody } from '../../foundations/validation/api-bodies.js';
import { refuseHeldBack } from './flag-write.js';
import { route } from './route-table.js';
import { type ProjectView, projectView } from './views.js';
import type { Workspace } from './workspace.js';

export const projectRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/projects',
    permission: 'read',
    body: 'none',
    handle: async ({ ws }) => ({ body: { projects: await listProjects(ws) } }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/projects/:id',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, params }) => ({ body: await getProject(ws, params.id) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/projects/:id',
    permission: 'project.update',
    body: 'project-patch',
    handle: async ({ ws, params, body }) => ({ body: await patchProject(ws, params.id, body) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/projects',
    permission: 'project.create',
    body: 'project-create',
    handle: async ({ ws, body }) => ({ status: 201, body: await createProject(ws, body) }),
  }),
];

export async function listProjects(ws: Workspace): Promise<ProjectView[]> {
  const served = await ws.readServed();
  return [...served.state.projects.values()].map((p) => projectView(p.project, heldBackBy(served, p.project.slug).map(invalidFile)));
}

export async function getProject(ws: Workspace, id: string): Promise<ProjectView> {
  const served = await ws.readServed();
  const project = projectById(served.state, id);
  return projectView(project.project, heldBackBy(served, project.project.slug).map(invalidFile));
}

/**
 * PATCH: the sent fields replace the current ones in project.yaml (one commit; none when nothing changes).
 * `requireApproval: null` or `{}` removes the policy; so does `budgets: null` or `{}` the budgets. Refused while the project is held back.
 */
export async function patchProject(ws: Workspace, id: string, body: ProjectPatchBody): Promise<ProjectView> {
  const outcome = await ws.repo.update(async (_committed, head) => {
    const served = await ws.readServed(head);
    const current = projectById(served.state, id).project;
    const next: ProjectFile = { id: current.id, name: body.name ?? current.name, slug: current.slug };
    const policy = normalizeRequireApproval('requireApproval' in body ? body.requireApproval : current.requireApproval);
    if (policy) next.requireApproval = policy;
    const budgets = normalizeBudgets('budgets' in body ? body.budgets : current.budgets);
    if (budgets) next.budgets = budgets;
    const changed = !jsonEqual(next as never, current as never);
    if (changed) refuseHeldBack(served, current.slug);
    const fields = (['name', 'requireApproval', 'budgets'] as const).filter(
      (f) => !jsonEqual((next[f] ?? null) as never, (current[f] ?? null) as never),
    );
    return {
      changes: changed
        ? [{ path: layout.projectFile(current.slug), content: serializeRepositoryFile({ kind: 'project', value: next }) }]
        : [],
      meta: {
        action: 'project_update',
        summary: `update project ${current.slug}: ${fields.join(', ')}`,
        actor: ws.actor,
        project: current.slug,
      },
      result: null,
    };
  });
  if (outcome.committed) await ws.served();
  return getProject(ws, id);
}

/**
 * One commit: project.yaml and an empty kills.yaml per environment. The id is derived from the slug the way
 * the repository derives it for a hand-written project.yaml without one, so both kinds of project look alike.
 */
export async function createProject(ws: Workspace, body: ProjectCreateBody): Promise<ProjectView> {
  const limit = ws.deps.planProjectLimit;
  const { slug, name } = body;
  const { result } = await ws.repo.update(async (_committed, head) => {
    const { state } = await ws.readServed(head);
    // A folder left out of the state for its own issues still owns the slug.
    const taken = state.projects.has(slug) || (head !== null && (await ws.repo.treeOid(head, layout.projectDir(slug))) !== null);
    if (taken) throw new ConflictError(`a project with slug ${JSON.stringify(slug)} already exists`);
    if (state.projects.size >= limit) throw new PlanLimitError(limit);
    const project: ProjectFile = { id: deriveProjectId(slug), name, slug };
    const emptyKills = serializeRepositoryFile({ kind: 'kills', value: { kills: {} } });
    return {
      changes: [
        { path: layout.projectFile(slug), content: serializeRepositoryFile({ kind: 'project', value: project }) },
        ...ENVIRONMENTS.map((env) => ({ path: layout.killsFile(slug, env), content: emptyKills })),
      ],
      meta: { action: 'project_create', summary: `create project ${slug}`, actor: ws.actor, project: slug },
      result: project,
    };
  });
  await ws.served();
  return projectView(result);
}
