import type { EnvironmentConfig, FlagFile, FlagState, KillsFile, ProjectFile, ProjectState, SegmentFile } from '@flagops/core';
import type { ValidationIssue } from '../validation/issue.js';
import type { RepositoryEntry } from './assemble-state.js';
import { classifyPath, type RepositoryPath } from './layout.js';
import {
  caseCollisionIssue,
  checkFlagFiles,
  checkProjectFiles,
  checkReferences,
  duplicateIdIssue,
  ENV_INDEX,
  type FlagCheck,
  orphanIssues,
  type Slot,
  segmentKeys,
  servedSegments,
  serveKills,
} from './project-checks.js';
import { insertSorted, removeSorted, SortedGroups } from './sorted-keys.js';

/** One file of the project that changed: its new entry, or null when it was removed. */
export interface EntryChange {
  path: string;
  entry: RepositoryEntry | null;
}

/** What assembleState gives for the files of one project (given in tree order), without parse issues. */
export interface ProjectAssembly {
  /** Undefined when the project is left out (or has no file of the layout at all). */
  state: ProjectState | undefined;
  issues: ValidationIssue[];
}

interface FlagUnit {
  flag: Slot<FlagFile> | undefined;
  configs: Array<Slot<EnvironmentConfig> | undefined>;
  /** checkFlagFiles of the slots above, redone only when one of them changes. */
  check: FlagCheck | undefined;
}

interface Outcome {
  state: FlagState | undefined;
  issues: readonly ValidationIssue[];
}

const NO_ISSUES: readonly ValidationIssue[] = Object.freeze([]);

type LayoutPath = Exclude<RepositoryPath, { kind: 'other' }>;

/**
 * One project's assembly kept up to date as files change, so that a commit touching a few files re-checks
 * only the flags those files belong to, plus the flags that share a letter-case-folded key or an id with
 * them (the only checks that involve other flags within a project), instead of every flag of the project.
 * The result equals assembleState over the project's files in git tree order (the order of its issues
 * included; test/repository/project-assembler.test.ts compares the two on random changes).
 *
 * The indexes are mutable and belong to the caller that holds the assembler: it must apply the changes
 * from the one version it last built or applied to (StateLoader hands the assembler from one version of a
 * project to the next). What it returns is never changed afterwards: the flags Map of a result is copied
 * before an update, and FlagState objects are frozen and shared between the versions they did not change.
 *
 * Ids are checked within the project only: unique ids across projects are the caller's business.
 */
export class ProjectAssembler {
  private project: Slot<ProjectFile> | undefined;
  private readonly kills: Array<Slot<KillsFile> | undefined> = [undefined, undefined, undefined];
  private readonly segments = new Map<string, Slot<SegmentFile>>();
  /** The served segments, and the keys a condition may name (segmentKeys), rebuilt when a segment file changes. */
  private segmentsServed = new Map<string, SegmentFile>();
  private segmentNames = new Set<string>();
  private segmentsChanged = true;
  /** Every key with a flag file or a config. */
  private readonly units = new Map<string, FlagUnit>();
  /** Keys with a flag file, in the order assembleState checks them (String sort). */
  private readonly keys: string[] = [];
  /** Lower-cased key → keys with a flag file: all but the first collide with it. */
  private readonly byLower = new SortedGroups();
  /** Flag id → keys whose valid flag file claims it: the first that gets as far as claiming it keeps it. */
  private readonly byId = new SortedGroups();
  /** Keys with configs and no flag file. */
  private readonly orphans = new Set<string>();
  /** The issues assembleState reports for a key with a flag file, for the keys that have any. */
  private readonly issues = new Map<string, readonly ValidationIssue[]>();
  /** The served flags of the last result; replaced, never changed, once handed out. */
  private served = new Map<string, FlagState>();
  private result: ProjectAssembly = { state: undefined, issues: [] };
  /** Flag files added or removed so far: what checkReferences's `hasFlagFile` says changes with it. */
  private flagFiles = 0;
  /**
   * checkReferences's outcome for the served flags, segments and flag files it was given: a change that left
   * all three as they were (a kill, which changes only a kills file) has the same, without going through
   * every flag again (~1 MB of garbage and 1–2 ms a commit at 10,000 flags, on the kill's path).
   */
  private referencesChecked:
    | {
        served: Map<string, FlagState>;
        segments: Set<string>;
        flagFiles: number;
        flags: Map<string, FlagState>;
        issues: ValidationIssue[];
      }
    | undefined;

  private constructor(readonly slug: string) {}

  /**
   * Assembles a project from all its files; undefined when a file's parsed kind does not match its path
   * (a case for assembleState, which reports it: StateLoader never produces one, as it parses by path) or
   * a file belongs to another project.
   */
  static build(slug: string, entries: Iterable<RepositoryEntry>): { assembler: ProjectAssembler; result: ProjectAssembly } | undefined {
    const assembler = new ProjectAssembler(slug);
    const dirty = new Set<string>();
    for (const entry of entries) {
      const where = classifyPath(entry.path);
      if (where.kind === 'other') continue;
      // A new assembler is simply dropped, so there is no need to look at every file first as apply does.
      if (where.project !== slug || (entry.file && entry.file.kind !== where.kind)) return undefined;
      assembler.place(where, entry.path, entry, dirty, undefined);
    }
    assembler.reassess(dirty, new Set());
    assembler.result = assembler.assemble();
    return { assembler, result: assembler.result };
  }

  /**
   * The assembly after `changes` (each path at most once). Undefined, with nothing applied, when a file's
   * parsed kind does not match its path (see build): the caller assembles the project whole instead.
   */
  apply(changes: readonly EntryChange[]): ProjectAssembly | undefined {
    const located: Array<{ change: EntryChange; where: LayoutPath }> = [];
    for (const change of changes) {
      const where = classifyPath(change.path);
      if (where.kind === 'other') continue;
      const file = change.entry?.file;
      if (where.project !== this.slug || (file && file.kind !== where.kind)) return undefined;
      located.push({ change, where });
    }
    if (located.length === 0) return this.result;
    const dirty = new Set<string>();
    const touchedIds = new Set<string>();
    for (const { change, where } of located) this.place(where, change.path, change.entry, dirty, touchedIds);
    this.reassess(dirty, touchedIds);
    this.result = this.assemble();
    return this.result;
  }

  /** Puts a file in its slot (or empties it); `touchedIds` collects the flag ids it takes or gives up. */
  private place(
    where: LayoutPath,
    path: string,
    entry: RepositoryEntry | null,
    dirty: Set<string>,
    touchedIds: Set<string> | undefined,
  ): void {
    const slot = entry ? { path, value: entry.file?.value } : undefined;
    switch (where.kind) {
      case 'project':
        this.project = slot as Slot<ProjectFile> | undefined;
        break;
      case 'kills':
        this.kills[ENV_INDEX[where.environment]] = slot as Slot<KillsFile> | undefined;
        break;
      case 'segment':
        if (slot) this.segments.set(where.segment, slot as Slot<SegmentFile>);
        else this.segments.delete(where.segment);
        this.segmentsChanged = true;
        break;
      case 'flag':
        this.setFlag(where.flag, slot as Slot<FlagFile> | undefined, touchedIds);
        dirty.add(where.flag);
        break;
      case 'config':
        this.unit(where.flag).configs[ENV_INDEX[where.environment]] = slot as Slot<EnvironmentConfig> | undefined;
        dirty.add(where.flag);
        break;
    }
  }

  private unit(key: string): FlagUnit {
    let unit = this.units.get(key);
    if (!unit) {
      unit = { flag: undefined, configs: [undefined, undefined, undefined], check: undefined };
      this.units.set(key, unit);
    }
    return unit;
  }

  private setFlag(key: string, slot: Slot<FlagFile> | undefined, touchedIds: Set<string> | undefined): void {
    const unit = this.unit(key);
    const before = unit.flag;
    if (before?.value) {
      touchedIds?.add(before.value.id);
      this.byId.remove(before.value.id, key);
    }
    if (!before !== !slot) this.flagFiles++;
    if (!before && slot) {
      insertSorted(this.keys, key);
      this.byLower.add(key.toLowerCase(), key);
    } else if (before && !slot) {
      removeSorted(this.keys, key);
      this.byLower.remove(key.toLowerCase(), key);
    }
    if (slot?.value) {
      touchedIds?.add(slot.value.id);
      this.byId.add(slot.value.id, key);
    }
    unit.flag = slot;
  }

  /** Recomputes the outcome of every key the changed keys can affect, and the served flags with them. */
  private reassess(dirty: ReadonlySet<string>, touchedIds: ReadonlySet<string>): void {
    // Most of the project changed (a first build, an import): every key, in order, without the closure.
    const all = dirty.size * 2 > this.keys.length;
    const affected = new Set<string>(all ? [...this.keys, ...dirty] : dirty);
    if (!all) {
      // Which key wins a letter case, and so which keys may claim ids, changes only within the group.
      for (const key of dirty) for (const other of this.byLower.members(key.toLowerCase())) affected.add(other);
      const ids = new Set(touchedIds);
      for (const key of affected) {
        const id = this.units.get(key)?.flag?.value?.id;
        if (id !== undefined) ids.add(id);
      }
      for (const id of ids) for (const other of this.byId.members(id)) affected.add(other);
    }
    for (const key of dirty) {
      const unit = this.units.get(key)!;
      unit.check = unit.flag ? checkFlagFiles(this.slug, key, unit.flag, unit.configs) : undefined;
      if (unit.check?.state) Object.freeze(Object.freeze(unit.check.state).environments);
      const hasConfigs = unit.configs.some(Boolean);
      if (unit.flag || !hasConfigs) this.orphans.delete(key);
      else this.orphans.add(key);
      if (!unit.flag && !hasConfigs) this.units.delete(key);
    }

    const changed = new Map<string, FlagState | undefined>();
    let added = false;
    for (const key of affected) {
      const outcome = this.outcome(key);
      if (outcome && outcome.issues.length > 0) this.issues.set(key, outcome.issues);
      else this.issues.delete(key);
      const before = this.served.get(key);
      if (outcome?.state === before) continue;
      changed.set(key, outcome?.state);
      if (before === undefined) added = true;
    }
    if (changed.size === 0) return;
    const next = new Map<string, FlagState>();
    if (added) {
      // A flag served anew goes in its sorted place, which Map insertion cannot do: rebuild in key order.
      for (const key of this.keys) {
        const state = changed.has(key) ? changed.get(key) : this.served.get(key);
        if (state) next.set(key, state);
      }
    } else {
      // Replacing or deleting keeps the order of the others.
      for (const [key, state] of this.served) next.set(key, state);
      for (const [key, state] of changed) {
        if (state) next.set(key, state);
        else next.delete(key);
      }
    }
    this.served = next;
  }

  /** What assembleState says of one key in a served project; undefined when it has no flag file. */
  private outcome(key: string): Outcome | undefined {
    const unit = this.units.get(key);
    if (!unit?.flag) return undefined;
    const twin = this.byLower.first(key.toLowerCase())!;
    if (twin !== key) return { state: undefined, issues: [caseCollisionIssue(unit.flag.path, twin)] };
    const check = unit.check!;
    if (!check.meta) return { state: undefined, issues: NO_ISSUES };
    // The id goes to the first key in order that gets as far as claiming it: not one that lost its case.
    const winsCase = (other: string) => this.byLower.first(other.toLowerCase()) === other;
    const first = this.byId.first(check.meta.id)!;
    const holder = winsCase(first) ? first : this.byId.members(check.meta.id).find(winsCase)!;
    const idIssue =
      holder === key ? undefined : duplicateIdIssue('flag', unit.flag.path, check.meta.id, this.units.get(holder)!.flag!.path);
    const state = idIssue ? undefined : check.state;
    if (!check.keyIssue && !idIssue && check.configIssues.length === 0) return { state, issues: NO_ISSUES };
    const issues: ValidationIssue[] = [];
    if (check.keyIssue) issues.push(check.keyIssue);
    if (idIssue) issues.push(idIssue);
    issues.push(...check.configIssues);
    return { state, issues };
  }

  /** The project's state and issues from the indexes: touches only what has issues, plus the kills. */
  private assemble(): ProjectAssembly {
    if (!this.project && !this.kills.some(Boolean) && this.units.size === 0 && this.segments.size === 0)
      return { state: undefined, issues: [] };
    const issues: ValidationIssue[] = [];
    // Ids are unique within one project folder by construction: one project.yaml, so nothing to claim.
    const ok = checkProjectFiles(this.slug, this.project, this.kills, undefined, issues, this.segmentsInTreeOrder());
    for (const key of this.orphansInTreeOrder()) orphanIssues(this.slug, key, this.units.get(key)!.configs, issues);
    const project = this.project?.value;
    // A project left out still has its flags checked, so that one run lists every issue of the tree.
    for (const key of [...this.issues.keys()].sort()) issues.push(...this.issues.get(key)!);
    if (this.segmentsChanged) {
      this.segmentsServed = servedSegments(this.segments.values());
      this.segmentNames = segmentKeys(this.segments.values());
      this.segmentsChanged = false;
    }
    const hasFlagFile = (key: string) => this.units.get(key)?.flag !== undefined;
    // Checked on every change that can break or mend one (each flag's references are read once).
    let checked = this.referencesChecked;
    if (checked?.served !== this.served || checked.segments !== this.segmentNames || checked.flagFiles !== this.flagFiles) {
      const found: ValidationIssue[] = [];
      const flags = checkReferences(this.slug, this.served, hasFlagFile, this.segmentNames, found) as Map<string, FlagState>;
      checked = { served: this.served, segments: this.segmentNames, flagFiles: this.flagFiles, flags, issues: found };
      this.referencesChecked = checked;
    }
    issues.push(...checked.issues);
    const flags = checked.flags;
    const kills = serveKills(this.slug, this.kills, flags, hasFlagFile, issues);
    if (!ok || !project) return { state: undefined, issues };
    return { state: { project, flags, kills, segments: this.segmentsServed }, issues };
  }

  /** Segment slots in git tree order (their paths differ only in the file name). */
  private segmentsInTreeOrder(): Slot<SegmentFile>[] {
    return [...this.segments.values()].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  }

  /**
   * assembleState reports orphans in the order their keys first appear among the files, which for files
   * in tree order is that of each key's first config path, compared as bytes (git's tree order).
   */
  private orphansInTreeOrder(): string[] {
    if (this.orphans.size === 0) return [];
    const first = new Map<string, Buffer>();
    for (const key of this.orphans) {
      const paths = this.units.get(key)!.configs.flatMap((slot) => (slot ? [Buffer.from(slot.path)] : []));
      first.set(
        key,
        paths.reduce((a, b) => (Buffer.compare(a, b) <= 0 ? a : b)),
      );
    }
    return [...this.orphans].sort((a, b) => Buffer.compare(first.get(a)!, first.get(b)!));
  }
}
