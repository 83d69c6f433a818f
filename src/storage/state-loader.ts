import type { ProjectState, RepositoryState } from '../model/types.js';
import { assembleState, type RepositoryEntry } from '../repository/assemble-state.js';
import { layout } from '../repository/layout.js';
import type { ValidationIssue } from '../validation/issue.js';
import { isTreeMode } from './git-objects.js';
import { Lru } from './lru.js';
import type { ObjectStore } from './object-store.js';
import { collectFiles, type DirNode, type FileNode, type ParseFile, TreeReader } from './tree-reader.js';

export interface LoadedState {
  commit: string | null;
  /** Shared with every other reader of this commit: read-only (parsed values are frozen). */
  state: RepositoryState;
  /** Every problem found: per file (YAML, schema) and across files. Only valid parts are in `state`. */
  issues: ValidationIssue[];
}

/** One project folder assembled on its own, with the ids it claims (ids are unique across projects). */
interface ProjectPart {
  state: ProjectState | undefined;
  issues: ValidationIssue[];
  ids: ReadonlySet<string>;
}

/**
 * Turns commits into typed state. Each read starts from the `projects/` directory read last, so only the
 * subtrees whose tree oid changed are walked and only the blobs whose oid changed are parsed. Projects are
 * assembled one folder at a time and kept by tree, so a commit that touched one project reuses the
 * ProjectState of every other. Only `projects/` is read: nothing else in the repository is a flag file.
 */
export class StateLoader {
  private readonly byCommit = new Lru<string, Promise<LoadedState>>(8);
  private readonly parts = new WeakMap<DirNode, ProjectPart>();
  private readonly reader: TreeReader;
  private base: DirNode | undefined;

  constructor(
    private readonly objects: ObjectStore,
    parse: ParseFile,
  ) {
    this.reader = new TreeReader(objects, parse);
  }

  load(commit: string | null): Promise<LoadedState> {
    if (commit === null) return Promise.resolve(emptyState());
    let loading = this.byCommit.get(commit);
    if (!loading) {
      loading = this.objects.readCommit(commit).then(({ tree }) => this.loadTree(tree, commit));
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
   * The state of a root tree that `commit` will hold. `known` holds files the caller has just parsed
   * (what it is about to commit), so they are not read back.
   */
  async loadTree(rootTree: string, commit: string, known?: ReadonlyMap<string, FileNode>): Promise<LoadedState> {
    const projects = (await this.objects.readTree(rootTree)).find((e) => e.name === layout.projectsDir && isTreeMode(e.mode));
    if (!projects) return { ...emptyState(), commit, state: { commit, projects: new Map() } };
    const dir = await this.reader.readDir(layout.projectsDir, projects.oid, this.base, known);
    this.base = dir;
    return this.assemble(dir, commit);
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
    // Two projects claiming one id: which keeps it is decided across projects, so assemble them together.
    if (parts.length > 1 && claimsCollide(parts)) return this.assembleWhole(dir, commit);
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
    const files: RepositoryEntry[] = [];
    const issues: ValidationIssue[] = [];
    collectFiles(dir, files, issues);
    const assembled = assembleState(files, null);
    issues.push(...assembled.issues);
    // Duplicates inside one project are that project's own business (assembleState reports them).
    const ids = new Set<string>();
    for (const { file } of files) {
      if (file?.kind === 'project' || file?.kind === 'flag') ids.add(`${file.kind}:${file.value.id}`);
    }
    const part = { state: assembled.state.projects.get(slug), issues, ids };
    this.parts.set(dir, part);
    return part;
  }

  private assembleWhole(dir: DirNode, commit: string): LoadedState {
    const files: RepositoryEntry[] = [];
    const issues: ValidationIssue[] = [];
    collectFiles(dir, files, issues);
    const assembled = assembleState(files, commit);
    issues.push(...assembled.issues);
    return { commit, state: assembled.state, issues };
  }
}

function claimsCollide(parts: readonly ProjectPart[]): boolean {
  const claimed = new Set<string>();
  for (const part of parts) {
    for (const id of part.ids) {
      if (claimed.has(id)) return true;
      claimed.add(id);
    }
  }
  return false;
}

function emptyState(): LoadedState {
  const { state, issues } = assembleState([], null);
  return { commit: null, state, issues };
}
