import type { RepositoryState } from '@flagops/core';
import { WriteConflictError } from '../errors/kinds.js';
import type { Logger } from '../log/logger.js';
import type { Change, ChangeCommitter } from './change-committer.js';
import type { CommitGraph } from './git/commit-graph.js';
import type { ObjectStore } from './git/object-store.js';
import { compareAndSwapRef, discardStagedRef, MAIN_REF, RefLockedError, type StagedRef, stageRef } from './git/refs.js';
import { readMainHead } from './main-head.js';
import type { MainMoves } from './main-moves.js';
import type { CommitMeta } from './served/commit-message.js';
import type { StateLoader } from './served/state-loader.js';

export interface UpdateResult<T> {
  /** `main` after the update: the new commit, or the unchanged head when nothing differed. */
  commit: string | null;
  /** The head the write function last ran on (the new commit's parent). */
  parent: string | null;
  /** False when the changes matched what `main` already held, so no commit was made. */
  committed: boolean;
  result: T;
  state: RepositoryState;
}

/**
 * What a write run in a turn among control planes (OpenOptions.clusterTurn) says of main: whether it moved, and
 * to which commit, which the turn's next holder takes in. A write to another branch leaves main as it was.
 */
export type MainWrite = Pick<UpdateResult<unknown>, 'committed' | 'commit'>;

/** One change of a series: runs on the state the changes before it left; null (or no file change) makes no commit. */
export type SeriesChange<T> = (current: RepositoryState, tip: string | null) => Change<T> | null | Promise<Change<T> | null>;

/** What became of one change of a series. */
export type SeriesOutcome<T> = { committed: true; commit: string; result: T } | { committed: false; error?: unknown };

/**
 * FlagRepository.rebuildMainOnto's plan, made in the write queue with main's head as it is then: the commit to
 * build on, and the changes to make on it.
 */
export type MainRebuild<T> = (head: string | null) => Promise<{ onto: string | null; changes: readonly SeriesChange<T>[] }>;

export interface SeriesResult<T> {
  /** `main` after the series: its last commit, or the unchanged head when none was made. */
  commit: string | null;
  parent: string | null;
  /** One per change, in order. */
  outcomes: SeriesOutcome<T>[];
  state: RepositoryState;
}

/** A write function: runs on main's state and head, returns the change to commit. */
export type WriteFn<T> = (current: RepositoryState, head: string | null) => Change<T> | Promise<Change<T>>;

/** OpenOptions.publish (flag-repository.ts says what it does). */
export type PublishCommit = (
  gitdir: string,
  commit: string,
  parent: string | null,
  action: CommitMeta['action'],
  signal?: AbortSignal,
  awaitRemote?: boolean,
) => Promise<boolean>;

/** What the queue takes of the repository's open options (OpenOptions in flag-repository.ts says what each does). */
export interface WriteQueueOptions {
  beforeRefUpdate?: () => void | Promise<void>;
  publish?: PublishCommit;
  /**
   * How long an urgent update (a kill) waits for the publishing of another update ahead of it before that is
   * cut off (its `signal` aborted): default 0.75 s. A publish started while one was cut, with an urgent update
   * still waiting, is cut at once.
   */
  cutPublishAfterMs?: number;
  onCommit?: (action: CommitMeta['action']) => void;
  maxAttempts?: number;
  durable?: boolean;
}

/**
 * How long an urgent update waits for another's publishing ahead of it by default (WriteQueueOptions): a push
 * to a healthy git host takes tens of milliseconds, and a kill behind one the host never answers is then still
 * served everywhere within a second.
 */
const CUT_PUBLISH_AFTER_MS = 750;
/** How long after a publish was cut off the next is cut at once too, rather than given CUT_PUBLISH_AFTER_MS. */
const LAST_CUT_MEMORY_MS = 5_000;

/**
 * The reason of a publishing cut off at once for an urgent update that asked for it (UpdateOptions.cutAtOnce),
 * not after the grace: the host was given no time, so its silence says nothing of it.
 */
export const PUBLISH_CUT_WHEN_ASKED = 'cut off at once for a kill made again from another control plane';

/** A write that lost to other writers each time it ran (409): someone else kept moving main first. */
export class MainKeptMovingError extends WriteConflictError {}

/** What a write that could not get a lock answers; no path, as it reaches API callers. */
export const LOCKED_MESSAGE = 'another write to this repository holds the lock on main; try again';

/**
 * How an update is published: 'none', cut off for a kill waiting behind it; 'urgent' (a kill), never cut off,
 * and in remote mode served once the remote has been given a moment; 'await-remote' (a kill decided on the
 * remote's main, UpdateOptions.awaitRemote), never cut off, waiting for the remote's answer.
 */
export type Urgency = 'none' | 'urgent' | 'await-remote';

/**
 * The writes of one repository instance, one at a time, and the moves of `main` they make: each runs its
 * write function on main's head and moves main by compare-and-swap against everyone else, running it again
 * on the new head when main moved meanwhile. Head checks share the queue (refresh), so our own commit is
 * never mistaken for someone else's.
 */
export class WriteQueue {
  private queue: Promise<unknown> = Promise.resolve();
  /** True while the running update waits for a `main.lock` someone else holds. */
  private blockedByLock = false;
  /** Urgent updates (kills) queued and not started yet. */
  private urgentWaiting = 0;
  /** The publishing under way of an update that is not urgent, which an urgent one may cut off. */
  private publishing: { abort: AbortController; timer?: ReturnType<typeof setTimeout> } | undefined;
  /**
   * When the last publish was cut off for an urgent update, none having ended since; null otherwise. Within
   * LAST_CUT_MEMORY_MS the next is cut at once (the host did not answer a moment ago); after it, the next gets
   * the grace again: under a steady run of kills, a host that answers again would otherwise never get to.
   */
  private lastCutAt: number | null = null;
  /** An urgent update waiting asked for the publishing ahead of it to be cut off at once. */
  private cutNow = false;

  constructor(
    private readonly gitdir: string,
    private readonly objects: ObjectStore,
    private readonly graph: CommitGraph,
    private readonly loader: StateLoader,
    private readonly committer: ChangeCommitter,
    private readonly moves: MainMoves,
    private readonly options: WriteQueueOptions,
    private readonly logger: Logger,
  ) {}

  /** Runs `task` once every task queued before it has ended. */
  serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Runs an urgent `task` (a kill) in the queue like `serialized`; the publishing of an update ahead of it that
   * is not urgent (a push to a git host that does not answer) is cut off after `cutPublishAfterMs` (`cutAtOnce`:
   * at once), so the kill waits for nobody's git host but its own.
   */
  urgent<T>(task: () => Promise<T>, cutAtOnce = false): Promise<T> {
    this.urgentWaiting++;
    if (cutAtOnce) this.cutNow = true;
    this.cutSoon();
    let started = false;
    const begin = () => {
      if (started) return;
      started = true;
      this.urgentWaiting--;
      if (this.urgentWaiting === 0) this.cutNow = false;
    };
    return this.serialized(async () => {
      begin();
      return task();
    }).finally(begin);
  }

  /** An urgent update waits: the publishing under way is cut off after the grace (at once after a cut, or when asked). */
  private cutSoon(): void {
    const publishing = this.publishing;
    if (publishing === undefined || this.urgentWaiting === 0) return;
    const lastCut = this.lastCutAt !== null && Date.now() - this.lastCutAt < LAST_CUT_MEMORY_MS;
    const now = lastCut || this.cutNow;
    if (publishing.timer !== undefined && !now) return;
    clearTimeout(publishing.timer);
    // Cut at once when asked, the git host was given no time: its silence says nothing of it.
    const asked = this.cutNow && !lastCut;
    const after = now ? 0 : (this.options.cutPublishAfterMs ?? CUT_PUBLISH_AFTER_MS);
    publishing.timer = setTimeout(() => {
      if (this.publishing !== publishing || this.urgentWaiting === 0) return;
      if (!asked) this.lastCutAt = Date.now();
      publishing.abort.abort(asked ? PUBLISH_CUT_WHEN_ASKED : undefined);
    }, after);
  }

  /** Publishes a commit; one not urgent may be cut off for an urgent update waiting behind it (cutSoon). */
  private async publishCommit(commit: string, parent: string | null, action: CommitMeta['action'], urgency: Urgency): Promise<boolean> {
    const publish = this.options.publish;
    if (publish === undefined) return true;
    if (urgency !== 'none') return publish(this.gitdir, commit, parent, action, undefined, urgency === 'await-remote');
    const publishing = { abort: new AbortController() } as NonNullable<WriteQueue['publishing']>;
    this.publishing = publishing;
    this.cutSoon();
    try {
      return await publish(this.gitdir, commit, parent, action, publishing.abort.signal);
    } finally {
      // A publish that ended by itself (published, refused) says the host answers: the next gets the grace.
      if (!publishing.abort.signal.aborted) this.lastCutAt = null;
      clearTimeout(publishing.timer);
      this.publishing = undefined;
    }
  }

  /**
   * Runs `task` in the queue like `serialized`, but gives up with WriteConflictError when, past `deadline`,
   * its turn has not come while the update ahead of it waits for someone else's lock (a kill waits as long as
   * it takes). A queue that is merely long is waited for. Once started, the task runs to its end, so a write
   * is never reported failed while it may still commit.
   */
  serializedUntil<T>(deadline: number, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let state: 'queued' | 'started' | 'abandoned' = 'queued';
      const check = () => {
        if (state !== 'queued') return;
        if (!this.blockedByLock) {
          timer = setTimeout(check, 100);
          return;
        }
        state = 'abandoned';
        reject(new WriteConflictError(LOCKED_MESSAGE));
      };
      let timer = setTimeout(check, Math.max(0, deadline - Date.now()));
      this.serialized(async () => {
        clearTimeout(timer);
        if (state === 'abandoned') return undefined;
        state = 'started';
        return task();
      }).then((value) => resolve(value as T), reject);
    });
  }

  /**
   * One update of main (FlagRepository.update); run it in the queue. `attempts`: runs before MainKeptMovingError.
   * `urgency` other than 'none' (a kill): its publishing is never cut off for another's.
   */
  async tryUpdate<T>(
    fn: WriteFn<T>,
    lockDeadline: number,
    attempts = this.options.maxAttempts ?? 10,
    beforeAnnounce?: (commit: string, parent: string | null) => Promise<void>,
    urgency: Urgency = 'none',
  ): Promise<UpdateResult<T>> {
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const { head, current, change } = await this.planOnHead(fn);
      const batch = this.objects.batch();
      let staged: StagedRef | undefined;
      try {
        // main's next value is written and fsynced beside the objects, not after them (stageRef).
        const stage = (oid: string) => {
          staged = stageRef(this.gitdir, oid, this.options.durable);
        };
        const commit = await this.committer.commitChange(batch, head, current, change, stage);
        if (!commit) {
          return { commit: head, parent: head, committed: false, result: change.result, state: current.state };
        }
        // The objects are flushed while the state is assembled; the ref moves only once all are on disk.
        await batch.done();
        await staged?.ready;
        await this.options.beforeRefUpdate?.();
        const published = await this.publishCommit(commit.oid, head, change.meta.action, urgency);
        if (published && (await this.swapMain(head, commit.oid, lockDeadline, change.meta.action, staged))) {
          this.loader.remember(commit.next);
          await beforeAnnounce?.(commit.oid, head);
          this.moves.observe(commit.oid, 'local');
          this.options.onCommit?.(change.meta.action);
          return { commit: commit.oid, parent: head, committed: true, result: change.result, state: commit.next.state };
        }
      } finally {
        await batch.settled();
        if (staged) await discardStagedRef(staged);
      }
      this.logger.debug('main moved during an update; running it again on the new head', { attempt, expected: head });
    }
    throw new MainKeptMovingError(`main kept moving; the change was not applied after ${attempts} attempts`);
  }

  /**
   * A series of commits with one move of main (FlagRepository.updateSeries); run it in the queue. With `rebuild`,
   * asked with main's head on every attempt, the series it gives is built on the commit it names instead of
   * main's head, and main moves from its head to the series' tip (or to that commit, when no change makes one)
   * whatever their relation: FlagRepository.rebuildMainOnto. `urgent` (kills made again): its publishing is never
   * cut off; any other series' is, for a kill waiting behind it, as an update's is.
   */
  async trySeries<T>(
    changes: readonly SeriesChange<T>[],
    lockDeadline: number,
    rebuild?: MainRebuild<T>,
    urgent = false,
  ): Promise<SeriesResult<T>> {
    const attempts = this.options.maxAttempts ?? 10;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const head = await readMainHead(this.gitdir, this.moves.last);
      this.moves.observe(head, 'external');
      const plan = rebuild ? await rebuild(head) : { onto: head, changes };
      const base = plan.onto;
      let tip = base;
      let loaded = await this.loader.load(base);
      await this.countable(base);
      const outcomes: SeriesOutcome<T>[] = [];
      /** Each commit of the series, by action: counted once main holds them. */
      const actions: Array<CommitMeta['action']> = [];
      let lastAction: CommitMeta['action'] | undefined;
      const batch = this.objects.batch();
      try {
        for (const next of plan.changes) {
          try {
            const change = await next(loaded.state, tip);
            const commit = change && (await this.committer.commitChange(batch, tip, loaded, change));
            if (!change || !commit) {
              outcomes.push({ committed: false });
              continue;
            }
            outcomes.push({ committed: true, commit: commit.oid, result: change.result });
            tip = commit.oid;
            loaded = commit.next;
            lastAction = change.meta.action;
            actions.push(lastAction);
          } catch (error) {
            outcomes.push({ committed: false, error });
          }
        }
        if (tip === head || (lastAction === undefined && !rebuild)) return { commit: head, parent: head, outcomes, state: loaded.state };
        if (lastAction !== undefined) {
          await batch.done();
          await this.options.beforeRefUpdate?.();
        }
        // Nothing to publish when no change made a commit: the base is what `rebuild` named (the remote's head).
        const published = lastAction === undefined || (await this.publishCommit(tip!, base, lastAction, urgent ? 'urgent' : 'none'));
        if (published && (await this.swapMain(head, tip!, lockDeadline, lastAction ?? 'change'))) {
          this.loader.remember(loaded);
          this.moves.observe(tip, 'local');
          for (const action of actions) this.options.onCommit?.(action);
          return { commit: tip, parent: base, outcomes, state: loaded.state };
        }
      } finally {
        await batch.settled();
      }
      this.logger.debug('main moved during a series of updates; running it again on the new head', { attempt, expected: head });
    }
    throw new WriteConflictError(`main kept moving; the changes were not applied after ${attempts} attempts`);
  }

  /** Runs the write function on main's head as it is now (announcing a move made outside first). */
  async planOnHead<T>(fn: WriteFn<T>) {
    const head = await readMainHead(this.gitdir, this.moves.last);
    this.moves.observe(head, 'external');
    const current = await this.loader.load(head);
    await this.countable(head);
    return { head, current, change: await fn(current.state, head) };
  }

  /**
   * Throws (ObjectNotFoundError: 503, nothing committed) unless the first-parent history of the commit a write
   * builds on can be read: a snapshot's version counts that history, so evaluation could not serve the new
   * commit, and the write would be acknowledged but never served. Heights are cached: this reads nothing
   * once the commit is served.
   */
  private async countable(commit: string | null): Promise<void> {
    if (commit !== null) await this.graph.height(commit);
  }

  private async swapMain(
    expected: string | null,
    next: string,
    lockDeadline: number,
    action: CommitMeta['action'],
    staged?: StagedRef,
  ): Promise<boolean> {
    const options = {
      staged,
      lockTimeoutMs: Math.max(0, lockDeadline - Date.now()),
      durable: this.options.durable,
      onWaiting: (waitedMs: number) => {
        this.blockedByLock = true;
        if (waitedMs === 0) return;
        this.logger.warn(
          `a ${action} is waiting for refs/heads/main.lock; if no git process or flagops import is writing to this repository, remove that file`,
          {
            waitedMs,
          },
        );
      },
    };
    try {
      const swapped = await compareAndSwapRef(this.gitdir, MAIN_REF, expected, next, options);
      // Already at our commit: in remote mode a poll can fetch what `publish` just pushed and fast-forward
      // main to it before we get here. The change is on main exactly once; running it again would repeat it.
      return swapped.ok || swapped.current === next;
    } catch (err) {
      if (err instanceof RefLockedError) throw new WriteConflictError(LOCKED_MESSAGE);
      throw err;
    } finally {
      this.blockedByLock = false;
    }
  }
}
