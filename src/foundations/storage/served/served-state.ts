import { ENVIRONMENTS, type EnvironmentName, type FlagState, type KillsFile, type RepositoryState } from '@flagops/core';
import {
  emptyKills,
  flagUnitKey,
  holdsBack,
  issuesByUnit,
  killsOfFlags,
  type ProjectFiles,
  projectFilesValid,
  validFlag,
  validKills,
} from '../../repository/held-units.js';
import { mergeServed, type ProjectServed, type ServedEntry } from '../../repository/merge-served.js';
import type { ValidationIssue } from '../../validation/issue.js';
import { Lru } from '../git/lru.js';
import type { ObjectStore } from '../git/object-store.js';
import { EffectiveVersions, flagWithVersions, projectWithVersions } from './effective-versions.js';
import type { History } from './history.js';
import type { ProjectFolder, ProjectFolders } from './project-folders.js';
import type { ServedHistoryCache } from './served-history-cache.js';
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

/** What a walk back through history learns of a unit at one commit. */
interface Probe {
  status: 'valid' | 'invalid' | 'gone';
  signature?: string;
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
  /** Per unit and commit, the commit its last valid state is from. Small entries: room for a push that breaks every flag of a big project. */
  private readonly lastValid = new Lru<string, Promise<string | null>>(200_000);
  private readonly versions: EffectiveVersions;

  constructor(
    private readonly loader: StateLoader,
    private readonly objects: ObjectStore,
    private readonly folders: ProjectFolders,
    private readonly cache?: ServedHistoryCache,
    history?: History,
  ) {
    this.versions = new EffectiveVersions(objects, folders, cache, history);
  }

  read(commit: string | null): Promise<ServedState> {
    if (commit === null) {
      return this.loader
        .load(null)
        .then(({ state, issues }) => ({ commit, state, issues, heldProjects: new Map(), heldFlags: new Map(), killFiles: new Map() }));
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
    if (after?.oid === before?.oid) {
      // Another project taking or giving up this one's id may hold it back or let it go.
      if (!after || !(await this.idTouchedElsewhere(commit, parent!, after))) return NONE;
      return (await this.projectValid(commit, after)) === (await this.projectValid(parent!, after)) ? NONE : ALL;
    }
    if (!after || !before) return ALL;
    await this.cache?.load();
    const key = `changes ${commit} ${slug}`;
    const recorded = this.cache?.get(key);
    if (recorded !== undefined) return new Set(ENVIRONMENTS.filter((_, i) => recorded.includes(String(i))));
    const changed = await this.changedIn(commit, parent!, after, before);
    this.cache?.set(key, ENVIRONMENTS.map((env, i) => (changed.has(env) ? String(i) : '')).join('') || '-');
    return changed;
  }

  private async changedIn(
    commit: string,
    parent: string,
    after: ProjectFolder,
    before: ProjectFolder,
  ): Promise<ReadonlySet<EnvironmentName>> {
    const [ownAfter, ownBefore] = await Promise.all([this.folders.projectFiles(after), this.folders.projectFiles(before)]);
    const validAfter = await this.projectValid(commit, after, ownAfter);
    if (validAfter && !(await this.projectValid(parent, before, ownBefore))) return ALL;
    // Segments are served in every environment's snapshot, and act on its flags.
    if (validAfter && after.segmentsDir !== before.segmentsDir) return ALL;
    const changed = new Set<EnvironmentName>();
    const killsAfter = validKills(ownAfter);
    for (let i = 0; i < ENVIRONMENTS.length; i++) {
      // An invalid kills file serves its last valid kills: what the parent served.
      if (killsAfter[ENVIRONMENTS[i]] !== undefined && (await this.folders.killsOid(after, i)) !== (await this.folders.killsOid(before, i)))
        changed.add(ENVIRONMENTS[i]);
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
      if ((await this.flagValidity(parent, before, key)) !== 'valid') return ALL;
      if (await this.folders.fileDiffers(before, after, key, 'flag')) return ALL;
      for (let i = 0; i < ENVIRONMENTS.length; i++)
        if (await this.folders.servedConfigDiffers(before, after, key, i)) changed.add(ENVIRONMENTS[i]);
    }
    return changed;
  }

  /**
   * Whether a flag's own files are valid at a commit. A commit whose state is at hand answers without parsing
   * (a push that breaks thousands of flags must not parse them all again): a flag in its project's state is
   * valid, one with an issue that holds back is not. Otherwise its files are read.
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
    const entries: ServedEntry[] = [];
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
      // Called for a project that keeps its id there: one that lost it is left out, and held back.
      const read = loaded.state.projects.get(slug);
      if (!read) return undefined;
      // Versions as they moved with content, whatever a push left in the files; a flag served from an earlier
      // commit (held back) has that commit's, below.
      const base = projectWithVersions(slug, read, await this.versions.at(commit));
      const held = issuesByUnit(loaded.issues).flagIssues.get(slug);
      const segments = base.segments;
      if (!held) return { project: base.project, flags: base.flags, carried: new Set(), segments };
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
      if (extra.size === 0) return { project: base.project, flags: base.flags, carried: new Set(), segments };
      const flags = new Map<string, FlagState>();
      for (const key of [...base.flags.keys(), ...extra.keys()].sort()) flags.set(key, base.flags.get(key) ?? extra.get(key)!);
      return { project: base.project, flags, carried: new Set(extra.keys()), segments };
    });
  }

  /** The flag at the newest commit from `from` back at which its own files were valid; undefined past its creation. */
  private async lastValidFlag(slug: string, key: string, from: string | null): Promise<FlagState | undefined> {
    const at = await this.lastValidCommit('flag', `${slug} ${key}`, from, async (commit, seen) => {
      // A commit whose state is at hand (the one served before, usually) has the flag parsed already.
      if ((await this.loader.peek(commit))?.state.projects.get(slug)?.flags.has(key)) return { status: 'valid' };
      const folder = await this.folders.at(commit, slug);
      const signature = folder && (await this.folders.flagSignature(folder, key));
      if (!folder || signature === undefined) return { status: 'gone' };
      if (signature === seen) return { status: 'invalid', signature };
      return { status: validFlag(slug, key, await this.folders.flagFiles(folder, key)) ? 'valid' : 'invalid', signature };
    });
    return at === null ? undefined : this.flagAt(at, slug, key);
  }

  /**
   * A flag as its own files at `commit` say, with its versions there: held back since, it serves that content
   * under that version, and a version read meanwhile is below the one it has once its files are served again
   * with another content (the versions of what changed moved on at each change).
   */
  private async flagAt(commit: string, slug: string, key: string): Promise<FlagState | undefined> {
    const read =
      (await this.loader.peek(commit))?.state.projects.get(slug)?.flags.get(key) ??
      (await this.folders
        .at(commit, slug)
        .then((folder) => folder && this.folders.flagFiles(folder, key).then((files) => validFlag(slug, key, files))));
    return read && flagWithVersions(slug, key, read, await this.versions.at(commit));
  }

  /** The project as served at the newest commit from `from` back at which its own files were valid. */
  private async lastValidProject(slug: string, from: string | null): Promise<ProjectServed | undefined> {
    const at = await this.lastValidCommit('project', slug, from, async (commit, seen) => {
      const folder = await this.folders.at(commit, slug);
      if (!folder) return { status: 'gone' };
      const signature = await this.folders.projectSignature(folder);
      // A project that lost its id keeps losing it while its files stay the same: the one keeping it claimed it first.
      if (signature === seen) return { status: 'invalid', signature };
      return { status: (await this.projectValid(commit, folder)) ? 'valid' : 'invalid', signature };
    });
    return at === null ? undefined : this.projectAt(at, slug);
  }

  /** Whether a project folder that changed from `parent` to `commit` has `folder`'s project id on either side. */
  private async idTouchedElsewhere(commit: string, parent: string, folder: ProjectFolder): Promise<boolean> {
    const id = (await this.folders.projectSlot(folder))?.value?.id;
    if (id === undefined) return false;
    for (const slug of await this.folders.changedSlugs(parent, commit)) {
      for (const at of [parent, commit]) {
        const other = await this.folders.at(at, slug);
        if (other && (await this.folders.projectSlot(other))?.value?.id === id) return true;
      }
    }
    return false;
  }

  /**
   * Whether a project's own files are valid at a commit and it keeps its id there: a project whose id another
   * project held first is held back like one with an invalid project.yaml.
   */
  private async projectValid(commit: string, folder: ProjectFolder, own?: ProjectFiles): Promise<boolean> {
    const files = own ?? (await this.folders.projectFiles(folder));
    if (!projectFilesValid(folder.slug, files)) return false;
    const id = files.project!.value!.id;
    for (const slug of await this.folders.slugs(commit)) {
      const other = slug === folder.slug ? undefined : await this.folders.at(commit, slug);
      if (!other || (await this.folders.projectSlot(other))?.value?.id !== id) continue;
      // Which of them keeps it is decided with the whole commit (StateLoader): read only when the id is shared.
      const { projectIssues } = issuesByUnit((await this.loader.load(commit)).issues);
      return !projectIssues.get(folder.slug)?.some(holdsBack);
    }
    return true;
  }

  /** An environment's kills at the newest commit from `from` back at which its kills file was valid (or absent). */
  private async lastValidKills(slug: string, env: EnvironmentName, from: string | null): Promise<KillsFile> {
    const index = ENVIRONMENTS.indexOf(env);
    const at = await this.lastValidCommit('kills', `${slug} ${env}`, from, async (commit, seen) => {
      const folder = await this.folders.at(commit, slug);
      if (!folder) return { status: 'gone' };
      const oid = await this.folders.killsOid(folder, index);
      if (oid === undefined) return { status: 'valid' };
      if (oid === seen) return { status: 'invalid', signature: oid };
      return { status: (await this.folders.killsSlot(folder, env))?.value ? 'valid' : 'invalid', signature: oid };
    });
    const folder = at === null ? undefined : await this.folders.at(at, slug);
    return (folder && (await this.folders.killsSlot(folder, env))?.value) ?? emptyKills();
  }

  /**
   * The newest commit from `from` back (first parents) at which a unit is valid, or null when there is none
   * since its files appeared. `probe` says whether it is valid at a commit, or gone (the walk ends), with a
   * signature of its files: given the previous commit's, it may answer without reading them. Results are
   * kept per commit, in memory and on disk, and a walk stops early at any commit it knows the answer for.
   */
  private lastValidCommit(
    kind: string,
    unit: string,
    from: string | null,
    probe: (commit: string, seen: string | undefined) => Promise<Probe>,
  ): Promise<string | null> {
    if (from === null) return Promise.resolve(null);
    const key = (commit: string) => `${kind} ${commit} ${unit}`;
    return memo(this.lastValid, key(from), async () => {
      await this.cache?.load();
      let seen: string | undefined;
      let found: string | null = null;
      for (let commit: string | null = from; commit !== null; commit = await this.parentOf(commit)) {
        const known = commit === from ? undefined : this.lastValid.peek(key(commit));
        const recorded = this.cache?.get(key(commit));
        if (known || recorded !== undefined) {
          found = known ? await known : recorded === '-' ? null : recorded!;
          break;
        }
        const { status, signature } = await probe(commit, seen);
        if (status === 'gone') break;
        if (status === 'valid') {
          found = commit;
          break;
        }
        seen = signature;
      }
      this.cache?.set(key(from), found ?? '-');
      return found;
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
