import { ENVIRONMENTS, type EnvironmentName } from '../../model/environments.js';
import type { ProjectFile } from '../../model/types.js';

export interface ProjectView {
  id: string;
  name: string;
  slug: string;
  environments: Array<{ id: string; name: EnvironmentName }>;
}

/**
 * An environment's id is `<projectId>:<env>`: environments are fixed and live inside their project, so the
 * id is derived, stable across servers, and needs no file of its own.
 */
export function environmentId(projectId: string, env: EnvironmentName): string {
  return `${projectId}:${env}`;
}

export function projectView(project: ProjectFile): ProjectView {
  return {
    id: project.id,
    name: project.name,
    slug: project.slug,
    environments: ENVIRONMENTS.map((env) => ({ id: environmentId(project.id, env), name: env })),
  };
}
