import { type FlagopsTrailers, type GitTrailer, parseCommitMessage, readFlagopsTrailers } from './commit-message.js';
import type { CommitSigner } from './commit-signature.js';
import { type CommitObject, type GitIdentity, isTreeMode, type TreeEntry } from './git-objects.js';
import { Lru } from './lru.js';
import type { ObjectStore } from './object-store.js';

/** Reads of the commit graph for the audit trail and snapshot versions. */

export interface CommitInfo {
  oid: string;
  parents: string[];
  tree: string;
  author: GitIdentity;
  committer: GitIdentity;
  message: string;
  summary: string;
  body: string;
  /** Every git trailer of the message, in order. */
  trailers: GitTrailer[];
  /**
   * The `Flagops-*` trailers of a commit this service made, proven by its signature (commit-signature.ts);
   * null for every other commit, whatever its message says.
   */
  flagops: FlagopsTrailers | null;
  /**
   * What the `Flagops-*` trailers of a commit without a valid signature claim, or null. Believed only for
   * commits older than signing (CommitTrustStore); otherwise anyone could have written them.
   */
  unsignedFlagops: FlagopsTrailers | null;
}

export type ChangeType = 'added' | 'modified' | 'deleted';

export interface ChangedPath {
  path: string;
  change: ChangeType;
  /** Blob oid before (absent when added) and after (absent when deleted). */
  oldOid?: string;
  newOid?: string;
}

/** The commit's fields and what its message says; `signer` decides whether its trailers are this service's. */
export function toCommitInfo(oid: string, commit: CommitObject, signer: CommitSigner | null = null): CommitInfo {
  const { summary, body, trailers } = parseCommitMessage(commit.message);
  const claimed = readFlagopsTrailers(trailers);
  const signed = claimed !== null && signer?.verify(oid, commit) === true;
  return {
    oid,
    parents: [...commit.parents],
    tree: commit.tree,
    author: { ...commit.author },
    committer: { ...commit.committer },
    message: commit.message,
    summary,
    body,
    trailers,
    flagops: signed ? claimed : null,
    unsignedFlagops: signed ? null : claimed,
  };
}

export class History {
  private readonly heights = new Lru<string, number>(100_000);

  constructor(
    private readonly objects: ObjectStore,
    private readonly signer: CommitSigner | null = null,
  ) {}

  async readCommit(oid: string): Promise<CommitInfo> {
    return toCommitInfo(oid, await this.objects.readCommit(oid), this.signer);
  }

  /** Commits from `from` back along first parents, newest first, stopping before `until` or after `limit`. */
  async firstParentLog(options: { from: string | null; until?: string | null; limit?: number }): Promise<CommitInfo[]> {
    const out: CommitInfo[] = [];
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    let oid: string | undefined = options.from ?? undefined;
    while (oid !== undefined && oid !== options.until && out.length < limit) {
      const info = await this.readCommit(oid);
      out.push(info);
      oid = info.parents[0];
    }
    return out;
  }

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

  private async diffTrees(prefix: string, before: string | null, after: string | null, out: ChangedPath[]): Promise<void> {
    if (before === after) return;
    const [a, b] = await Promise.all([before ? this.objects.readTree(before) : [], after ? this.objects.readTree(after) : []]);
    const byName = (entries: readonly TreeEntry[]) => new Map(entries.map((e) => [e.name, e]));
    const left = byName(a);
    const right = byName(b);
    const pending: Promise<void>[] = [];
    for (const name of new Set([...left.keys(), ...right.keys()])) {
      const path = prefix === '' ? name : `${prefix}/${name}`;
      const l = left.get(name);
      const r = right.get(name);
      if (l && r && l.oid === r.oid && l.mode === r.mode) continue;
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
}
