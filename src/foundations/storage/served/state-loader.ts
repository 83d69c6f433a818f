import type { ProjectState, RepositoryState } from '@flagops/core';
import { assembleState, type RepositoryEntry } from '../../repository/assemble-state.js';
import { layout } from '../../repository/layout.js';
import { type EntryChange, ProjectAssembler, type ProjectAssembly } from '../../repository/project-assembler.js';
import { clashesOf, isLostClaim } from '../../repository/project-checks.js';
import type { ValidationIssue } from '../../validation/issue.js';
import { isTreeMode } from '../git/git-objects.js';
import { Lru } from '../git/lru.js';
import type { ObjectStore } from '../git/object-store.js';
import type { ClashIncumbents } from './clash-incumbents.js';
import type { ParseCache } from './parse-cache.js';
import { collectFiles, type DirNode, diffFiles, type FileNode, forEachFile, type ParseFile, TreeReader } from './tree-reader.js';

export interface LoadedState {
  commit: string | null;
  /** Shared with every other reader of this commit: read-only (parsed values are frozen). */
  state: RepositoryState;
  /** Every problem found: per file (YAML, schema) and across files. Only valid parts are in `state`. */
  issues: ValidationIssue[];
}

/** One project folder assembled on its own. */
interface ProjectPart {
  dir: DirNode;
  state: ProjectState | undefined;
  /** The parse issues of its files, in tree order, then the assembly's. */
  issues: ValidationIssue[];
  /** The ids it claims (ids are unique across projects); computed when there is more than one project. */
  claims?: ReadonlySet<string>;
  /** Held by the last assembled version of each project only: the next version is applied to it. */
  assembler?: ProjectAssembler;
}

const NO_ISSUES: readonly ValidationIssue[] = Object.freeze([]);

const SAVE_AFTER_PARSES = 1000;

/**
 * Turns commits into typed state. Each read starts from the `projects/` directory read last, so only the
 * subtrees whose tree oid changed are walked and only the blobs whose oid changed are parsed. Projects are
 * assembled one folder at a time and kept by tree, so a commit that touched one project reuses the
 * ProjectState of every other; the changed project is brought up to date from its last assembled version
 * by the files that differ (ProjectAssembler), so a one-file commit re-checks one flag, not the project.
 * Only `projects/` is read: nothing else in the repository is a flag file.
 */
export class StateLoader {
  private readonly byCommit = new Lru<string, Promise<LoadedState>>(8);
  private readonly parts = new WeakMap<DirNode, ProjectPart>();
  /** Per project slug, the part holding its assembler. */
  private readonly latest = new Map<string, ProjectPart>();
  private readonly fileIssues = new WeakMap<DirNode, readonly ValidationIssue[]>();
  /** The parts of the last assembly without two projects claiming one id, and each id's claimant. */
  private claimed: { parts: ReadonlySet<ProjectPart>; owners: Map<string, ProjectPart> } | undefined;
  private readonly reader: TreeReader;
  private base: DirNode | undefined;
  private readonly cache: ParseCache | undefined;
  private readonly saveAfterParses: number;
  private readonly incumbents: ClashIncumbents | undefined;
  private cacheLoading: Promise<void> | undefined;

  /**
   * `cache` holds what `parse` gave on an earlier run: only for the parser its fingerprint covers. A read
   * that parsed `saveAfterParses` files (default 1,000: a cold start, a big push) saves it. `incumbents`
   * decides which of flags clashing over an id or a key keeps it from history; without it, the first by key.
   */
  constructor(
    private readonly objects: ObjectStore,
    parse: ParseFile,
    options: { cache?: ParseCache; saveAfterParses?: number; incumbents?: ClashIncumbents } = {},
  ) {
    this.reader = new TreeReader(objects, parse);
    this.cache = options.cache;
    this.saveAfterParses = options.saveAfterParses ?? SAVE_AFTER_PARSES;
    this.incumbents = options.incumbents;
  }

  load(commit: string | null): Promise<LoadedState> {
    if (commit === null) return Promise.resolve(emptyState());
    let loading = this.byCommit.get(commit);
    if (!loading) {
      loading = this.objects.readCommit(commit).then(({ tree, parents }) => this.loadTree(tree, commit, parents[0] ?? null));
      this.byCommit.set(commit, loading);
      // A failed read (a missing object) must not stick: the next call tries again.
      const failed = loading;
      failed.catch(() => {
        if (this.byCommit.peek(commit) === failed) this.byCommit.delete(commit);
      });
    }
    return loading;
  }

  /**
   * The state of a root tree that `commit`, whose first parent is `parent`, will hold. `known` holds files the
   * caller has just parsed (what it is about to commit), so they are not read back.
   */
  async loadTree(rootTree: string, commit: string, parent: string | null, known?: ReadonlyMap<string, FileNode>): Promise<LoadedState> {
    const projects = (await this.objects.readTree(rootTree)).find((e) => e.name === layout.projectsDir && isTreeMode(e.mode));
    if (!projects) return { ...emptyState(), commit, state: { commit, projects: new Map() } };
    // The saved directory stands for the one read last: only what has the same oid is taken from it.
    // Every read waits for it, so that reads at startup do not each parse everything.
    this.cacheLoading ??= this.cache?.load().then((dir) => {
      if (dir?.path === layout.projectsDir) this.base ??= dir;
    });
    await this.cacheLoading;
    const parsedBefore = this.reader.parsed;
    const dir = await this.reader.readDir(layout.projectsDir, projects.oid, this.base, known);
    this.base = dir;
    if (this.reader.parsed - parsedBefore >= this.saveAfterParses) this.cache?.save(dir);
    const loaded = this.assemble(dir, commit);
    return this.keepIncumbents(dir, loaded, parent);
  }

  /**
   * The state again, assembled whole, when flags clash over an id or a key (or projects over an id) and the
   * first by key is not the one that held it at `parent`: the one that was there keeps serving, and the
   * newcomer is the one reported.
   */
  private async keepIncumbents(dir: DirNode, loaded: LoadedState, parent: string | null): Promise<LoadedState> {
    if (!this.incumbents) return loaded;
    const clashes = clashesOf(loaded.issues);
    if (clashes.length === 0) return loaded;
    const incumbents = await this.incumbents.at(parent, clashes);
    // Each clash issue is on a file that lost: none on an incumbent, and the default decided as history does.
    if (!loaded.issues.some((issue) => issue.file !== undefined && incumbents.has(issue.file) && isLostClaim(issue))) return loaded;
    return this.assembleWhole(dir, loaded.commit!, incumbents);
  }

  /** Waits for a parse cache save in flight. */
  close(): Promise<void> {
    return this.cache?.close() ?? Promise.resolve();
  }

  /** The state of a commit if it is read already (or being read), without reading it. */
  peek(commit: string): Promise<LoadedState> | undefined {
    return this.byCommit.peek(commit);
  }

  /** Records the state of a commit we just wrote, so reading it back costs nothing. */
  remember(loaded: LoadedState): void {
    if (loaded.commit !== null) this.byCommit.set(loaded.commit, Promise.resolve(loaded));
  }

  private assemble(dir: DirNode, commit: string): LoadedState {
    // Files directly in projects/ belong to no project; the parser reports the misplaced ones.
    const issues: ValidationIssue[] = [...dir.files.values()].flatMap((file) => file.issues);
    const slugs = [...dir.dirs.keys()].sort();
    const parts = slugs.map((slug) => this.projectPart(slug, dir.dirs.get(slug)!));
    // A project gone from the tree read last gives up its assembler (it would only be rebuilt if it came back).
    for (const slug of this.latest.keys()) if (!dir.dirs.has(slug)) this.latest.delete(slug);
    // Two projects claiming one id: which keeps it is decided across projects, so assemble them together.
    if (parts.length > 1 && this.claimsCollide(parts)) return this.assembleWhole(dir, commit);
    const projects = new Map<string, ProjectState>();
    parts.forEach((part, i) => {
      issues.push(...part.issues);
      if (part.state) projects.set(slugs[i], part.state);
    });
    return { commit, state: { commit, projects }, issues };
  }

  private projectPart(slug: string, dir: DirNode): ProjectPart {
    const cached = this.parts.get(dir);
    if (cached) return cached;
    let assembler: ProjectAssembler | undefined;
    let assembled: ProjectAssembly | undefined;
    const previous = this.latest.get(slug);
    if (previous?.assembler) {
      // Taken before it is used: should applying throw, no part is left holding a half-updated assembler.
      assembler = previous.assembler;
      previous.assembler = undefined;
      const changes: EntryChange[] = [];
      diffFiles(previous.dir, dir, changes);
      assembled = assembler.apply(changes);
    }
    if (!assembled) {
      const files: RepositoryEntry[] = [];
      forEachFile(dir, (file) => files.push(file.entry));
      const built = ProjectAssembler.build(slug, files);
      assembler = built?.assembler;
      // A parsed kind that does not match its path, which only assembleState reports.
      assembled = built?.result ?? wholeProject(slug, files);
    }
    const part: ProjectPart = { dir, state: assembled.state, issues: [...this.issuesBelow(dir), ...assembled.issues], assembler };
    this.parts.set(dir, part);
    if (assembler) this.latest.set(slug, part);
    return part;
  }

  /** The parse issues of every file below `dir`, in tree order; kept per directory, as directories are shared. */
  private issuesBelow(dir: DirNode): readonly ValidationIssue[] {
    let issues = this.fileIssues.get(dir);
    if (!issues) {
      const found: ValidationIssue[] = [];
      // A directory known to have no file with issues (a 10,000-flag environment, nearly always) is not walked.
      if (dir.filesWithIssues !== 0) for (const file of dir.files.values()) if (file.issues.length > 0) found.push(...file.issues);
      for (const sub of dir.dirs.values()) found.push(...this.issuesBelow(sub));
      issues = found.length > 0 ? found : NO_ISSUES;
      this.fileIssues.set(dir, issues);
    }
    return issues;
  }

  /**
   * Whether two parts claim one id. Checked against the last set of parts found without a collision, so a
   * commit that changed one project looks at that project's ids only, not at every id of the organisation.
   */
  private claimsCollide(parts: readonly ProjectPart[]): boolean {
    const previous = this.claimed;
    // Left unset if a collision is found: the owners map is then half updated, and the next check starts over.
    this.claimed = undefined;
    let owners = new Map<string, ProjectPart>();
    let added = parts;
    if (previous) {
      const now = new Set(parts);
      for (const part of previous.parts) {
        if (now.has(part)) continue;
        for (const id of claimsOf(part)) if (previous.owners.get(id) === part) previous.owners.delete(id);
      }
      owners = previous.owners;
      added = parts.filter((part) => !previous.parts.has(part));
    }
    for (const part of added) {
      for (const id of claimsOf(part)) {
        if (owners.has(id)) return true;
        owners.set(id, part);
      }
    }
    this.claimed = { parts: new Set(parts), owners };
    return false;
  }

  private assembleWhole(dir: DirNode, commit: string, incumbents?: ReadonlySet<string>): LoadedState {
    const files: RepositoryEntry[] = [];
    const issues: ValidationIssue[] = [];
    collectFiles(dir, files, issues);
    const assembled = assembleState(files, commit, incumbents);
    issues.push(...assembled.issues);
    return { commit, state: assembled.state, issues };
  }
}

/** The ids a project's files claim, valid or not: duplicates inside one project are its own business. */
function claimsOf(part: ProjectPart): ReadonlySet<string> {
  if (!part.claims) {
    const ids = new Set<string>();
    forEachFile(part.dir, ({ entry: { file } }) => {
      if (file?.kind === 'project' || file?.kind === 'flag') ids.add(`${file.kind}:${file.value.id}`);
    });
    part.claims = ids;
  }
  return part.claims;
}

function wholeProject(slug: string, files: RepositoryEntry[]): ProjectAssembly {
  const { state, issues } = assembleState(files, null);
  return { state: state.projects.get(slug), issues };
}

function emptyState(): LoadedState {
  const { state, issues } = assembleState([], null);
  return { commit: null, state, issues };
}
