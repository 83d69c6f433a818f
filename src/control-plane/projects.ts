import { ENVIRONMENTS, type ProjectFile } from '@flagops/core';
import { ConflictError, PlanLimitError } from '../errors/kinds.js';
import { invalidFile } from '../repository/held-units.js';
import { deriveProjectId } from '../repository/ids.js';
import { layout } from '../repository/layout.js';
import { serializeRepositoryFile } from '../repository/serialize-file.js';
import { heldBackBy } from '../storage/index.js';
import type { ProjectCreateBody } from '../validation/api-bodies.js';
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
    method: 'POST',
    path: '/api/v1/projects',
    permission: 'project.create',
    body: 'project-create',
    handle: async ({ ws, body }) => ({ status: 201, body: await createProject(ws, body) }),
  }),
];

export async function listProjects(ws: Workspace): Promise<ProjectView[]> {
  const served = await ws.repo.readServed();
  return [...served.state.projects.values()].map((p) => projectView(p.project, heldBackBy(served, p.project.slug).map(invalidFile)));
}

/**
 * One commit: project.yaml and an empty kills.yaml per environment. The id is derived from the slug the way
 * the repository derives it for a hand-written project.yaml without one, so both kinds of project look alike.
 */
export async function createProject(ws: Workspace, body: ProjectCreateBody): Promise<ProjectView> {
  const limit = ws.deps.planProjectLimit;
  const { slug, name } = body;
  const { result } = await ws.repo.update(async (_committed, head) => {
    const { state } = await ws.repo.readServed(head);
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
