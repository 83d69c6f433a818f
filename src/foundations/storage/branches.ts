import { WriteConflictError } from '../errors/kinds.js';
import type { ChangeCommitter } from './change-committer.js';
import { serializeCommit } from './git/git-objects.js';
import type { ObjectStore } from './git/object-store.js';
import { compareAndSwapRef, listRefs, MAIN_REF, RefLockedError, readRef } from './git/refs.js';
import type { CommitMeta } from './served/commit-message.js';
import { LOCKED_MESSAGE, type UpdateResult, type WriteFn, type WriteQueue } from './write-queue.js';

/** What branches take of the repository's open options (OpenOptions in flag-repository.ts says what each does). */
export interface BranchOptions {
  publishBranch?: (gitdir: string, ref: string, commit: string) => Promise<void>;
  lockTimeoutMs?: number;
  durable?: boolean;
}

/**
 * Branches other than main (proposals): commits made on them in the write queue, so that they never race
 * an update of main, and moved by compare-and-swap, published first in remote mode.
 */
export class Branches {
  constructor(
    private readonly gitdir: string,
    private readonly objects: ObjectStore,
    private readonly queue: WriteQueue,
    private readonly committer: ChangeCommitter,
    private readonly options: BranchOptions,
  ) {}

  /** FlagRepository.commitOnNewBranch. */
  commitOnNewBranch<T>(ref: string, fn: WriteFn<T>): Promise<UpdateResult<T>> {
    assertBranchRef(ref);
    const deadline = Date.now() + (this.options.lockTimeoutMs ?? 5_000);
    return this.queue.serializedUntil(deadline, async () => {
      const { head, current, change } = await this.queue.planOnHead(fn);
      const batch = this.objects.batch();
      try {
        const commit = await this.committer.commitChange(batch, head, current, change);
        if (!commit) return { commit: head, parent: head, committed: false, result: change.result, state: current.state };
        await batch.done();
        await this.moveBranch(ref, null, commit.oid, deadline);
        return { commit: commit.oid, parent: head, committed: true, result: change.result, state: commit.next.state };
      } finally {
        await batch.settled();
      }
    });
  }

  /** FlagRepository.recordOnBranch. */
  recordOnBranch(ref: string, expected: string, meta: CommitMeta, precondition?: () => Promise<void>): Promise<string> {
    assertBranchRef(ref);
    const deadline = Date.now() + (this.options.lockTimeoutMs ?? 5_000);
    return this.queue.serializedUntil(deadline, async () => {
      await precondition?.();
      const tree = (await this.objects.readCommit(expected)).tree;
      const commit = this.committer.commitObject(tree, [expected], meta);
      const batch = this.objects.batch();
      try {
        const oid = batch.write('commit', serializeCommit(commit));
        await batch.done();
        this.objects.rememberCommit(oid, commit);
        await this.moveBranch(ref, expected, oid, deadline);
        return oid;
      } finally {
        await batch.settled();
      }
    });
  }

  /** The commit a branch points at (`refs/heads/...`), or null when it does not exist. */
  branch(ref: string): Promise<string | null> {
    assertBranchRef(ref);
    return readRef(this.gitdir, ref);
  }

  /** Every branch whose name starts with `prefix` (`refs/heads/proposals/`), with its commit, sorted by name. */
  branches(prefix: string): Promise<Array<{ ref: string; oid: string }>> {
    assertBranchRef(`${prefix}x`);
    return listRefs(this.gitdir, prefix);
  }

  /** Publishes (remote mode), then moves a branch other than main by compare-and-swap. */
  private async moveBranch(ref: string, expected: string | null, next: string, lockDeadline: number): Promise<void> {
    await this.options.publishBranch?.(this.gitdir, ref, next);
    try {
      const swapped = await compareAndSwapRef(this.gitdir, ref, expected, next, {
        lockTimeoutMs: Math.max(0, lockDeadline - Date.now()),
        durable: this.options.durable,
      });
      if (!swapped.ok && swapped.current !== next) throw new WriteConflictError(`${ref} moved meanwhile; read it again`);
    } catch (err) {
      if (err instanceof RefLockedError) throw new WriteConflictError(LOCKED_MESSAGE);
      throw err;
    }
  }
}

/** A branch other than main, named by this service: `refs/heads/<segments of [a-z0-9-]>`. */
function assertBranchRef(ref: string): void {
  if (!/^refs\/heads\/[a-z0-9-]+(\/[a-z0-9-]+)*\/?$/.test(ref) || ref === MAIN_REF)
    throw new Error(`${ref} is not a branch this service writes`);
}
