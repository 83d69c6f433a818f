import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Actor, EnvironmentName, RepositoryState } from '@flagops/core';
import { WriteConflictError } from '../errors/kinds.js';
import { type Logger, silentLogger } from '../log/logger.js';
import { parseRepositoryFile } from '../repository/parse-file.js';
import { formatIssue, type ValidationIssue } from '../validation/issue.js';
import { type CommitMeta, formatCommitMessage } from './commit-message.js';
import { CommitSigner } from './commit-signature.js';
import { type CommitObject, EMPTY_TREE_OID, type GitIdentity, serializeCommit } from './git-objects.js';
import { type ChangedPath, type CommitInfo, History } from './history.js';
import { initBareRepository, isRepository } from './init-repository.js';
import { ObjectStore, type WriteBatch } from './object-store.js';
import { ParseCache } from './parse-cache.js';
import { type FileChange, issuesError, writeChange } from './prepare-change.js';
import { ProjectFolders } from './project-folders.js';
import { type RefWatcher, watchMainRef } from './ref-watcher.js';
import { compareAndSwapRef, listRefs, MAIN_REF, RefLockedError, readRef } from './refs.js';
import { resolveRevision } from './revision.js';
import { ServedHistoryCache } from './served-history-cache.js';
import { type ServedState, ServedStates } from './served-state.js';
import { type LoadedState, StateLoader } from './state-loader.js';
import { type StorageFaultState, StorageFaults, writeFault } from './storage-fault.js';

export interface Change<T> {
  changes: FileChange[];
  meta: CommitMeta;
  result: T;
}

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

/** One change of a series: runs on the state the changes before it left; null (or no file change) makes no commit. */
export type SeriesChange<T> = (current: RepositoryState, tip: string | null) => Change<T> | null | Promise<Change<T> | null>;

/** What became of one change of a series. */
export type SeriesOutcome<T> = { committed: true; commit: string; result: T } | { committed: false; error?: unknown };

export interface SeriesResult<T> {
  /** `main` after the series: its last commit, or the unchanged head when none was made. */
  commit: string | null;
  parent: string | null;
  /** One per change, in order. */
  outcomes: SeriesOutcome<T>[];
  state: RepositoryState;
}

export interface MainMoved {
  from: string | null;
  to: string;
  /** `local`: committed by this instance; `external`: anyone else (a push, another process). */
  origin: 'local' | 'external';
}

export interface OpenOptions {
  /** A bare repository (the service's own). */
  gitdir?: string;
  /** A checkout (`<dir>/.git`), opened read-only: for the CLI. */
  dir?: string;
  /** Create the bare repository at `gitdir` if it does not exist. */
  create?: boolean;
  logger?: Logger;
  /** Commit timestamps come from here; fix it in tests for stable commit ids. */
  clock?: () => Date;
  /** Called after a commit's objects are written and before `main` moves: a crash here must lose nothing. */
  beforeRefUpdate?: () => void | Promise<void>;
  /**
   * Remote mode (src/remote): called with each new commit after its objects are written and before `main`
   * moves. Resolves true when the commit was published (pushed) so main may move; false when the remote had
   * moved on — main has then been brought up to it, and `fn` runs again on the new head. Throwing aborts.
   */
  publish?: (gitdir: string, commit: string, parent: string | null) => Promise<boolean>;
  /**
   * Remote mode: called with each commit this instance puts on a branch other than main (a proposal branch)
   * after its objects are written and before the branch moves locally; it pushes the branch. Throwing aborts.
   */
  publishBranch?: (gitdir: string, ref: string, commit: string) => Promise<void>;
  /** Called once `main` has moved to a commit this instance made, with the commit's action (the metrics count them). */
  onCommit?: (action: CommitMeta['action']) => void;
  /** Runs of the write function before giving up with WriteConflictError when `main` keeps moving. */
  maxAttempts?: number;
  /**
   * How long an update waits for another writer's `refs/heads/main.lock` (default 5 s, counted from the call,
   * so also while queued behind an update that waits for it) before it gives up with WriteConflictError;
   * `update(fn, { waitForLock: true })` waits as long as it takes.
   */
  lockTimeoutMs?: number;
  /** fsync objects and the ref (default true). */
  durable?: boolean;
  /**
   * Keep what parsing the files gave under `<gitdir>/flagops-cache/` (default true; never for a checkout
   * opened read-only), so that a restart parses only the files that changed since (parse-cache.ts), and what
   * serving learned of history, so that it does not walk back through it again (served-history-cache.ts).
   */
  parseCache?: boolean;
  watchDebounceMs?: number;
  /**
   * Signs every commit this instance makes (commit-signature.ts), and believes `Flagops-*` trailers only on
   * commits signed with it. Without it nothing is signed and no commit's trailers are believed.
   */
  signingKey?: Buffer;
  /** The commit up to which unsigned trailers are believed: the head when signing began (CommitTrustStore). */
  unsignedTrailersUpTo?: string | null;
}

const COMMITTER = { name: 'flagops', email: 'flagops@localhost' };

/** What a write that could not get the lock on main answers; no path, as it reaches API callers. */
const LOCKED_MESSAGE = 'another write to this repository holds the lock on main; try again';

export interface UpdateOptions {
  /**
   * Wait for the lock on main as long as it takes, never failing for it (kills and cleared kills). Other
   * updates give up with WriteConflictError after `lockTimeoutMs`, counted from the call: waiting for the
   * lock, or queued behind an update that waits for it.
   */
  waitForLock?: boolean;
}

/** The author of a commit is the actor; keys are recognisable by their prefix in the email. */
export function authorIdentity(actor: Actor, when: Date): GitIdentity {
  const email = actor.keyPrefix ? `${actor.keyPrefix}@keys.flagops` : (actor.email ?? `${actor.type}@users.flagops`);
  return { name: actor.name || actor.keyPrefix || actor.type, email, timestamp: Math.floor(when.getTime() / 1000), timezoneOffset: 0 };
}

/** One organisation's flags repository. See index.ts for the contract of each member. */
export class FlagRepository {
  private readonly objects: ObjectStore;
  private readonly loader: StateLoader;
  private readonly history: History;
  private readonly served: ServedStates;
  private readonly servedCache: ServedHistoryCache | undefined;
  private readonly listeners = new Set<(event: MainMoved) => void>();
  private queue: Promise<unknown> = Promise.resolve();
  private lastHead: string | null = null;
  private watcher: RefWatcher | undefined;
  private watching: Promise<void> | undefined;
  private closed = false;
  /** True while the running update waits for a `main.lock` someone else holds. */
  private blockedByLock = false;
  private readonly signer: CommitSigner | null;
  private readonly faults: StorageFaults;

  private constructor(
    readonly gitdir: string,
    readonly readOnly: boolean,
    private readonly options: OpenOptions,
    private readonly logger: Logger,
  ) {
    this.objects = new ObjectStore(gitdir, { durable: options.durable });
    this.faults = new StorageFaults(logger);
    this.signer = options.signingKey ? new CommitSigner(options.signingKey) : null;
    const caching = !readOnly && options.parseCache !== false;
    const cache = caching ? ParseCache.open(gitdir, logger) : undefined;
    this.loader = new StateLoader(this.objects, parseRepositoryFile, { cache });
    this.history = new History(this.objects, this.signer);
    this.servedCache = caching ? ServedHistoryCache.open(gitdir, logger) : undefined;
    const folders = new ProjectFolders(this.objects, this.history, parseRepositoryFile);
    this.served = new ServedStates(this.loader, this.objects, folders, this.servedCache);
  }

  static async open(options: OpenOptions): Promise<FlagRepository> {
    if (!options.gitdir === !options.dir) throw new Error('FlagRepository.open needs exactly one of gitdir and dir');
    const logger = options.logger ?? silentLogger;
    if (options.dir) {
      const gitdir = await checkoutGitdir(resolve(options.dir));
      const repo = new FlagRepository(gitdir, true, options, logger);
      repo.lastHead = await repo.head();
      return repo;
    }
    const gitdir = resolve(options.gitdir!);
    if (!(await isRepository(gitdir))) {
      if (!options.create) throw new Error(`${gitdir} is not a git repository`);
      await initBareRepository(gitdir);
      logger.info('created flags repository', { gitdir });
    }
    const repo = new FlagRepository(gitdir, false, options, logger);
    repo.lastHead = await repo.head();
    return repo;
  }

  /** The commit up to which unsigned `Flagops-*` trailers are believed (OpenOptions), or null: none are. */
  get unsignedTrailersUpTo(): string | null {
    return this.options.unsignedTrailersUpTo ?? null;
  }

  /** The commit `main` points at, or null before the first commit. */
  head(): Promise<string | null> {
    return readRef(this.gitdir, MAIN_REF);
  }

  /** The typed state at a commit (default: `main`). Shared and read-only; `issues` lists what was left out. */
  readState(commit?: string | null): Promise<LoadedState> {
    return this.reading(commit === undefined ? this.head().then((head) => this.loader.load(head)) : this.loader.load(commit));
  }

  /**
   * What a commit (default: `main`) serves: as committed, except what invalid files hold back, which keeps its
   * last valid state (served-state.ts). What the evaluation server serves and the control plane shows.
   */
  readServed(commit?: string | null): Promise<ServedState> {
    const read = commit === undefined ? this.head().then((head) => this.served.read(head)) : this.served.read(commit);
    return this.reading(read).then((served) => {
      // What main serves could be read: whatever failed before does not stop serving now.
      if (served.commit === this.lastHead) this.faults.clear('read');
      return served;
    });
  }

  /**
   * The fault this repository has now (a read fault first), or undefined: what /healthz reports. Faults are
   * noted as reads and writes fail, and cleared as they succeed again (see probeWritable).
   */
  fault(): StorageFaultState | undefined {
    return this.faults.get();
  }

  /**
   * Whether a file can be made in the object directory now: a repository made read-only (or a full disk) shows
   * as a write fault before the next write fails, and one that can be written again clears it. A temp file git
   * ignores (tmp_obj_*), removed at once.
   */
  probeWritable(): void {
    if (this.readOnly || this.closed) return;
    const probe = join(this.gitdir, 'objects', `tmp_obj_probe_${process.pid}`);
    try {
      rmSync(probe, { force: true });
      const fd = openSync(probe, 'wx', 0o600);
      try {
        writeSync(fd, 'x');
      } finally {
        closeSync(fd);
        rmSync(probe, { force: true });
      }
      this.faults.clear('write');
    } catch (err) {
      this.faults.note(writeFault(err));
    }
  }

  /** A read of the repository: a storage fault is noted (and thrown on). */
  private reading<T>(read: Promise<T>): Promise<T> {
    return read.catch((err) => {
      this.faults.note(err);
      throw err;
    });
  }

  /** A write: a failed one is a storage fault when the file system refused it; a committed one clears a write fault. */
  private writing<T>(write: Promise<T>, committed: (result: T) => boolean): Promise<T> {
    return write.then(
      (result) => {
        if (committed(result)) this.faults.clear('write');
        return result;
      },
      (err) => {
        const fault = writeFault(err);
        this.faults.note(fault);
        throw fault;
      },
    );
  }

  /** The environments of a project whose served snapshot may differ between `commit` and its first parent. */
  servedChanges(commit: string, slug: string): Promise<ReadonlySet<EnvironmentName>> {
    return this.served.changedEnvironments(commit, slug);
  }

  /**
   * Runs `fn` on the state of `main` and commits what it returns as one commit, serialized with every other
   * update of this instance and compare-and-swap on `main` against everyone else: when `main` moved meanwhile,
   * `fn` runs again on the new head (so it must be safe to re-run; throwing aborts with nothing committed).
   */
  update<T>(
    fn: (current: RepositoryState, head: string | null) => Change<T> | Promise<Change<T>>,
    options: UpdateOptions = {},
  ): Promise<UpdateResult<T>> {
    if (this.readOnly) return Promise.reject(new Error(`${this.gitdir} was opened read-only`));
    const deadline = options.waitForLock ? Number.POSITIVE_INFINITY : Date.now() + (this.options.lockTimeoutMs ?? 5_000);
    const run = options.waitForLock
      ? this.serialized(() => this.tryUpdate(fn, deadline))
      : this.serializedUntil(deadline, () => this.tryUpdate(fn, deadline));
    return this.writing(run, (outcome) => outcome.committed);
  }

  /**
   * Commits each change as its own commit, each on the one before, and moves `main` once, to the last: one
   * write of all their objects, one compare-and-swap (one push in remote mode) instead of one per commit. A
   * change that throws (or would add an issue) is left out and the next runs on the state before it. When
   * `main` moved meanwhile, the whole series runs again on the new head, so each change must be safe to re-run
   * and must check on the state it is given that it is still to be made. Waits for the lock like `update`.
   */
  updateSeries<T>(changes: readonly SeriesChange<T>[]): Promise<SeriesResult<T>> {
    if (this.readOnly) return Promise.reject(new Error(`${this.gitdir} was opened read-only`));
    const deadline = Date.now() + (this.options.lockTimeoutMs ?? 5_000);
    return this.writing(
      this.serializedUntil(deadline, () => this.trySeries(changes, deadline)),
      (series) => series.outcomes.some((o) => o.committed),
    );
  }

  private async trySeries<T>(changes: readonly SeriesChange<T>[], lockDeadline: number): Promise<SeriesResult<T>> {
    const attempts = this.options.maxAttempts ?? 10;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const head = await this.head();
      this.observe(head, 'external');
      let tip = head;
      let loaded = await this.loader.load(head);
      const outcomes: SeriesOutcome<T>[] = [];
      let lastAction: CommitMeta['action'] | undefined;
      const batch = this.objects.batch();
      try {
        for (const next of changes) {
          try {
            const change = await next(loaded.state, tip);
            const commit = change && (await this.commitChange(batch, tip, loaded, change));
            if (!change || !commit) {
              outcomes.push({ committed: false });
              continue;
            }
            outcomes.push({ committed: true, commit: commit.oid, result: change.result });
            tip = commit.oid;
            loaded = commit.next;
            lastAction = change.meta.action;
          } catch (error) {
            outcomes.push({ committed: false, error });
          }
        }
        if (tip === head || lastAction === undefined) return { commit: head, parent: head, outcomes, state: loaded.state };
        await batch.done();
        await this.options.beforeRefUpdate?.();
        const published = this.options.publish === undefined || (await this.options.publish(this.gitdir, tip!, head));
        if (published && (await this.swapMain(head, tip!, lockDeadline, lastAction))) {
          this.loader.remember(loaded);
          this.observe(tip, 'local');
          return { commit: tip, parent: head, outcomes, state: loaded.state };
        }
      } finally {
        await batch.settled();
      }
      this.logger.debug('main moved during a series of updates; running it again on the new head', { attempt, expected: head });
    }
    throw new WriteConflictError(`main kept moving; the changes were not applied after ${attempts} attempts`);
  }

  /**
   * Runs `task` in the queue like `serialized`, but gives up with WriteConflictError when, past `deadline`,
   * its turn has not come while the update ahead of it waits for someone else's lock (a kill waits as long as
   * it takes). A queue that is merely long is waited for. Once started, the task runs to its end, so a write
   * is never reported failed while it may still commit.
   */
  private serializedUntil<T>(deadline: number, task: () => Promise<T>): Promise<T> {
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

  private async tryUpdate<T>(
    fn: (current: RepositoryState, head: string | null) => Change<T> | Promise<Change<T>>,
    lockDeadline: number,
  ): Promise<UpdateResult<T>> {
    const attempts = this.options.maxAttempts ?? 10;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const { head, current, change } = await this.planOnHead(fn);
      const batch = this.objects.batch();
      try {
        const commit = await this.commitChange(batch, head, current, change);
        if (!commit) {
          return { commit: head, parent: head, committed: false, result: change.result, state: current.state };
        }
        // The objects are flushed while the state is assembled; the ref moves only once all are on disk.
        await batch.done();
        await this.options.beforeRefUpdate?.();
        const published = this.options.publish === undefined || (await this.options.publish(this.gitdir, commit.oid, head));
        if (published && (await this.swapMain(head, commit.oid, lockDeadline, change.meta.action))) {
          this.loader.remember(commit.next);
          this.observe(commit.oid, 'local');
          this.options.onCommit?.(change.meta.action);
          return { commit: commit.oid, parent: head, committed: true, result: change.result, state: commit.next.state };
        }
      } finally {
        await batch.settled();
      }
      this.logger.debug('main moved during an update; running it again on the new head', { attempt, expected: head });
    }
    throw new WriteConflictError(`main kept moving; the change was not applied after ${attempts} attempts`);
  }

  /** Runs the write function on main's head as it is now (announcing a move made outside first). */
  private async planOnHead<T>(fn: (current: RepositoryState, head: string | null) => Change<T> | Promise<Change<T>>) {
    const head = await this.head();
    this.observe(head, 'external');
    const current = await this.loader.load(head);
    return { head, current, change: await fn(current.state, head) };
  }

  /** Writes the change's objects and commit into `batch`; null when the tree would not change. */
  private async commitChange<T>(
    batch: WriteBatch,
    head: string | null,
    current: LoadedState,
    change: Change<T>,
  ): Promise<{ oid: string; next: LoadedState } | null> {
    const baseTree = head ? (await this.objects.readCommit(head)).tree : null;
    const { tree, known } = await writeChange(this.objects, batch, parseRepositoryFile, baseTree, change.changes);
    if (tree === (baseTree ?? EMPTY_TREE_OID)) return null;
    const author = authorIdentity(change.meta.actor, (this.options.clock ?? (() => new Date()))());
    const unsigned: CommitObject = {
      tree,
      parents: head ? [head] : [],
      author,
      committer: { ...COMMITTER, timestamp: author.timestamp, timezoneOffset: 0 },
      message: formatCommitMessage(change.meta),
    };
    const commit = this.signer ? this.signer.sign(unsigned) : unsigned;
    const content = serializeCommit(commit);
    // Written before the new state is validated, so that the objects' fsyncs overlap the assembly; a refused
    // change leaves it unreferenced, as it does the change's blobs and trees (git gc prunes them).
    const oid = batch.write('commit', content);
    batch.flush();
    const next = await this.loader.loadTree(tree, oid, known);
    const introduced = newIssues(current.issues, next.issues);
    if (introduced.length > 0) throw issuesError(introduced);
    this.objects.rememberCommit(oid, commit);
    return { oid, next };
  }

  private async swapMain(expected: string | null, next: string, lockDeadline: number, action: CommitMeta['action']): Promise<boolean> {
    const options = {
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

  /**
   * Commits a change on a new branch `ref` (a proposal: main's head plus this one commit) without moving
   * main. The change is checked as `update` checks it; a change that leaves the tree as it is makes no commit
   * and no branch (`committed: false`). WriteConflictError when `ref` exists already.
   */
  commitOnNewBranch<T>(
    ref: string,
    fn: (current: RepositoryState, head: string | null) => Change<T> | Promise<Change<T>>,
  ): Promise<UpdateResult<T>> {
    if (this.readOnly) return Promise.reject(new Error(`${this.gitdir} was opened read-only`));
    assertBranchRef(ref);
    const deadline = Date.now() + (this.options.lockTimeoutMs ?? 5_000);
    const run = this.serializedUntil(deadline, async () => {
      const { head, current, change } = await this.planOnHead(fn);
      const batch = this.objects.batch();
      try {
        const commit = await this.commitChange(batch, head, current, change);
        if (!commit) return { commit: head, parent: head, committed: false, result: change.result, state: current.state };
        await batch.done();
        await this.moveBranch(ref, null, commit.oid, deadline);
        return { commit: commit.oid, parent: head, committed: true, result: change.result, state: commit.next.state };
      } finally {
        await batch.settled();
      }
    });
    return this.writing(run, (outcome) => outcome.committed);
  }

  /**
   * Adds a commit that changes no file to branch `ref`, which must point at `expected` (a proposal's
   * rejection is recorded so). Returns the new commit; WriteConflictError when the branch moved.
   */
  recordOnBranch(ref: string, expected: string, meta: CommitMeta): Promise<string> {
    if (this.readOnly) return Promise.reject(new Error(`${this.gitdir} was opened read-only`));
    assertBranchRef(ref);
    const deadline = Date.now() + (this.options.lockTimeoutMs ?? 5_000);
    const run = this.serializedUntil(deadline, async () => {
      const tree = (await this.objects.readCommit(expected)).tree;
      const author = authorIdentity(meta.actor, (this.options.clock ?? (() => new Date()))());
      const unsigned: CommitObject = {
        tree,
        parents: [expected],
        author,
        committer: { ...COMMITTER, timestamp: author.timestamp, timezoneOffset: 0 },
        message: formatCommitMessage(meta),
      };
      const commit = this.signer ? this.signer.sign(unsigned) : unsigned;
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
    return this.writing(run, () => true);
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

  /** Subscribes to moves of `main`; returns the unsubscribe function. Listeners must not throw (it is logged). */
  onMainMoved(listener: (event: MainMoved) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts watching for moves of `main` made outside this instance (a push, another process). Idempotent. */
  watch(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.watching ??= watchMainRef(this.gitdir, () => void this.refresh(), {
      debounceMs: this.options.watchDebounceMs,
      onError: (err) => this.logger.warn('watching main failed', { err }),
    }).then((watcher) => {
      this.watcher = watcher;
      // Closed while the watcher was starting: stop it at once.
      if (this.closed) return watcher.close();
      // A push that landed before the watcher was ready sent no event: look once now.
      return this.refresh();
    });
    return this.watching;
  }

  /** Looks at `main` now and announces it if it moved; what the watcher runs, also callable directly. */
  refresh(): Promise<void> {
    return this.serialized(async () => {
      if (!this.closed) this.observe(await this.head(), 'external');
    }).catch((err) => this.logger.warn('reading main failed', { err }));
  }

  /** The repository was repacked (housekeeping.ts): read from the new packs, close the removed ones. */
  packsChanged(): void {
    if (!this.closed) this.objects.packsChanged();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.watching?.catch(() => {});
    await this.watcher?.close();
    this.watcher = undefined;
    this.listeners.clear();
    await this.loader.close();
    await this.servedCache?.close();
    this.objects.close();
  }

  readCommit(oid: string): Promise<CommitInfo> {
    return this.history.readCommit(oid);
  }

  changedPaths(oid: string): Promise<ChangedPath[]> {
    return this.history.changedPaths(oid);
  }

  firstParentLog(options: { from: string | null; until?: string | null; limit?: number }): Promise<CommitInfo[]> {
    return this.history.firstParentLog(options);
  }

  height(oid: string): Promise<number> {
    return this.history.height(oid);
  }

  treeOid(commit: string, path: string): Promise<string | null> {
    return this.history.treeOid(commit, path);
  }

  /** The text of a file version, by blob oid (as changedPaths names them): what the audit trail reads of a push. */
  async readBlob(oid: string): Promise<string> {
    return (await this.objects.readTyped(oid, 'blob')).toString('utf8');
  }

  resolveRevision(rev: string): Promise<string> {
    return resolveRevision(this.gitdir, this.objects, rev);
  }

  /** Head checks and writes share one queue, so our own commit is never mistaken for someone else's. */
  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => {});
    return run;
  }

  private observe(head: string | null, origin: MainMoved['origin']): void {
    if (head === this.lastHead) return;
    const from = this.lastHead;
    this.lastHead = head;
    if (head === null) return;
    for (const listener of this.listeners) {
      try {
        listener({ from, to: head, origin });
      } catch (err) {
        this.logger.error('a main-moved listener threw', { err });
      }
    }
  }
}

/**
 * Issues in `after` that `before` did not have: what a change would make worse. Compared without line and
 * column, so that rewriting a file another issue points into (a kills file naming a deleted flag) does not
 * count as a new problem: a valid write is never refused for what others left invalid.
 */
function newIssues(before: readonly ValidationIssue[], after: readonly ValidationIssue[]): ValidationIssue[] {
  const where = (issue: ValidationIssue) => formatIssue({ file: issue.file, path: issue.path, message: issue.message });
  const known = new Set(before.map(where));
  return after.filter((issue) => !known.has(where(issue)));
}

/** A branch other than main, named by this service: `refs/heads/<segments of [a-z0-9-]>`. */
function assertBranchRef(ref: string): void {
  if (!/^refs\/heads\/[a-z0-9-]+(\/[a-z0-9-]+)*\/?$/.test(ref) || ref === MAIN_REF)
    throw new Error(`${ref} is not a branch this service writes`);
}

/** `<dir>/.git`, following a `gitdir:` file (worktrees, submodules). */
async function checkoutGitdir(dir: string): Promise<string> {
  const dotGit = join(dir, '.git');
  const info = await stat(dotGit).catch(() => null);
  if (info?.isFile()) {
    const m = /^gitdir:\s*(.+)$/m.exec(await readFile(dotGit, 'utf8'));
    if (m) return resolve(dir, m[1].trim());
  }
  if (info?.isDirectory() && (await isRepository(dotGit))) return dotGit;
  if (await isRepository(dir)) return dir;
  throw new Error(`${dir} is not a git checkout`);
}
