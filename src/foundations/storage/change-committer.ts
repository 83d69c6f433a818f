import type { Actor } from '@flagops/core';
import { parseRepositoryFile } from '../repository/parse-file.js';
import { newIssues } from '../validation/issue.js';
import { oneLine } from '../validation/one-line.js';
import type { CommitSigner } from './git/commit-signature.js';
import { type CommitObject, EMPTY_TREE_OID, type GitIdentity, serializeCommit } from './git/git-objects.js';
import type { ObjectStore, WriteBatch } from './git/object-store.js';
import { type CommitMeta, formatCommitMessage } from './served/commit-message.js';
import { type FileChange, issuesError, writeChange } from './served/prepare-change.js';
import type { LoadedState, StateLoader } from './served/state-loader.js';

/** What a write function returns: the files to change, what the commit records, and the caller's result. */
export interface Change<T> {
  changes: FileChange[];
  meta: CommitMeta;
  result: T;
}

const COMMITTER = { name: 'flagops', email: 'flagops@localhost' };

/** The author of a commit is the actor; keys are recognisable by their prefix in the email. */
export function authorIdentity(actor: Actor, when: Date): GitIdentity {
  const email = actor.keyPrefix ? `${actor.keyPrefix}@keys.flagops` : (actor.email ?? `${actor.type}@users.flagops`);
  const name = identityText(actor.name ?? '') || actor.keyPrefix || actor.type;
  return {
    name,
    email: identityText(email) || `${actor.type}@users.flagops`,
    timestamp: Math.floor(when.getTime() / 1000),
    timezoneOffset: 0,
  };
}

/** Text a git identity can hold: one line, without the `<` and `>` that delimit its email. */
function identityText(text: string): string {
  return oneLine(text)
    .replace(/[<>\s]+/g, ' ')
    .trim();
}

/**
 * Turns a change into a commit: its files checked and written with the trees on their paths, the commit
 * authored by the actor and signed, and the new commit's state assembled, refused when it would add an issue.
 * Moves no ref: main is the write queue's, other branches are branches.ts's.
 */
export class ChangeCommitter {
  constructor(
    private readonly objects: ObjectStore,
    private readonly loader: StateLoader,
    private readonly signer: CommitSigner | null,
    private readonly options: { clock?: () => Date },
  ) {}

  /**
   * Writes the change's objects and commit into `batch`; null when the tree would not change. `written` hears
   * the commit's oid as soon as it is known, while its objects are flushed and before the new state is assembled.
   */
  async commitChange<T>(
    batch: WriteBatch,
    head: string | null,
    current: LoadedState,
    change: Change<T>,
    written?: (oid: string) => void,
  ): Promise<{ oid: string; next: LoadedState } | null> {
    const baseTree = head ? (await this.objects.readCommit(head)).tree : null;
    const { tree, known } = await writeChange(this.objects, batch, parseRepositoryFile, baseTree, change.changes);
    if (tree === (baseTree ?? EMPTY_TREE_OID)) return null;
    const commit = this.commitObject(tree, head ? [head] : [], change.meta);
    // Written before the new state is validated, so that the objects' fsyncs overlap the assembly; a refused
    // change leaves it unreferenced, as it does the change's blobs and trees (git gc prunes them).
    const oid = batch.write('commit', serializeCommit(commit));
    batch.flush();
    written?.(oid);
    const next = await this.loader.loadTree(tree, oid, head, known);
    const introduced = newIssues(current.issues, next.issues);
    if (introduced.length > 0) throw issuesError(introduced);
    this.objects.rememberCommit(oid, commit);
    return { oid, next };
  }

  /** The commit of `tree` on `parents` that `meta` describes, authored now by its actor, signed when we sign. */
  commitObject(tree: string, parents: string[], meta: CommitMeta): CommitObject {
    const author = authorIdentity(meta.actor, (this.options.clock ?? (() => new Date()))());
    const unsigned: CommitObject = {
      tree,
      parents,
      author,
      committer: { ...COMMITTER, timestamp: author.timestamp, timezoneOffset: 0 },
      message: formatCommitMessage(meta),
    };
    return this.signer ? this.signer.sign(unsigned) : unsigned;
  }
}
