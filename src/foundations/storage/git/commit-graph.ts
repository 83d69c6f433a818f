import { loopTurn } from '../../process/loop-turns.js';
import { isTreeMode } from './git-objects.js';
import { Lru } from './lru.js';
import type { ObjectStore } from './object-store.js';
import { changedTreeEntries, TreeBytes } from './tree-bytes.js';

/** Room for a commit's changed trees twice over, at 10,000 flags (a 0.4 MB directory). */
const TREE_BYTES_KEPT = 4 * 1024 * 1024;

export type ChangeType = 'added' | 'modified' | 'deleted';

export interface ChangedPath {
  path: string;
  change: ChangeType;
  /** Blob oid before (absent when added) and after (absent when deleted). */
  oldOid?: string;
  newOid?: string;
}

/** Reads of the commit graph that need nothing but git: heights, paths in a commit's tree, what a commit changed. */
export class CommitGraph {
  private readonly heights = new Lru<string, number>(100_000);
  /**
   * Tree objects' bytes changedPaths read lately, by oid: walking history a commit at a time, each commit's
   * trees are the next one's parent trees, read from a pack (delta chains) once instead of twice.
   */
  // Weighed by what they keep: a small one read from a pack is a slice of a 16 KiB inflate chunk or an 8 KiB pool.
  private readonly treeBytes = new Lru<string, TreeBytes>(TREE_BYTES_KEPT, (bytes) => bytes.retainedBytes);

  constructor(private readonly objects: ObjectStore) {}

  /** Commits in the first-parent chain ending at `oid`, itself included: 1 for a root commit. */
  async height(oid: string): Promise<number> {
    const chain: string[] = [];
    let cursor: string | undefined = oid;
    let base = 0;
    while (cursor !== undefined) {
      const known = this.heights.get(cursor);
      if (known !== undefined) {
        base = known;
        break;
      }
      chain.push(cursor);
      cursor = (await this.objects.readCommit(cursor)).parents[0];
    }
    for (let i = chain.length - 1; i >= 0; i--) this.heights.set(chain[i], ++base);
    return base;
  }

  /**
   * Whether `oid` is in the first-parent chain ending at `tip`; false too when this repository lacks `oid`
   * (another instance's commit it never fetched). Walks from `tip` down to `oid`'s height only.
   */
  async inFirstParentChain(tip: string, oid: string): Promise<boolean> {
    let height: number;
    try {
      height = await this.height(oid);
    } catch {
      return false;
    }
    let cursor: string | undefined = tip;
    while (cursor !== undefined && cursor !== oid && (await this.height(cursor)) > height) {
      cursor = (await this.objects.readCommit(cursor)).parents[0];
    }
    return cursor === oid;
  }

  /** The oid of the tree or blob at `path` in a commit (`''` is the root tree), or null when absent. */
  async treeOid(commit: string, path: string): Promise<string | null> {
    let oid = (await this.objects.readCommit(commit)).tree;
    const parts = path.split('/').filter(Boolean);
    for (let i = 0; i < parts.length; i++) {
      const entry = (await this.objects.readTree(oid)).find((e) => e.name === parts[i]);
      // A file in the middle of the path means the path cannot exist.
      if (!entry || (i < parts.length - 1 && !isTreeMode(entry.mode))) return null;
      oid = entry.oid;
    }
    return oid;
  }

  /** Files that differ between a commit and its first parent (all files, for a root commit), by path. */
  async changedPaths(oid: string): Promise<ChangedPath[]> {
    const commit = await this.objects.readCommit(oid);
    const parent = commit.parents[0] ? (await this.objects.readCommit(commit.parents[0])).tree : null;
    const out: ChangedPath[] = [];
    await this.diffTrees('', parent, commit.tree, out);
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /**
   * Only the entries whose bytes differ are parsed (changedTreeEntries): following main at 10,000 flags, a
   * commit that changes one config no longer parses the environment's 10,001-entry tree twice (~4 ms of CPU,
   * shared with the kills and evaluations of this process).
   */
  private async diffTrees(prefix: string, before: string | null, after: string | null, out: ChangedPath[]): Promise<void> {
    if (before === after) return;
    // A commit of thousands of files (an import) is read a directory at a time, with turns of the event loop between.
    await loopTurn();
    const [a, b] = await Promise.all([this.readTreeBytes(before), this.readTreeBytes(after)]);
    const pending: Promise<void>[] = [];
    for (const { name, before: l, after: r } of changedTreeEntries(a, b)) {
      const path = prefix === '' ? name : `${prefix}/${name}`;
      const lTree = l !== undefined && isTreeMode(l.mode);
      const rTree = r !== undefined && isTreeMode(r.mode);
      if (lTree || rTree) pending.push(this.diffTrees(path, lTree ? l.oid : null, rTree ? r.oid : null, out));
      const lFile = l !== undefined && !lTree ? l : undefined;
      const rFile = r !== undefined && !rTree ? r : undefined;
      if (lFile && rFile) out.push({ path, change: 'modified', oldOid: lFile.oid, newOid: rFile.oid });
      else if (lFile) out.push({ path, change: 'deleted', oldOid: lFile.oid });
      else if (rFile) out.push({ path, change: 'added', newOid: rFile.oid });
    }
    await Promise.all(pending);
  }

  private async readTreeBytes(oid: string | null): Promise<TreeBytes> {
    if (oid === null) return TreeBytes.EMPTY;
    let bytes = this.treeBytes.get(oid);
    if (!bytes) {
      bytes = await this.objects.readTreeBytes(oid);
      this.treeBytes.set(oid, bytes);
    }
    return bytes;
  }
}
