import { ENVIRONMENTS, type EnvironmentName, type ProjectFile } from '@flagops/core';
import type { InvalidFile } from '../../repository/held-units.js';

export interface ProjectView {
  id: string;
  name: string;
  slug: string;
  environments: Array<{ id: string; name: EnvironmentName }>;
  /** Only while an invalid project.yaml or kills.yaml holds the whole project back at its last valid state. */
  invalidFiles?: InvalidFile[];
}

/**
 * An environment's id is `<projectId>:<env>`: environments are fixed and live inside their project, so the
 * id is derived, stable across servers, and needs no file of its own.
 */
export function environmentId(projectId: string, env: EnvironmentName): string {
  return `${projectId}:${env}`;
}

export function projectView(project: ProjectFile, invalidFiles: InvalidFile[] = []): ProjectView {
  const view: ProjectView = {
    id: project.id,
    name: project.name,
    slug: project.slug,
    environments: ENVIRONMENTS.map((env) => ({ id: environmentId(project.id, env), name: env })),
  };
  if (invalidFiles.length > 0) view.invalidFiles = invalidFiles;
  return view;
}
