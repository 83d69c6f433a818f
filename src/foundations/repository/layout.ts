import { type EnvironmentName, isEnvironmentName } from '@flagops/core';

/** Paths of the flags repository (docs/flags-repository.md). The only place that spells them. */
export const layout = {
  projectsDir: 'projects',
  projectDir: (slug: string) => `projects/${slug}`,
  projectFile: (slug: string) => `projects/${slug}/project.yaml`,
  flagsDir: (slug: string) => `projects/${slug}/flags`,
  flagFile: (slug: string, key: string) => `projects/${slug}/flags/${key}.yaml`,
  environmentDir: (slug: string, env: EnvironmentName) => `projects/${slug}/environments/${env}`,
  configFile: (slug: string, env: EnvironmentName, key: string) => `projects/${slug}/environments/${env}/${key}.yaml`,
  killsFile: (slug: string, env: EnvironmentName) => `projects/${slug}/environments/${env}/kills.yaml`,
  segmentsDir: (slug: string) => `projects/${slug}/segments`,
  segmentFile: (slug: string, key: string) => `projects/${slug}/segments/${key}.yaml`,
} as const;

/** The file name of an environment's kill overrides; no flag may be called `kills`. */
export const KILLS_FILE_NAME = 'kills.yaml';

export type RepositoryPath =
  | { kind: 'project'; project: string }
  | { kind: 'flag'; project: string; flag: string }
  | { kind: 'config'; project: string; environment: EnvironmentName; flag: string }
  | { kind: 'kills'; project: string; environment: EnvironmentName }
  | { kind: 'segment'; project: string; segment: string }
  | { kind: 'other' };

/** What a path in the repository holds, from its position in the layout alone. */
export function classifyPath(path: string): RepositoryPath {
  const parts = path.split('/');
  if (parts[0] !== 'projects' || parts.length < 3) return { kind: 'other' };
  const project = parts[1];
  if (parts.length === 3 && parts[2] === 'project.yaml') return { kind: 'project', project };
  if (parts.length === 4 && parts[2] === 'flags' && parts[3].endsWith('.yaml')) {
    return { kind: 'flag', project, flag: parts[3].slice(0, -'.yaml'.length) };
  }
  if (parts.length === 4 && parts[2] === 'segments' && parts[3].endsWith('.yaml')) {
    return { kind: 'segment', project, segment: parts[3].slice(0, -'.yaml'.length) };
  }
  if (parts.length === 5 && parts[2] === 'environments' && isEnvironmentName(parts[3]) && parts[4].endsWith('.yaml')) {
    if (parts[4] === KILLS_FILE_NAME) return { kind: 'kills', project, environment: parts[3] };
    return { kind: 'config', project, environment: parts[3], flag: parts[4].slice(0, -'.yaml'.length) };
  }
  return { kind: 'other' };
}
