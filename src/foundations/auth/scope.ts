import type { EnvironmentName } from '@flagops/core';

/**
 * What a credential is limited to. Keys name projects by id (`projects`), roles by slug (`editor@shop`); either
 * identifies a project, so a project is in scope when its id or its slug is listed. Absent lists mean no limit.
 */
export interface Scope {
  projectIds?: ReadonlySet<string>;
  projectSlugs?: ReadonlySet<string>;
  environments?: ReadonlySet<EnvironmentName>;
}

/** Whether the credential is limited to some projects (so organisation-wide things are not its to see or change). */
export function limitedToProjects(scope: Scope | undefined): boolean {
  return scope?.projectIds !== undefined || scope?.projectSlugs !== undefined;
}

/** Whether a project is visible to the credential: anything else is not found to it. */
export function projectInScope(scope: Scope | undefined, project: { id: string; slug: string }): boolean {
  if (!limitedToProjects(scope)) return true;
  return (scope?.projectIds?.has(project.id) ?? false) || (scope?.projectSlugs?.has(project.slug) ?? false);
}

export function environmentInScope(scope: Scope | undefined, environment: EnvironmentName): boolean {
  return scope?.environments === undefined || scope.environments.has(environment);
}

/** "projects shop, web and environments dev": the limits in words, for refusals. */
export function describeScope(scope: Scope | undefined): string {
  const parts: string[] = [];
  const projects = [...(scope?.projectSlugs ?? []), ...(scope?.projectIds ?? [])];
  if (projects.length > 0) parts.push(`project${projects.length === 1 ? '' : 's'} ${projects.join(', ')}`);
  if (scope?.environments) parts.push(`environment${scope.environments.size === 1 ? '' : 's'} ${[...scope.environments].join(', ')}`);
  return parts.length === 0 ? 'the whole organisation' : parts.join(' and ');
}
