import type { FlagState, ProjectState, RepositoryState } from '@flagops/core';
import { NotFoundError } from '../errors/kinds.js';

/** A flag with the project it lives in. */
export interface FlagRef {
  project: ProjectState;
  flag: FlagState;
}

interface Index {
  projects: Map<string, ProjectState>;
  flags: Map<string, FlagRef>;
}

// States are immutable and shared per commit, so one index per state serves every request on that commit.
const indexes = new WeakMap<RepositoryState, Index>();

function indexOf(state: RepositoryState): Index {
  let index = indexes.get(state);
  if (!index) {
    index = { projects: new Map(), flags: new Map() };
    for (const project of state.projects.values()) {
      index.projects.set(project.project.id, project);
      for (const flag of project.flags.values()) index.flags.set(flag.meta.id, { project, flag });
    }
    indexes.set(state, index);
  }
  return index;
}

/** The project with this id in the caller's organisation's state, or 404. */
export function projectById(state: RepositoryState, id: string): ProjectState {
  const project = indexOf(state).projects.get(id);
  if (!project) throw new NotFoundError(`project ${JSON.stringify(id)}`);
  return project;
}

/** The flag with this id, or 404. Ids are unique across an organisation, so no project is needed. */
export function flagById(state: RepositoryState, id: string): FlagRef {
  const ref = indexOf(state).flags.get(id);
  if (!ref) throw new NotFoundError(`flag ${JSON.stringify(id)}`);
  return ref;
}

/** The flag with this business key in the project with this slug, or 404 (the MCP server's lookup). */
export function flagByKey(state: RepositoryState, projectSlug: string, key: string): FlagRef {
  const project = state.projects.get(projectSlug);
  if (!project) throw new NotFoundError(`project ${JSON.stringify(projectSlug)}`);
  const flag = project.flags.get(key);
  if (!flag) throw new NotFoundError(`flag ${JSON.stringify(key)} in project ${JSON.stringify(projectSlug)}`);
  return { project, flag };
}
