import type { FlagState, ProjectState, RepositoryState } from '@flagops/core';
import { NotFoundError } from '../errors/kinds.js';

/** A flag with the project it lives in. */
export interface FlagRef {
  project: ProjectState;
  flag: FlagState;
}

interface Index {
  flags: Map<string, FlagRef>;
}

/**
 * Where each flag id was found when a state was last indexed (project slug and key): a flag keeps its id, so
 * a write to one flag on a new commit finds it without indexing every flag of that commit's state. A hint is
 * checked against the state (ids are unique in it), so a stale one only costs the index. Bounded: cleared
 * when it grows past MAX_HINTS.
 */
const hints = new Map<string, { slug: string; key: string }>();
const MAX_HINTS = 200_000;

// States are immutable and shared per commit, so one index per state serves every request on that commit.
const indexes = new WeakMap<RepositoryState, Index>();

function indexOf(state: RepositoryState): Index {
  let index = indexes.get(state);
  if (!index) {
    index = { flags: new Map() };
    for (const project of state.projects.values()) {
      for (const flag of project.flags.values()) index.flags.set(flag.meta.id, { project, flag });
    }
    indexes.set(state, index);
    if (hints.size + index.flags.size > MAX_HINTS) hints.clear();
    for (const [id, ref] of index.flags) {
      const slug = ref.project.project.slug;
      const key = ref.flag.meta.key;
      const hint = hints.get(id);
      if (hint?.slug !== slug || hint.key !== key) hints.set(id, { slug, key });
    }
  }
  return index;
}

/** The project with this id in the caller's organisation's state, or 404. */
export function projectById(state: RepositoryState, id: string): ProjectState {
  // Projects are few: looking through them spares indexing every flag of a new commit's state.
  for (const project of state.projects.values()) if (project.project.id === id) return project;
  throw new NotFoundError(`project ${JSON.stringify(id)}`);
}

/** The flag with this id, or 404. Ids are unique across an organisation, so no project is needed. */
export function flagById(state: RepositoryState, id: string): FlagRef {
  const hint = hints.get(id);
  if (hint !== undefined) {
    const project = state.projects.get(hint.slug);
    const flag = project?.flags.get(hint.key);
    if (project !== undefined && flag?.meta.id === id) return { project, flag };
  }
  const ref = indexOf(state).flags.get(id);
  if (!ref) throw new NotFoundError(`flag ${JSON.stringify(id)}`, keyInsteadOfIdHint(state, id));
  return ref;
}

/**
 * A flag's key is what people know it by, so it is what they put in `/flags/:id` first: name the lookup that
 * answers the id. Nothing for an id-shaped string, which is simply not there.
 */
function keyInsteadOfIdHint(state: RepositoryState, id: string): string | undefined {
  const slugs = [...state.projects.values()].filter((p) => p.flags.has(id)).map((p) => p.project.slug);
  const lookup = (slug: string) => `GET /api/v1/flags/lookup?projectSlug=${slug}&key=${encodeURIComponent(id)}`;
  if (slugs.length === 1) {
    return `this path takes a flag's id, and ${JSON.stringify(id)} is the key of a flag in project ${JSON.stringify(slugs[0])}; ${lookup(slugs[0])} answers it with its id`;
  }
  if (slugs.length > 1) {
    const projects = slugs.map((s) => JSON.stringify(s)).join(', ');
    return `this path takes a flag's id, and ${JSON.stringify(id)} is the key of flags in projects ${projects}; ${lookup('<slug>')} answers each with its id`;
  }
  if (id.startsWith('flg_')) return undefined;
  return `this path takes a flag's id (flg_…), not its key; ${lookup('<slug>')} answers a flag with its id`;
}

/** The flag with this business key in the project with this slug, or 404 (the MCP server's lookup). */
export function flagByKey(state: RepositoryState, projectSlug: string, key: string): FlagRef {
  const project = state.projects.get(projectSlug);
  if (!project) throw new NotFoundError(`project ${JSON.stringify(projectSlug)}`);
  const flag = project.flags.get(key);
  if (!flag) throw new NotFoundError(`flag ${JSON.stringify(key)} in project ${JSON.stringify(projectSlug)}`);
  return { project, flag };
}
