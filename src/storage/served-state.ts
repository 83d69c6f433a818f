import { ENVIRONMENTS, type EnvironmentName } from '../model/environments.js';
import type { FlagState, KillsFile, ProjectFile, ProjectState, RepositoryState } from '../model/types.js';
import { emptyKills, flagUnitKey, holdsBack, killsOfFlags, projectFilesValid, unitOfPath, validFlag, validKills } from '../repository/held-units.js';
import type { ValidationIssue } from '../validation/issue.js';
import { Lru } from './lru.js';
import type { ObjectStore } from './object-store.js';
import type { ProjectFolder, ProjectFolders } from './project-folders.js';
import type { StateLoader } from './state-loader.js';

/**
 * What a commit serves: everything as committed, except what an invalid file holds back, which keeps its
 * last valid state. The evaluation server serves it and the control plane answers from it.
 */
export interface ServedState {
  commit: string | null;
  /** Shared and read-only, like LoadedState's. */
  state: RepositoryState;
  /** Every problem found on the commit, held back or not (what /healthz lists). */
  issues: ValidationIssue[];
  /** Projects whose own files (project.yaml, a kills.yaml) are invalid, with those files' issues. */
  heldProjects: ReadonlyMap<string, readonly ValidationIssue[]>;
  /** Flags (`<slug>/<key>`) whose own files are invalid, with those files' issues. */
  heldFlags: ReadonlyMap<string, readonly ValidationIssue[]>;
  /**
   * Per project, each environment's kills as a kill rewrites them: the kills file as committed, or, where it
   * is invalid, its last valid version (without kills of flags that no longer have a flag file).
   */
  killFiles: ReadonlyMap<string, Readonly<Record<EnvironmentName, KillsFile>>>;
}

/** The issues that hold back a project, or a flag of it: its project's and its own. Empty: served as committed. */
export function heldBackBy(served: ServedState, slug: string, key?: string): ValidationIssue[] {
  const own = key === undefined ? undefined : served.heldFlags.get(flagUnitKey(slug, key));
  return [...(served.heldProjects.get(slug) ?? []), ...(own ?? [])];
}

/** A project as served at one commit; `carried` names flags served from an earlier commit. */
interface ProjectServed {
  project: ProjectFile;
  flags: ReadonlyMap<string, FlagState>;
  carried: ReadonlySet<string>;
}

interface Entry {
  slug: string;
  served: ProjectServed;
  kills: Record<EnvironmentName, KillsFile>;
  /** The whole project is its last valid state. */
  held: boolean;
}

/** Held-back flags in one project past which their parent commit is read whole rather than flag by flag. */
const PRELOAD_PARENT_AFTER = 32;

const ALL: ReadonlySet<EnvironmentName> = new Set(ENVIRONMENTS);
const NONE: ReadonlySet<EnvironmentName> = new Set();

/**
 * Served states, derived from main's first-parent history alone, so every server reading a commit serves the
 * same, after a restart too. A unit (a flag: its definition and its three configs; a project: project.yaml
 * and its kills files) whose own files are invalid at a commit serves its state at the newest first-parent
 * ancestor at which they were valid; one that was never valid since its files appeared is not served. An
 * invalid kills file keeps its last valid kills, and holds back its project like an invalid project.yaml.
 *
 * Each step back reads only what changed (folders by tree oid, files by blob oid), and the last valid state
 * is remembered per commit, so a new head on top of a served one costs one step per held-back unit.
 */
export class ServedStates {
  private readonly byCommit = new Lru<string, Promise<ServedState>>(8);
  private readonly projectsAt = new Lru<string, Promise<ProjectServed | undefined>>(256);
  /** Small entries (a promise of a shared FlagState): room for a push that breaks every flag of a big project. */
  private readonly lastFlags = new Lru<string, Promise<FlagState | undefined>>(200_000);
  private readonly lastProjects = new Lru<string, Promise<ProjectServed | undefined>>(256);
  private readonly lastKills = new Lru<string, Promise<KillsFile>>(1024);

  constructor(
    private readonly loader: StateLoader,
    private readonly objects: ObjectStore,
    private readonly folders: ProjectFolders,
  ) {}

  read(commit: string | null): Promise<ServedState> {
    if (commit === null) {
      return this.loader.load(null).then(({ state, issues }) => ({ commit, state, issues, heldProjects: new Map(), heldFlags: new Map(), killFiles: new Map() }));
    }
    return memo(this.byCommit, commit, () => this.compute(commit));
  }

  /**
   * The environments of a project whose served snapshot may differ between `commit` and its first parent.
   * Never misses a change; may name an environment whose snapshot came out the same (a flag made valid again
   * with the values it served while held back), never one a commit touching only held-back files changed.
   */
  async changedEnvironments(commit: string, slug: string): Promise<ReadonlySet<EnvironmentName>> {
    const parent = await this.parentOf(commit);
    const after = await this.folders.at(commit, slug);
    const before = parent === null ? undefined : await this.folders.at(parent, slug);
    if (after?.oid === before?.oid) return NONE;
    if (!after || !before) return ALL;
    const [ownAfter, ownBefore] = await Promise.all([this.folders.projectFiles(after), this.folders.projectFiles(before)]);
    const validAfter = projectFilesValid(slug, ownAfter);
    if (validAfter && !projectFilesValid(slug, ownBefore)) return ALL;
    const changed = new Set<EnvironmentName>();
    const killsAfter = validKills(ownAfter);
    for (let i = 0; i < ENVIRONMENTS.length; i++) {
      // An invalid kills file serves its last valid kills: what the parent served.
      if (killsAfter[ENVIRONMENTS[i]] !== undefined && (await this.folders.killsOid(after, i)) !== (await this.folders.killsOid(before, i))) changed.add(ENVIRONMENTS[i]);
    }
    // A held-back project serves what it served at the parent, kills aside.
    if (!validAfter) return changed;
    for (const key of await this.folders.touchedKeys(before, after)) {
      const now = await this.flagValidity(commit, after, key);
      // Gone: what it served (if anything) is no longer served.
      if (now === 'absent') return ALL;
      // Held back at `commit`: it serves what it served at the parent.
      if (now === 'invalid') continue;
      // Valid again: served from its files now, no longer from history.
      if ((await this.flagValidity(parent!, before, key)) !== 'valid') return ALL;
      if (await this.folders.fileDiffers(before, after, key, 'flag')) return ALL;
      for (let i = 0; i < ENVIRONMENTS.length; i++) if (await this.folders.fileDiffers(before, after, key, i)) changed.add(ENVIRONMENTS[i]);
    }
    return changed;
  }

  /**
   * Whether a flag's own files are valid at a commit. A commit whose state is at hand answers without parsing
   * (a push that breaks thousands of flags must not parse them all again): a flag in its project's state is
   * valid, one with an issue that holds back is not. Otherwise its files are read, stopping at the first bad one.
   */
  private async flagValidity(commit: string, folder: ProjectFolder, key: string): Promise<'valid' | 'invalid' | 'absent'> {
    const loaded = await this.loader.peek(commit);
    const project = loaded?.state.projects.get(folder.slug);
    if (loaded && project) {
      if (project.flags.has(key)) return 'valid';
      if (issuesByUnit(loaded.issues).flagIssues.get(folder.slug)?.get(key)?.some(holdsBack)) return 'invalid';
    }
    if ((await this.folders.flagSignature(folder, key)) === undefined) return 'absent';
    return validFlag(folder.slug, key, await this.folders.flagFiles(folder, key)) ? 'valid' : 'invalid';
  }

  private async compute(commit: string): Promise<ServedState> {
    const loaded = await this.loader.load(commit);
    const parent = await this.parentOf(commit);
    const { projectIssues, flagIssues } = issuesByUnit(loaded.issues);
    const heldProjects = new Map<string, readonly ValidationIssue[]>();
    const heldFlags = new Map<string, readonly ValidationIssue[]>();
    const killFiles = new Map<string, Record<EnvironmentName, KillsFile>>();
    const entries: Entry[] = [];
    for (const slug of (await this.folders.slugs(commit)).sort()) {
      const folder = (await this.folders.at(commit, slug))!;
      const own = await this.folders.projectFiles(folder);
      // The issues say which units' own files are invalid: the parser's and the checks of each unit's files.
      const valid = !projectIssues.get(slug)?.some(holdsBack);
      if (!valid) heldProjects.set(slug, projectIssues.get(slug)!);
      for (const [key, issues] of flagIssues.get(slug) ?? []) if (issues.some(holdsBack)) heldFlags.set(flagUnitKey(slug, key), issues);
      const served = valid ? await this.projectAt(commit, slug) : await this.lastValidProject(slug, parent);
      if (!served) continue;
      const current = validKills(own);
      const kills = {} as Record<EnvironmentName, KillsFile>;
      const rewrite = {} as Record<EnvironmentName, KillsFile>;
      for (const env of ENVIRONMENTS) {
        const valid = current[env];
        if (valid) {
          kills[env] = rewrite[env] = valid;
          continue;
        }
        kills[env] = await this.lastValidKills(slug, env, parent);
        // Written back, kills of flags without a flag file would make the file invalid again.
        const flagFiles = await this.folders.flagKeys(folder);
        rewrite[env] = killsOfFlags(kills[env], (key) => flagFiles.has(key));
      }
      killFiles.set(slug, rewrite);
      entries.push({ slug, served, kills, held: !valid });
    }
    return { commit, state: { commit, projects: mergeServed(entries) }, issues: loaded.issues, heldProjects, heldFlags, killFiles };
  }

  /** A project whose own files are valid at `commit`, as served there: its valid flags, and its held-back ones' last valid state. */
  private projectAt(commit: string, slug: string): Promise<ProjectServed | undefined> {
    return memo(this.projectsAt, `${commit} ${slug}`, async () => {
      const loaded = await this.loader.load(commit);
      // Left out although its own files are valid: its id is another project's (reported), so it is not served.
      const base = loaded.state.projects.get(slug);
      if (!base) return undefined;
      const held = issuesByUnit(loaded.issues).flagIssues.get(slug);
      if (!held) return { project: base.project, flags: base.flags, carried: new Set() };
      const parent = await this.parentOf(commit);
      const extra = new Map<string, FlagState>();
      // Many flags broken at once (a bulk edit): reading the parent whole, incrementally from this commit,
      // parses only what differs, where looking each flag up on its own parses all four files of each.
      if (parent !== null && countHeld(held) > PRELOAD_PARENT_AFTER) await this.loader.load(parent);
      for (const [key, issues] of held) {
        // Left out only for clashing with another flag (reported): not served, and nothing to hold back.
        if (base.flags.has(key) || !issues.some(holdsBack)) continue;
        const last = await this.lastValidFlag(slug, key, parent);
        if (last) extra.set(key, last);
      }
      if (extra.size === 0) return { project: base.project, flags: base.flags, carried: new Set() };
      const flags = new Map<string, FlagState>();
      for (const key of [...base.flags.keys(), ...extra.keys()].sort()) flags.set(key, base.flags.get(key) ?? extra.get(key)!);
      return { project: base.project, flags, carried: new Set(extra.keys()) };
    });
  }

  /** The flag at the newest commit from `from` back at which its own files were valid; undefined past its creation. */
  private lastValidFlag(slug: string, key: string, from: string | null): Promise<FlagState | undefined> {
    if (from === null) return Promise.resolve(undefined);
    return memo(this.lastFlags, `${from} ${slug} ${key}`, async () => {
      let seen: string | undefined;
      for (let commit: string | null = from; commit !== null; commit = await this.parentOf(commit)) {
        if (commit !== from) {
          const known = this.lastFlags.peek(`${commit} ${slug} ${key}`);
          if (known) return known;
        }
        // A commit whose state is at hand (the one served before, usually) has the flag parsed already.
        const served = (await this.loader.peek(commit))?.state.projects.get(slug)?.flags.get(key);
        if (served) return served;
        const folder = await this.folders.at(commit, slug);
        if (!folder) return undefined;
        const signature = await this.folders.flagSignature(folder, key);
        if (signature === undefined) return undefined;
        if (signature === seen) continue;
        seen = signature;
        const state = validFlag(slug, key, await this.folders.flagFiles(folder, key));
        if (state) return state;
      }
      return undefined;
    });
  }

  /** The project as served at the newest commit from `from` back at which its own files were valid. */
  private lastValidProject(slug: string, from: string | null): Promise<ProjectServed | undefined> {
    if (from === null) return Promise.resolve(undefined);
    return memo(this.lastProjects, `${from} ${slug}`, async () => {
      let seen: string | undefined;
      for (let commit: string | null = from; commit !== null; commit = await this.parentOf(commit)) {
        if (commit !== from) {
          const known = this.lastProjects.peek(`${commit} ${slug}`);
          if (known) return known;
        }
        const folder = await this.folders.at(commit, slug);
        if (!folder) return undefined;
        const signature = await this.folders.projectSignature(folder);
        if (signature === seen) continue;
        seen = signature;
        if (projectFilesValid(slug, await this.folders.projectFiles(folder))) return this.projectAt(commit, slug);
      }
      return undefined;
    });
  }

  /** An environment's kills at the newest commit from `from` back at which its kills file was valid (or absent). */
  private lastValidKills(slug: string, env: EnvironmentName, from: string | null): Promise<KillsFile> {
    if (from === null) return Promise.resolve(emptyKills());
    const index = ENVIRONMENTS.indexOf(env);
    return memo(this.lastKills, `${from} ${slug} ${env}`, async () => {
      let seen: string | undefined;
      for (let commit: string | null = from; commit !== null; commit = await this.parentOf(commit)) {
        const folder = await this.folders.at(commit, slug);
        if (!folder) return emptyKills();
        const oid = await this.folders.killsOid(folder, index);
        if (oid === undefined) return emptyKills();
        if (oid === seen) continue;
        seen = oid;
        const slot = await this.folders.killsSlot(folder, env);
        if (slot?.value) return slot.value;
      }
      return emptyKills();
    });
  }

  private async parentOf(commit: string): Promise<string | null> {
    return (await this.objects.readCommit(commit)).parents[0] ?? null;
  }
}

function countHeld(flags: ReadonlyMap<string, readonly ValidationIssue[]>): number {
  let count = 0;
  for (const issues of flags.values()) if (issues.some(holdsBack)) count++;
  return count;
}

/** A promise kept per key; a failed one is dropped, so the next call tries again. */
function memo<T>(cache: Lru<string, Promise<T>>, key: string, compute: () => Promise<T>): Promise<T> {
  let promise = cache.get(key);
  if (!promise) {
    promise = compute();
    cache.set(key, promise);
    const failed = promise;
    failed.catch(() => {
      if (cache.peek(key) === failed) cache.delete(key);
    });
  }
  return promise;
}

interface IssuesByUnit {
  projectIssues: Map<string, ValidationIssue[]>;
  flagIssues: Map<string, Map<string, ValidationIssue[]>>;
}

const grouped = new WeakMap<readonly ValidationIssue[], IssuesByUnit>();

/** Issues by the unit their file belongs to: per project slug, and per project slug and flag key. */
function issuesByUnit(issues: readonly ValidationIssue[]): IssuesByUnit {
  const known = grouped.get(issues);
  if (known) return known;
  const projectIssues = new Map<string, ValidationIssue[]>();
  const flagIssues = new Map<string, Map<string, ValidationIssue[]>>();
  for (const issue of issues) {
    const unit = issue.file === undefined ? undefined : unitOfPath(issue.file);
    if (unit?.kind === 'project') {
      const list = projectIssues.get(unit.project) ?? [];
      list.push(issue);
      projectIssues.set(unit.project, list);
    } else if (unit?.kind === 'flag') {
      let byKey = flagIssues.get(unit.project);
      if (!byKey) {
        byKey = new Map();
        flagIssues.set(unit.project, byKey);
      }
      const list = byKey.get(unit.flag) ?? [];
      list.push(issue);
      byKey.set(unit.flag, list);
    }
  }
  const result = { projectIssues, flagIssues };
  grouped.set(issues, result);
  return result;
}

/**
 * The served projects, ids kept unique (API paths name flags and projects by id alone): what is served as
 * committed keeps its ids, and a last valid state that would reuse one of them is left out.
 */
function mergeServed(entries: readonly Entry[]): Map<string, ProjectState> {
  const projectIds = new Set<string>();
  const flagIds = new Set<string>();
  const carried = (entry: Entry, key: string) => entry.held || entry.served.carried.has(key);
  for (const entry of entries) {
    if (entry.held) continue;
    projectIds.add(entry.served.project.id);
    for (const [key, flag] of entry.served.flags) if (!carried(entry, key)) flagIds.add(flag.meta.id);
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
    projects.set(entry.slug, { project, flags, kills });
  }
  return projects;
}
