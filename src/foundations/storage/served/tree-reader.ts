import { loopTurn } from '../../process/loop-turns.js';
import type { RepositoryEntry } from '../../repository/assemble-state.js';
import type { ParsedFile } from '../../repository/parsed-file.js';
import type { EntryChange } from '../../repository/project-assembler.js';
import type { ValidationIssue } from '../../validation/issue.js';
import { isTreeMode, type TreeEntry } from '../git/git-objects.js';
import type { ObjectStore } from '../git/object-store.js';
import { changedTreeSpans } from '../git/tree-bytes.js';
import { PatchedMap } from './patched-map.js';

/** One file of a commit, parsed. `entry` is what assembleState takes (its `file` absent when invalid). */
export interface FileNode {
  oid: string;
  entry: RepositoryEntry;
  issues: readonly ValidationIssue[];
}

/** A directory of a commit with everything below it parsed. Immutable: shared between commits. */
export interface DirNode {
  oid: string;
  path: string;
  dirs: ReadonlyMap<string, DirNode>;
  files: ReadonlyMap<string, FileNode>;
  /** How many of its own files (not those below) have issues; absent when not counted. */
  filesWithIssues?: number;
  /** Its files that differ from those of the version it was read against (by tree oid, not by reference). */
  delta?: FilesDelta;
}

/** What readDir noticed anyway while reusing the unchanged files, so diffFiles need not compare them again. */
interface FilesDelta {
  fromOid: string;
  /** Added or changed. */
  changed: readonly FileNode[];
  removed: readonly string[];
}

export type ParseFile = (path: string, text: string) => { file?: ParsedFile; issues: ValidationIssue[] };

const YAML_FILE = /\.ya?ml$/;

/** Directories with at least this many files are read against their previous version by the bytes that changed. */
const PATCH_FROM_FILES = 256;

/**
 * Reads a directory of a commit into parsed files. Given the same directory as read from an earlier commit
 * (`previous`), it reuses every subtree whose tree oid is unchanged and every file whose blob oid is
 * unchanged, so a new head that changed one file costs one blob read plus the trees on its path.
 */
export class TreeReader {
  /** Files read from their blob and parsed, ever: what a read cost. */
  parsed = 0;

  constructor(
    private readonly objects: ObjectStore,
    private readonly parse: ParseFile,
  ) {}

  async readDir(path: string, oid: string, previous: DirNode | undefined, known?: ReadonlyMap<string, FileNode>): Promise<DirNode> {
    if (previous?.oid === oid) return previous;
    if (previous && previous.files.size >= PATCH_FROM_FILES) {
      const patched = await this.patchDir(path, oid, previous, known);
      if (patched) return patched;
    }
    const entries = await this.objects.readTree(oid);
    const dirs: Array<Promise<[string, DirNode]>> = [];
    const files = new Map<string, FileNode | undefined>();
    const toRead: Array<{ name: string; path: string; oid: string }> = [];
    const changed: string[] = [];
    // Files of `previous` still here, changed or not: when fewer than it had, some were removed.
    let kept = 0;
    for (const entry of entries) {
      const name = entry.name;
      if (isTreeMode(entry.mode)) {
        const dir = this.readDir(`${path}/${name}`, entry.oid, previous?.dirs.get(name), known).then((read): [string, DirNode] => [
          name,
          read,
        ]);
        // A failure (a corrupt tree) surfaces from Promise.all below; until then it is not unhandled.
        dir.catch(() => {});
        dirs.push(dir);
        continue;
      }
      // Symlinks (120000) and submodules (160000) are not flag files.
      if (entry.mode !== '100644' && entry.mode !== '100755') continue;
      // The common case, an unchanged file in a changed directory, builds no path string.
      const reused = previous?.files.get(name);
      if (reused) kept++;
      if (reused?.oid === entry.oid) {
        files.set(name, reused);
        continue;
      }
      if (previous) changed.push(name);
      const childPath = `${path}/${name}`;
      const hint = known?.get(childPath);
      if (hint?.oid === entry.oid) files.set(name, hint);
      else {
        // Reserve the slot so files stay in tree order, and with them the order of issues.
        files.set(name, undefined);
        toRead.push({ name, path: childPath, oid: entry.oid });
      }
    }
    for (const file of toRead) files.set(file.name, await this.readFile(file.path, file.oid));
    const dirEntries = await Promise.all(dirs);
    let filesWithIssues = 0;
    for (const file of files.values()) if (file!.issues.length > 0) filesWithIssues++;
    const dir: DirNode = { oid, path, dirs: new Map(dirEntries), files: files as Map<string, FileNode>, filesWithIssues };
    if (previous) {
      const removed =
        kept < previous.files.size ? [...previous.files].flatMap(([name, file]) => (files.has(name) ? [] : [file.entry.path])) : [];
      dir.delta = { fromOid: previous.oid, changed: changed.map((name) => files.get(name)!), removed };
    }
    return dir;
  }

  /**
   * `previous` changed by the entries whose bytes differ between the two tree objects (changedTreeSpans), for a
   * big directory in which a commit changed a file or two: its 10,000 unchanged entries are neither walked nor
   * copied (PatchedMap). Undefined when an entry was added, changed kind or is not a file or directory: the
   * files would then not stay in tree order, and readDir reads the directory entry by entry.
   */
  private async patchDir(
    path: string,
    oid: string,
    previous: DirNode,
    known: ReadonlyMap<string, FileNode> | undefined,
  ): Promise<DirNode | undefined> {
    const [before, after] = await Promise.all([this.objects.readTreeBytes(previous.oid), this.objects.readTreeBytes(oid)]);
    const spans = changedTreeSpans(before, after);
    const plain = (entry: TreeEntry) => isTreeMode(entry.mode) || entry.mode === '100644' || entry.mode === '100755';
    const old = new Map(spans.before.map((entry) => [entry.name, entry]));
    for (const entry of spans.after) {
      const was = old.get(entry.name);
      if (!was || !plain(entry) || !plain(was) || isTreeMode(was.mode) !== isTreeMode(entry.mode)) return undefined;
    }
    if (!spans.before.every(plain) || previous.filesWithIssues === undefined) return undefined;
    const replaced = new Map<string, FileNode>();
    const gone: string[] = [];
    const dirs = new Map(previous.dirs);
    const changed: FileNode[] = [];
    const removed: string[] = [];
    let filesWithIssues = previous.filesWithIssues;
    const now = new Set(spans.after.map((entry) => entry.name));
    for (const entry of spans.before) {
      if (now.has(entry.name)) continue;
      if (isTreeMode(entry.mode)) dirs.delete(entry.name);
      const file = isTreeMode(entry.mode) ? undefined : previous.files.get(entry.name);
      if (file) {
        gone.push(entry.name);
        removed.push(file.entry.path);
        if (file.issues.length > 0) filesWithIssues--;
      }
    }
    for (const entry of spans.after) {
      const was = old.get(entry.name)!;
      if (was.oid === entry.oid && was.mode === entry.mode) continue;
      const childPath = `${path}/${entry.name}`;
      if (isTreeMode(entry.mode)) {
        dirs.set(entry.name, await this.readDir(childPath, entry.oid, previous.dirs.get(entry.name), known));
        continue;
      }
      const hint = known?.get(childPath);
      const file = hint?.oid === entry.oid ? hint : await this.readFile(childPath, entry.oid);
      if (previous.files.get(entry.name)!.issues.length > 0) filesWithIssues--;
      if (file.issues.length > 0) filesWithIssues++;
      replaced.set(entry.name, file);
      changed.push(file);
    }
    const files = PatchedMap.of(previous.files, replaced, gone);
    return { oid, path, dirs, files, filesWithIssues, delta: { fromOid: previous.oid, changed, removed } };
  }

  async readFile(path: string, oid: string): Promise<FileNode> {
    // Only YAML can be a repository file; the parser says nothing about other files, so skip reading them.
    if (!YAML_FILE.test(path)) return { oid, entry: { path }, issues: [] };
    // Reads and parses run synchronously; every few milliseconds they let the event loop serve others.
    await loopTurn();
    const object = await this.objects.read(oid);
    if (object.type !== 'blob') throw new Error(`git object ${oid} at ${path} is a ${object.type}, not a blob`);
    this.parsed++;
    return parsedFileNode(path, oid, this.parse(path, object.content.toString('utf8')));
  }
}

/**
 * Parsed values are shared by every commit that holds the same blob, and by every caller of readState,
 * so they are frozen: an accidental in-place edit throws instead of corrupting other readers' state.
 */
export function parsedFileNode(path: string, oid: string, parsed: { file?: ParsedFile; issues: ValidationIssue[] }): FileNode {
  const file = parsed.file && parsed.issues.length === 0 ? deepFreeze(parsed.file) : undefined;
  return { oid, entry: file ? { path, file } : { path }, issues: parsed.issues };
}

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Calls `fn` for every file below a directory, in tree order (a directory's files, then its directories). */
export function forEachFile(dir: DirNode, fn: (file: FileNode) => void): void {
  for (const file of dir.files.values()) fn(file);
  for (const sub of dir.dirs.values()) forEachFile(sub, fn);
}

/**
 * The files that differ between two versions of a directory: added or changed with their new entry, removed
 * with null. Subtrees with the same oid are skipped, so this costs the size of the directories that changed.
 */
export function diffFiles(before: DirNode | undefined, after: DirNode | undefined, out: EntryChange[]): void {
  if (before?.oid === after?.oid) return;
  if (before && after?.delta?.fromOid === before.oid) {
    for (const file of after.delta.changed) out.push({ path: file.entry.path, entry: file.entry });
    for (const path of after.delta.removed) out.push({ path, entry: null });
  } else {
    if (after) {
      for (const [name, file] of after.files) {
        if (before?.files.get(name)?.oid !== file.oid) out.push({ path: file.entry.path, entry: file.entry });
      }
    }
    if (before) for (const [name, file] of before.files) if (!after?.files.has(name)) out.push({ path: file.entry.path, entry: null });
  }
  if (after) for (const [name, sub] of after.dirs) diffFiles(before?.dirs.get(name), sub, out);
  if (before) for (const [name, sub] of before.dirs) if (!after?.dirs.has(name)) diffFiles(sub, undefined, out);
}

/** Every file entry and every issue below a directory. */
export function collectFiles(dir: DirNode, files: RepositoryEntry[], issues: ValidationIssue[]): void {
  for (const file of dir.files.values()) {
    files.push(file.entry);
    if (file.issues.length > 0) issues.push(...file.issues);
  }
  for (const sub of dir.dirs.values()) collectFiles(sub, files, issues);
}
