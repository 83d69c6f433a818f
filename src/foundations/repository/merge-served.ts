import {
  ENVIRONMENTS,
  type EnvironmentName,
  type FlagState,
  type KillsFile,
  type ProjectFile,
  type ProjectState,
  type SegmentFile,
} from '@flagops/core';
import { killsOfFlags } from './held-units.js';

/** A project as served at one commit; `carried` names flags served from an earlier commit. */
export interface ProjectServed {
  project: ProjectFile;
  flags: ReadonlyMap<string, FlagState>;
  carried: ReadonlySet<string>;
  segments?: ReadonlyMap<string, SegmentFile>;
}

export interface ServedEntry {
  slug: string;
  served: ProjectServed;
  kills: Record<EnvironmentName, KillsFile>;
  /** The whole project is its last valid state. */
  held: boolean;
}

/**
 * The served projects, ids kept unique (API paths name flags and projects by id alone): what is served as
 * committed keeps its ids, and a last valid state that would reuse one of them is left out.
 */
export function mergeServed(entries: readonly ServedEntry[]): Map<string, ProjectState> {
  const projectIds = new Set<string>();
  const flagIds = new Set<string>();
  const carried = (entry: ServedEntry, key: string) => entry.held || entry.served.carried.has(key);
  // The ids of flags served as committed matter only to flags served from history: with none, skip 10,000 flags.
  const anyCarried = entries.some((entry) => entry.held || entry.served.carried.size > 0);
  for (const entry of entries) {
    if (entry.held) continue;
    projectIds.add(entry.served.project.id);
    if (anyCarried) for (const [key, flag] of entry.served.flags) if (!carried(entry, key)) flagIds.add(flag.meta.id);
  }
  const projects = new Map<string, ProjectState>();
  for (const entry of entries) {
    const { project } = entry.served;
    if (entry.held) {
      if (projectIds.has(project.id)) continue;
      projectIds.add(project.id);
    }
    let flags = entry.served.flags as Map<string, FlagState>;
    if (entry.held || entry.served.carried.size > 0) {
      flags = new Map();
      for (const [key, flag] of entry.served.flags) {
        if (carried(entry, key)) {
          if (flagIds.has(flag.meta.id)) continue;
          flagIds.add(flag.meta.id);
        }
        flags.set(key, flag);
      }
    }
    const kills = {} as Record<EnvironmentName, KillsFile>;
    for (const env of ENVIRONMENTS) kills[env] = killsOfFlags(entry.kills[env], (key) => flags.has(key));
    projects.set(entry.slug, { project, flags, kills, segments: entry.served.segments ?? new Map() });
  }
  return projects;
}
