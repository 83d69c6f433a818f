import { ENVIRONMENTS, type FlagState, type ProjectState, type ScheduleStep } from '@flagops/core';
import { heldBackBy, type ServedState } from '../../foundations/storage/served/served-state.js';
import type { StepTarget } from './schedule-steps.js';

/** The schedule of one flag in one environment, as served. */
export interface DueEntry extends StepTarget {
  /** When its first step falls due (ms since the epoch). */
  dueAt: number;
  /** The steps, oldest first (the served config's own, frozen, array). */
  steps: readonly ScheduleStep[];
}

const entryKey = (slug: string, key: string, env: string) => `${slug}\u0000${key}\u0000${env}`;

/**
 * When the next step of every schedule falls due, kept from the served state as main moves, so the scheduler
 * looks at nothing until a step is due. A commit that touched one flag costs that flag: projects and flags
 * the new served state shares with the one before (the store reuses the state of what did not change) are
 * skipped. Flags an invalid file holds back are left out until their files are valid again.
 */
export class DueIndex {
  private readonly entries = new Map<string, DueEntry>();
  /** Per project: the state indexed, whether it or any flag of it was held back, its indexed flags. */
  private readonly projects = new Map<string, { state: ProjectState; held: boolean; flags: ReadonlyMap<string, FlagState> }>();

  /** Brings the index up to a served state (of main's new head). */
  update(served: ServedState): void {
    for (const slug of this.projects.keys()) if (!served.state.projects.has(slug)) this.dropProject(slug);
    for (const [slug, project] of served.state.projects) {
      const held = heldBackBy(served, slug).length > 0 || hasHeldFlags(served, slug);
      const known = this.projects.get(slug);
      // The same ProjectState (or the same flags: a kill), with nothing of it held back then or now: no schedule changed.
      if (known && (known.state === project || known.state.flags === project.flags) && !known.held && !held) {
        known.state = project;
        continue;
      }
      this.updateProject(served, slug, project, held);
    }
  }

  /** Entries whose first step is due at `now` (ms) or before, oldest first. */
  due(now: number): DueEntry[] {
    return [...this.entries.values()].filter((entry) => entry.dueAt <= now).sort((a, b) => a.dueAt - b.dueAt);
  }

  /** When the earliest step falls due; undefined when no schedule has one. */
  earliest(): number | undefined {
    let min: number | undefined;
    for (const entry of this.entries.values()) if (min === undefined || entry.dueAt < min) min = entry.dueAt;
    return min;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Every schedule indexed. */
  schedules(): IterableIterator<DueEntry> {
    return this.entries.values();
  }

  private updateProject(served: ServedState, slug: string, project: ProjectState, held: boolean): void {
    const known = this.projects.get(slug);
    // The served map itself (never changed once served) unless some flags are held back: a copy of 10,000
    // entries a commit would be garbage that lives long enough to be promoted, and so more full collections.
    const indexed = held ? new Map<string, FlagState>() : undefined;
    for (const [key, flag] of project.flags) {
      // Nothing of a project that is not held holds back a flag: no need to ask for each of 10,000 flags.
      if (indexed && heldBackBy(served, slug, key).length > 0) {
        this.dropFlag(slug, key);
        continue;
      }
      indexed?.set(key, flag);
      if (known?.flags.get(key) === flag) continue;
      for (const env of ENVIRONMENTS) {
        const steps = flag.environments[env].schedule;
        const id = entryKey(slug, key, env);
        if (steps && steps.length > 0) this.entries.set(id, { slug, key, env, dueAt: Date.parse(steps[0].at), steps });
        else this.entries.delete(id);
      }
    }
    const flags = indexed ?? project.flags;
    if (known) for (const key of known.flags.keys()) if (!flags.has(key)) this.dropFlag(slug, key);
    this.projects.set(slug, { state: project, held, flags });
  }

  private dropProject(slug: string): void {
    for (const key of this.projects.get(slug)?.flags.keys() ?? []) this.dropFlag(slug, key);
    this.projects.delete(slug);
  }

  private dropFlag(slug: string, key: string): void {
    for (const env of ENVIRONMENTS) this.entries.delete(entryKey(slug, key, env));
  }
}

function hasHeldFlags(served: ServedState, slug: string): boolean {
  for (const unit of served.heldFlags.keys()) if (unit.startsWith(`${slug}/`)) return true;
  return false;
}
