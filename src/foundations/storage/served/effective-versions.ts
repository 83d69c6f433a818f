import type { EnvironmentConfig, EnvironmentName, FlagState, SegmentFile } from '@flagops/core';
import { loopTurn } from '../../process/loop-turns.js';
import { classifyPath } from '../../repository/layout.js';
import { Lru } from '../git/lru.js';
import type { ObjectStore } from '../git/object-store.js';
import type { ProjectFolder, ProjectFolders } from './project-folders.js';
import type { ServedHistoryCache } from './served-history-cache.js';

/**
 * Per file (a config or a segment), its version where that is not what the file says (0 or more); and, for a file
 * deleted from main, a tombstone: -(its last version + 1), negative even when that version was 0, which a file
 * added again at that path moves past.
 */
export type VersionOverrides = ReadonlyMap<string, number>;

/**
 * Actions of the service's own commits that may add or delete a config or segment file (a flag created, a segment
 * created or deleted, an import): such a commit is read, since a file added at a deleted one's path moves past
 * the version it had.
 */
const ADDS_OR_DELETES_FILES: ReadonlySet<string> = new Set(['import', 'flag_create', 'project_create', 'segment_update', 'segment_delete']);

const NONE: VersionOverrides = new Map();
const NO_RENAMES: ReadonlyMap<string, { path: string; oid: string }> = new Map();

/** Records of at most this many entries are kept whole; bigger ones as the change from the first parent. */
const WHOLE_RECORD_MAX = 256;

/**
 * The version of each environment config and segment at a commit: what its file says, unless its content
 * changed on main without the version moving past the one before (a push that left `version` as it was, or
 * lowered it). Then it is the one before plus one, so a version always moves with content, whatever made the
 * change, and a write whose `expectedVersion` was read before it answers 409 rather than overwriting it.
 *
 * For a file whose blob changed at a commit: max(the file's version, its version at the first parent + 1); for
 * a new file, the file's version, or past the last version of a file deleted at that path (a flag deleted and
 * created again, whose ids are the same, so a write read before the deletion answers 409); for an invalid one,
 * its version at the first parent. These are the versions of the files' own content: a flag or project an
 * invalid file holds back serves the content and versions of its last valid commit (served-state.ts), and once
 * served from its files again, a config that changed meanwhile is above the version served while it was held
 * back, since its version moved at each change. Only files whose version differs from their file's are kept (almost always none), per
 * commit, from the first parent's and the files the commit changed: a function of first-parent history alone,
 * so every server reading a commit reports the same. Kept in memory and in the served-history cache (whole,
 * or as the change from the first parent when big), so a restart does not walk history again.
 */
export class EffectiveVersions {
  private readonly byCommit = new Lru<string, VersionOverrides>(64);

  constructor(
    private readonly objects: ObjectStore,
    private readonly folders: ProjectFolders,
    private readonly cache?: ServedHistoryCache,
    /** What a commit says of itself, believed only when this installation signed it (history.ts). */
    private readonly history?: { readCommit(oid: string): Promise<{ flagops: { action: string } | null }> },
  ) {}

  async at(commit: string): Promise<VersionOverrides> {
    const known = this.byCommit.get(commit);
    if (known) return known;
    await this.cache?.load();
    // Back along first parents to a commit whose overrides are known (or the root), then forward again.
    const chain: string[] = [];
    let base: VersionOverrides = NONE;
    let baseCommit: string | null = null;
    for (let at: string | null = commit; at !== null; ) {
      const inMemory = this.byCommit.get(at);
      if (inMemory) {
        base = inMemory;
        baseCommit = at;
        break;
      }
      const whole = this.wholeRecord(at);
      if (whole) {
        base = whole;
        baseCommit = at;
        break;
      }
      chain.push(at);
      // A push of many commits is walked here once, beside evaluations and kills of this process.
      await loopTurn();
      at = await this.parentOf(at);
    }
    let overrides = base;
    let parent = baseCommit;
    for (const next of chain.reverse()) {
      await loopTurn();
      overrides =
        this.recordedStep(next, overrides) ??
        (!hasLiveOverrides(overrides) && (await this.raisesEveryVersion(next))
          ? this.unchanged(next, overrides)
          : await this.step(parent, next, overrides));
      this.byCommit.set(next, overrides);
      parent = next;
    }
    return overrides;
  }

  /** The overrides at `commit` from its first parent's and the versioned files it changed. */
  private async step(parent: string | null, commit: string, before: VersionOverrides): Promise<VersionOverrides> {
    const after = new Map(before);
    for (const slug of await this.folders.changedSlugs(parent, commit)) {
      const then = parent === null ? undefined : await this.folders.at(parent, slug);
      // A project folder deleted: each of its files is deleted.
      const now = (await this.folders.at(commit, slug)) ?? (then && emptyFolder(then));
      if (!now) continue;
      const changed = await this.folders.changedVersionedFiles(then, now);
      const renamedFrom = then ? await this.renamedConfigs(then, now, changed) : NO_RENAMES;
      for (const { path, oldOid, newOid } of changed) {
        const held = before.get(path);
        const tombstone = held !== undefined && held < 0 ? lastVersionOf(held) : undefined;
        // The version it had at the first parent; for a file added, the last version of one deleted at its path,
        // or of the config the same flag (by id) had under its old key, renamed by this commit.
        const renamed = renamedFrom.get(path);
        const previous =
          (held !== undefined && held >= 0 ? held : undefined) ??
          (oldOid === undefined
            ? (tombstone ?? (renamed && (await this.versionAtParent(renamed.path, renamed.oid, before))))
            : await this.folders.versionOf(path, oldOid));
        if (newOid === undefined) {
          if (previous === undefined) after.delete(path);
          else after.set(path, tombstoneOf(previous));
          continue;
        }
        const own = await this.folders.versionOf(path, newOid);
        // Renamed as it was, a config's content did not change: its version stays.
        const moved = renamed?.oid === newOid ? 0 : 1;
        const version = own === undefined ? previous : previous === undefined ? own : Math.max(own, previous + moved);
        if (version === undefined || version === own) after.delete(path);
        else after.set(path, version);
      }
    }
    this.record(commit, before, after);
    return after;
  }

  /**
   * The configs a commit added for a flag it renamed (the same id, a new key): each added config's path, with
   * the path and blob of the config the flag had in that environment under its old key, deleted by the commit.
   */
  private async renamedConfigs(
    then: ProjectFolder,
    now: ProjectFolder,
    changed: ReadonlyArray<{ path: string; oldOid?: string; newOid?: string }>,
  ): Promise<ReadonlyMap<string, { path: string; oid: string }>> {
    const gone = new Map<string, { path: string; oid: string }>();
    for (const { path, oldOid, newOid } of changed) {
      const at = classifyPath(path);
      if (at.kind !== 'config' || newOid !== undefined || oldOid === undefined) continue;
      const id = await this.folders.flagId(then, at.flag);
      if (id !== undefined) gone.set(`${at.environment} ${id}`, { path, oid: oldOid });
    }
    if (gone.size === 0) return NO_RENAMES;
    const renamed = new Map<string, { path: string; oid: string }>();
    for (const { path, oldOid } of changed) {
      const at = classifyPath(path);
      if (at.kind !== 'config' || oldOid !== undefined) continue;
      const id = await this.folders.flagId(now, at.flag);
      const old = id === undefined ? undefined : gone.get(`${at.environment} ${id}`);
      if (old) renamed.set(path, old);
    }
    return renamed;
  }

  /** The version a file had at the first parent: its override there, else what the file said. */
  private async versionAtParent(path: string, oid: string, before: VersionOverrides): Promise<number | undefined> {
    const held = before.get(path);
    return held !== undefined && held >= 0 ? held : this.folders.versionOf(path, oid);
  }

  /**
   * Whether a commit is one this service made (its signature verifies) by a writer that always writes a changed
   * config's or segment's version one above the one before: every writer but an import, which writes what its
   * directory says. On a parent without overrides the commit makes none, and its files need not be read:
   * most of a repository's history is the service's own commits.
   */
  private async raisesEveryVersion(commit: string): Promise<boolean> {
    const action = (await this.history?.readCommit(commit))?.flagops?.action;
    return action !== undefined && !ADDS_OR_DELETES_FILES.has(action);
  }

  /** A commit that changes no override: its first parent's (tombstones at most) carried on. */
  private unchanged(commit: string, before: VersionOverrides): VersionOverrides {
    if (before.size === 0) {
      this.cache?.set(key(commit), '-');
      return NONE;
    }
    this.record(commit, before, before);
    return before;
  }

  private record(commit: string, before: VersionOverrides, after: VersionOverrides): void {
    if (!this.cache) return;
    if (after.size <= WHOLE_RECORD_MAX) {
      this.cache.set(key(commit), after.size === 0 ? '-' : `w${JSON.stringify([...after])}`);
      return;
    }
    const set = [...after].filter(([path, version]) => before.get(path) !== version);
    const removed = [...before.keys()].filter((path) => !after.has(path));
    this.cache.set(key(commit), `d${JSON.stringify({ set, removed })}`);
  }

  private wholeRecord(commit: string): VersionOverrides | undefined {
    const value = this.cache?.get(key(commit));
    if (value === '-') return NONE;
    if (value?.startsWith('w')) return new Map(JSON.parse(value.slice(1)) as Array<[string, number]>);
    return undefined;
  }

  /** A recorded step (whole or a change from the first parent), applied to the first parent's overrides. */
  private recordedStep(commit: string, before: VersionOverrides): VersionOverrides | undefined {
    const value = this.cache?.get(key(commit));
    if (!value?.startsWith('d')) return this.wholeRecord(commit);
    const { set, removed } = JSON.parse(value.slice(1)) as { set: Array<[string, number]>; removed: string[] };
    const after = new Map(before);
    for (const path of removed) after.delete(path);
    for (const [path, version] of set) after.set(path, version);
    return after;
  }

  private async parentOf(commit: string): Promise<string | null> {
    return (await this.objects.readCommit(commit)).parents[0] ?? null;
  }
}

const key = (commit: string) => `versions ${commit}`;

/** A deleted file's tombstone: below 0 whatever its last version, 0 included. */
const tombstoneOf = (lastVersion: number) => -(lastVersion + 1);
const lastVersionOf = (tombstone: number) => -tombstone - 1;

/** Whether any file's version differs from what it says (tombstones of deleted files aside). */
function hasLiveOverrides(overrides: VersionOverrides): boolean {
  for (const version of overrides.values()) if (version >= 0) return true;
  return false;
}

/** A project folder with none of its files: what a deleted project's folder is at the commit deleting it. */
function emptyFolder(folder: ProjectFolder): ProjectFolder {
  return { ...folder, projectFile: undefined, flagsDir: undefined, envDirs: folder.envDirs.map(() => undefined), segmentsDir: undefined };
}

type Located = ReturnType<typeof classifyPath>;

// Overrides are shared per commit: grouped by project once.
const groupedBySlug = new WeakMap<VersionOverrides, ReadonlyMap<string, ReadonlyArray<[Located, number]>>>();

/** The live overrides (deleted files' tombstones aside) of configs and segments, by project slug. */
function overridesBySlug(overrides: VersionOverrides): ReadonlyMap<string, ReadonlyArray<[Located, number]>> {
  const known = groupedBySlug.get(overrides);
  if (known) return known;
  const bySlug = new Map<string, Array<[Located, number]>>();
  for (const [path, version] of overrides) {
    if (version < 0) continue; // a deleted file's last version: nothing to serve
    const where = classifyPath(path);
    if (where.kind !== 'config' && where.kind !== 'segment') continue;
    const list = bySlug.get(where.project) ?? [];
    list.push([where, version]);
    bySlug.set(where.project, list);
  }
  groupedBySlug.set(overrides, bySlug);
  return bySlug;
}

/**
 * A project's flags and segments as read from the files of a commit, with that commit's overridden versions in
 * place: a changed copy of each flag and segment concerned, the rest shared as it was (states are shared and
 * read-only). A flag or project served from an earlier commit (held back) takes that commit's versions, not
 * these: what it serves, and so its version, is that commit's.
 */
export function projectWithVersions<T extends { flags: ReadonlyMap<string, FlagState>; segments?: ReadonlyMap<string, SegmentFile> }>(
  slug: string,
  project: T,
  overrides: VersionOverrides,
): T {
  const changes = overrides.size === 0 ? undefined : overridesBySlug(overrides).get(slug);
  if (!changes) return project;
  const flags = new Map(project.flags);
  const segments = new Map(project.segments ?? []);
  for (const [where, version] of changes) {
    if (where.kind === 'config') {
      const flag = flags.get(where.flag);
      if (flag) flags.set(where.flag, flagWithVersion(flag, where.environment, version));
    } else if (where.kind === 'segment') {
      const segment = segments.get(where.segment);
      if (segment) segments.set(where.segment, { ...segment, version } satisfies SegmentFile);
    }
  }
  return { ...project, flags, segments };
}

/** One flag as read from the files of a commit, with that commit's overridden versions in place. */
export function flagWithVersions(slug: string, key: string, flag: FlagState, overrides: VersionOverrides): FlagState {
  const changes = overrides.size === 0 ? undefined : overridesBySlug(overrides).get(slug);
  let out = flag;
  for (const [where, version] of changes ?? [])
    if (where.kind === 'config' && where.flag === key) out = flagWithVersion(out, where.environment, version);
  return out;
}

function flagWithVersion(flag: FlagState, env: EnvironmentName, version: number): FlagState {
  const config: EnvironmentConfig = { ...flag.environments[env], version };
  return { ...flag, environments: { ...flag.environments, [env]: config } };
}
