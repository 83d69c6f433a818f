import type { CommitSigner } from '../git/commit-signature.js';
import type { CommitObject, GitIdentity } from '../git/git-objects.js';
import { Lru } from '../git/lru.js';
import type { ObjectStore } from '../git/object-store.js';
import { type FlagopsTrailers, type GitTrailer, parseCommitMessage, readFlagopsTrailers } from './commit-message.js';
import { deepFreeze } from './tree-reader.js';

/**
 * How many commits' parsed messages are kept: the readers of a new commit read it within milliseconds of each
 * other, so a few dozen cover a burst of commits. More would only be promoted to the old generation (~2 KB each).
 */
const RECENT_COMMITS = 64;

/** A commit as the audit trail reads it: its fields, its message's trailers and whether this service signed them. */
export interface CommitInfo {
  oid: string;
  parents: string[];
  tree: string;
  author: GitIdentity;
  committer: GitIdentity;
  message: string;
  summary: string;
  /** The body as it was written (commit-message.ts unfolds it). */
  body: string;
  /** The body's paragraphs as the message separates them, each as written (one may hold blank lines). */
  bodyParagraphs: string[];
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

/** The commit's fields and what its message says; `signer` decides whether its trailers are this service's. */
export function toCommitInfo(oid: string, commit: CommitObject, signer: CommitSigner | null = null): CommitInfo {
  const { summary, body, bodyParagraphs, trailers } = parseCommitMessage(commit.message);
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
    bodyParagraphs,
    trailers,
    flagops: signed ? claimed : null,
    unsignedFlagops: signed ? null : claimed,
  };
}

/** Reads commits with what their messages say (the commit graph itself is git/commit-graph.ts). */
export class History {
  /**
   * The newest commits read, frozen: each new commit is read by several readers (the audit index, flag health,
   * served versions, a held kill's record), and its message's parse and signature check cost more than the rest.
   */
  private readonly infos = new Lru<string, CommitInfo>(RECENT_COMMITS);

  constructor(
    private readonly objects: ObjectStore,
    private readonly signer: CommitSigner | null = null,
  ) {}

  async readCommit(oid: string): Promise<CommitInfo> {
    const known = this.infos.get(oid);
    if (known) return known;
    const info = deepFreeze(toCommitInfo(oid, await this.objects.readCommit(oid), this.signer));
    this.infos.set(oid, info);
    return info;
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
}
