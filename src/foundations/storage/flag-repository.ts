import { closeSync, existsSync, openSync, rmSync, writeSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { EnvironmentName } from '@flagops/core';
import { StorageFaultError } from '../errors/kinds.js';
import { type Logger, silentLogger } from '../log/logger.js';
import { parseRepositoryFile } from '../repository/parse-file.js';
import { Branches } from './branches.js';
import { ChangeCommitter } from './change-committer.js';
import { type ChangedPath, CommitGraph } from './git/commit-graph.js';
import { type AddedObjects, objectsAddedBy, packOfAdded, writeAddedObjects } from './git/commit-objects.js';
import { CommitSigner } from './git/commit-signature.js';
import { initBareRepository, isRepository } from './git/init-repository.js';
import { writeFault } from './git/io-faults.js';
import { ObjectStore } from './git/object-store.js';
import { type RefWatcher, watchMainRef } from './git/ref-watcher.js';
import { CorruptRefError, MAIN_REF } from './git/refs.js';
import { resolveRevision } from './git/revision.js';
import { readMainHead } from './main-head.js';
import { type MainMoved, MainMoves } from './main-moves.js';
import { ClashIncumbents } from './served/clash-incumbents.js';
import type { CommitMeta } from './served/commit-message.js';
import { type CommitInfo, History } from './served/history.js';
import { ParseCache } from './served/parse-cache.js';
import { ProjectFolders } from './served/project-folders.js';
import { ServedHistoryCache } from './served/served-history-cache.js';
import { type ServedState, ServedStates } from './served/served-state.js';
import { type LoadedState, StateLoader } from './served/state-loader.js';
import { type StorageFaultState, StorageFaults } from './storage-fault.js';
import {
  type MainRebuild,
  type MainWrite,
  type PublishCommit,
  type SeriesChange,
  type SeriesResult,
  type UpdateResult,
  type WriteFn,
  WriteQueue,
} from './write-queue.js';

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
   * Remote mode (src/features/remote): called with each new commit after its objects are written and before `main`
   * moves. Resolves true when the commit was published (pushed) so main may move; false when the remote had
   * moved on — main has then been brought up to it, and `fn` runs again on the new head. Throwing aborts.
   * `action` is the commit's (the last one's, for a series): a kill may move main before the remote has it.
   * `signal`, for a change other than a kill, is aborted when a kill has waited behind it `cutPublishAfterMs`:
   * the publish then gives up (throws) without moving main. `awaitRemote`, for a kill: it waits for the remote's
   * answer (UpdateOptions.awaitRemote).
   */
  publish?: PublishCommit;
  /**
   * How long a kill (`update(fn, { waitForLock: true })`) waits for the publishing of an update ahead of it
   * before that is cut off, its `signal` aborted (default 0.75 s): a kill waits for no other change's push.
   */
  cutPublishAfterMs?: number;
  /**
   * Remote mode: called with each commit this instance puts on a branch other than main (a proposal branch)
   * after its objects are written and before the branch moves locally; it pushes the branch. Throwing aborts.
   */
  publishBranch?: (gitdir: string, ref: string, commit: string) => Promise<void>;
  /**
   * Remote mode: brings a branch other than main to what the remote holds (another control plane may have
   * written to it). Called before a write that decides on the branch is queued (UpdateOptions.withBranch,
   * recordOnBranch), in its turn among control planes. Throwing aborts.
   */
  fetchBranch?: (gitdir: string, ref: string) => Promise<void>;
  /**
   * Remote mode with several control planes: runs an update (not a kill, which must never wait for another
   * process), or a record on a branch, in this control plane's turn among them, waiting at most `waitMs` for it:
   * the turn brings main up to what the last holder pushed, so the update's push is not refused for a commit it
   * could have known of. `work` queues the write in the write queue: the turn is had before, so nothing queued
   * waits for it.
   */
  clusterTurn?: <R extends MainWrite>(gitdir: string, waitMs: number, work: () => Promise<R>) => Promise<R>;
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
  /**
   * Whether the service's housekeeping is repacking the repository now: the pack files are not looked at
   * meanwhile (a `git gc` removes packs, and with them unreachable objects), the last look's fault stands.
   */
  repacking?: () => boolean;
}

export interface UpdateOptions {
  /**
   * Wait for the lock on main as long as it takes, never failing for it (kills and cleared kills). Other
   * updates give up with WriteConflictError after `lockTimeoutMs`, counted from the call: waiting for the
   * lock, or queued behind an update that waits for it. Such an update is urgent: the publishing of another
   * ahead of it is cut off after `cutPublishAfterMs` (OpenOptions).
   */
  waitForLock?: boolean;
  /**
   * With `waitForLock`: cut off the publishing of an update ahead of it at once, not after `cutPublishAfterMs`
   * (a kill made again here from another control plane's record: that one gave the git host its time already).
   */
  cutAtOnce?: boolean;
  /**
   * With `waitForLock`: in remote mode, the publish waits for the git remote's answer while the remote is
   * reachable, rather than moving main once the remote has been given a moment (a clear sent with
   * `expectedVersion`: a remote main that moved meanwhile is then brought here and `fn` decides again on it).
   */
  awaitRemote?: boolean;
  /**
   * A branch other than main that the write function decides on (a proposal's, approving it): in remote mode it is
   * fetched first (OpenOptions.fetchBranch), in the update's turn and before the update is queued, so what another
   * control plane wrote to it before is read. Not with `waitForLock`.
   */
  withBranch?: string;
  /**
   * Runs once main has moved to the new commit (on `parent`), before the move is announced to onMainMoved
   * listeners: how a kill is served by its own fast path rather than by the reload the announcement starts.
   * It must not throw; the next update waits for it.
   */
  beforeAnnounce?: (commit: string, parent: string | null) => Promise<void>;
}

/** One organisation's flags repository. See index.ts for the contract of each member. */
export class FlagRepository {
  private readonly objects: ObjectStore;
  private readonly loader: StateLoader;
  private readonly history: History;
  private readonly graph: CommitGraph;
  private readonly served: ServedStates;
  private readonly servedCache: ServedHistoryCache | undefined;
  private readonly moves: MainMoves;
  private readonly committer: ChangeCommitter;
  private readonly writes: WriteQueue;
  private readonly branchRefs: Branches;
  private watcher: RefWatcher | undefined;
  private watching: Promise<void> | undefined;
  private closed = false;
  private readonly faults: StorageFaults;
  /** What the last look at the files on disk found wrong (probeReadable), while it lasts. */
  private probeFault: StorageFaultError | undefined;
  /** What the last look at the pack files found wrong (ObjectStore.checkPackFiles). */
  private packFault: StorageFaultError | undefined;
  /** Why evaluation cannot serve main's head (setServingFault), while it cannot. */
  private servingFault: StorageFaultError | undefined;

  private constructor(
    readonly gitdir: string,
    readonly readOnly: boolean,
    private readonly options: OpenOptions,
    private readonly logger: Logger,
  ) {
    this.objects = new ObjectStore(gitdir, { durable: options.durable });
    this.faults = new StorageFaults(logger);
    const signer = options.signingKey ? new CommitSigner(options.signingKey) : null;
    const caching = !readOnly && options.parseCache !== false;
    const cache = caching ? ParseCache.open(gitdir, logger) : undefined;
    this.graph = new CommitGraph(this.objects);
    const folders = new ProjectFolders(this.objects, this.graph, parseRepositoryFile);
    this.servedCache = caching ? ServedHistoryCache.open(gitdir, logger) : undefined;
    const incumbents = new ClashIncumbents(this.objects, folders, this.servedCache);
    this.loader = new StateLoader(this.objects, parseRepositoryFile, { cache, incumbents });
    this.history = new History(this.objects, signer);
    this.served = new ServedStates(this.loader, this.objects, folders, this.servedCache, this.history);
    this.moves = new MainMoves(logger);
    this.committer = new ChangeCommitter(this.objects, this.loader, signer, options);
    this.writes = new WriteQueue(gitdir, this.objects, this.graph, this.loader, this.committer, this.moves, options, logger);
    this.branchRefs = new Branches(gitdir, this.objects, this.writes, this.committer, options);
  }

  static async open(options: OpenOptions): Promise<FlagRepository> {
    if (!options.gitdir === !options.dir) throw new Error('FlagRepository.open needs exactly one of gitdir and dir');
    const logger = options.logger ?? silentLogger;
    if (options.dir) {
      const gitdir = await checkoutGitdir(resolve(options.dir));
      const repo = new FlagRepository(gitdir, true, options, logger);
      repo.moves.last = await repo.head();
      return repo;
    }
    const gitdir = resolve(options.gitdir!);
    if (!(await isRepository(gitdir))) {
      if (!options.create) throw new Error(`${gitdir} is not a git repository`);
      await initBareRepository(gitdir);
      logger.info('created flags repository', { gitdir });
    }
    const repo = new FlagRepository(gitdir, false, options, logger);
    repo.moves.last = await repo.head();
    repo.assertMainNamesCommit(repo.moves.last);
    return repo;
  }

  /**
   * A main that names an object there but not a commit (a blob's id written into the ref by hand) is a damaged
   * ref, as one holding no object id is: CorruptRefError, naming the file. One that names a missing object
   * cannot be told from a lost object (a pack removed): that is a read fault of serving main, like any other.
   */
  private assertMainNamesCommit(head: string | null): void {
    if (head === null) return;
    let type: string | undefined;
    try {
      type = this.objects.readWrittenSync(head)?.type;
    } catch {
      return; // corrupt: a read fault when main is served
    }
    if (type === undefined || type === 'commit') return;
    const loose = join(this.gitdir, MAIN_REF);
    const file = existsSync(loose) ? loose : join(this.gitdir, 'packed-refs');
    throw new CorruptRefError(MAIN_REF, file, `holds the id of a ${type}, not of a commit`);
  }

  /** The commit up to which unsigned `Flagops-*` trailers are believed (OpenOptions), or null: none are. */
  get unsignedTrailersUpTo(): string | null {
    return this.options.unsignedTrailersUpTo ?? null;
  }

  /**
   * The commit `main` points at, or null before the first commit. A damaged ref file is a read fault
   * (CorruptRefError), and so is a main seen before and gone now, or a repository folder gone (main-head.ts).
   */
  head(): Promise<string | null> {
    return this.reading(readMainHead(this.gitdir, this.moves.last));
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
      // Unless the files on disk no longer hold it (probeReadable): memory serving it says nothing of them.
      if (served.commit === this.moves.last && !this.probeFault) this.faults.clear('read');
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

  /**
   * Whether main's head and its tree are still in the repository's files on disk (not only in memory, where
   * serving and writing would go on while a restart could serve none of it): a repository folder removed, a
   * pack deleted, a corrupt object; and whether every pack file is whole (verified when first seen, unless the
   * service wrote it) and as it was then (one damaged, truncated or removed with objects no other file holds). A read fault while they are not, and
   * writes refused until they are again.
   */
  async probeReadable(): Promise<void> {
    if (this.closed) return;
    // A fault counts when a second look, at once, finds it too: a repack that began during the first look (the
    // service's housekeeping, or git beside it) moves the files under it, and one look would refuse every write
    // until the next.
    const fault = (await this.lookAtFiles()) && (await this.lookAtFiles());
    this.probeFault = fault;
    if (fault) this.faults.note(fault);
  }

  /** What probeReadable finds wrong with the files on disk now, or undefined. */
  private async lookAtFiles(): Promise<StorageFaultError | undefined> {
    try {
      const head = await readMainHead(this.gitdir, this.moves.last);
      if (head !== null) {
        if (!this.objects.onDisk(head)) throw new StorageFaultError('read', `git object ${head.slice(0, 12)} (main's head) is missing`);
        const { tree } = await this.objects.readCommit(head);
        if (!this.objects.onDisk(tree)) throw new StorageFaultError('read', `git object ${tree.slice(0, 12)} (main's tree) is missing`);
      }
      if (!this.options.repacking?.()) {
        const fault = await this.objects.checkPackFiles();
        // A repack that began while the files were read moves them under the check: looked at again next time.
        if (!this.options.repacking?.()) this.packFault = fault;
      }
      return this.packFault;
    } catch (err) {
      return err instanceof StorageFaultError ? err : new StorageFaultError('read', (err as Error).message);
    }
  }

  /**
   * Told by what serves main (the evaluation server) that it cannot serve main's head, for the storage fault its
   * reload failed on, and that it serves it again (undefined). Meanwhile writes are refused: what they committed
   * would be acknowledged and never served.
   */
  setServingFault(fault: StorageFaultError | undefined): void {
    this.servingFault = fault;
  }

  /**
   * Why a write on main is refused now, before anything is committed (a push too), or undefined: main's head is
   * not on disk, or not servable.
   */
  writesRefused(): StorageFaultError | undefined {
    return this.probeFault ?? this.servingFault;
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
  update<T>(fn: WriteFn<T>, options: UpdateOptions = {}): Promise<UpdateResult<T>> {
    if (this.readOnly) return Promise.reject(new Error(`${this.gitdir} was opened read-only`));
    // Not acknowledged on a history a restart could not serve, nor on a head evaluation cannot serve.
    const refusal = this.writesRefused();
    if (refusal) return Promise.reject(refusal);
    const deadline = options.waitForLock ? Number.POSITIVE_INFINITY : Date.now() + (this.options.lockTimeoutMs ?? 5_000);
    const run = options.waitForLock
      ? this.writes.urgent(
          () => this.writes.tryUpdate(fn, deadline, undefined, options.beforeAnnounce, options.awaitRemote ? 'await-remote' : 'urgent'),
          options.cutAtOnce,
        )
      : this.contended(deadline, async () => {
          if (options.withBranch !== undefined) await this.options.fetchBranch?.(this.gitdir, options.withBranch);
          return this.writes.serializedUntil(deadline, () => this.writes.tryUpdate(fn, deadline, undefined, options.beforeAnnounce));
        });
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
    const refusal = this.writesRefused();
    if (refusal) return Promise.reject(refusal);
    const deadline = Date.now() + (this.options.lockTimeoutMs ?? 5_000);
    return this.writing(
      this.writes.serializedUntil(deadline, () => this.writes.trySeries(changes, deadline)),
      (series) => series.outcomes.some((o) => o.committed),
    );
  }

  /**
   * Runs an update; where control planes share this repository's remote (clusterTurn), in this control plane's
   * turn among them, so that writes through several are ordered before they reach the remote rather than
   * racing for its main, the loser fetching and making its change again. The turn is taken before the update
   * is queued, so a kill queued meanwhile never waits for another control plane.
   */
  private contended<R extends MainWrite>(deadline: number, work: () => Promise<R>): Promise<R> {
    const turn = this.options.clusterTurn;
    return turn ? turn(this.gitdir, Math.max(0, deadline - Date.now()), work) : work();
  }

  /**
   * Builds a series of changes (as `updateSeries`) on another commit and moves main from its head to the series'
   * tip, which need not descend from it: how remote mode puts kills made here while the remote was unreachable on
   * top of what the remote got meanwhile. `plan` is asked with main's head on every attempt, in the write queue,
   * so that what main got since it was last read is rebuilt too, never dropped. Each change checks on the state it
   * is given whether it is still to be made (a kill another control plane already pushed makes no commit); with
   * none made, main moves to the commit the plan builds on.
   */
  rebuildMainOnto<T>(plan: MainRebuild<T>): Promise<SeriesResult<T>> {
    if (this.readOnly) return Promise.reject(new Error(`${this.gitdir} was opened read-only`));
    return this.writing(
      this.writes.serialized(() => this.writes.trySeries([], Number.POSITIVE_INFINITY, plan, true)),
      (series) => series.outcomes.some((o) => o.committed),
    );
  }

  /**
   * Commits a change on a new branch `ref` (a proposal: main's head plus this one commit) without moving
   * main. The change is checked as `update` checks it; a change that leaves the tree as it is makes no commit
   * and no branch (`committed: false`). WriteConflictError when `ref` exists already.
   */
  commitOnNewBranch<T>(ref: string, fn: WriteFn<T>): Promise<UpdateResult<T>> {
    if (this.readOnly) return Promise.reject(new Error(`${this.gitdir} was opened read-only`));
    return this.writing(this.branchRefs.commitOnNewBranch(ref, fn), (outcome) => outcome.committed);
  }

  /**
   * Adds a commit that changes no file to branch `ref`, which must point at `expected` (a proposal's
   * rejection is recorded so). Returns the new commit; WriteConflictError when the branch moved.
   * `precondition` runs first, in the write queue, so no update of main made here runs between it and the
   * branch's move; throwing records nothing. Run as an update is (in the turn among control planes, the branch
   * fetched first in remote mode), so `precondition` reads main and the branch with every other control plane's
   * writes before it.
   */
  recordOnBranch(ref: string, expected: string, meta: CommitMeta, precondition?: () => Promise<void>): Promise<string> {
    if (this.readOnly) return Promise.reject(new Error(`${this.gitdir} was opened read-only`));
    const deadline = Date.now() + (this.options.lockTimeoutMs ?? 5_000);
    const recorded = this.contended(deadline, async () => {
      await this.options.fetchBranch?.(this.gitdir, ref);
      const oid = await this.branchRefs.recordOnBranch(ref, expected, meta, precondition);
      // Main stays as it was: the turn's next holder has nothing of this to take in.
      return { committed: false, commit: null, oid };
    });
    return this.writing(
      recorded.then((r) => r.oid),
      () => true,
    );
  }

  /** The commit a branch points at (`refs/heads/...`), or null when it does not exist. */
  branch(ref: string): Promise<string | null> {
    return this.branchRefs.branch(ref);
  }

  /**
   * Brings a branch other than main to what the git remote holds (remote mode; nothing elsewhere): one another
   * control plane made a moment ago is then found here before the next pull brings it. Throws when the remote
   * cannot be read.
   */
  async fetchBranch(ref: string): Promise<void> {
    await this.options.fetchBranch?.(this.gitdir, ref);
  }

  /** Every branch whose name starts with `prefix` (`refs/heads/proposals/`), with its commit, sorted by name. */
  branches(prefix: string): Promise<Array<{ ref: string; oid: string }>> {
    return this.branchRefs.branches(prefix);
  }

  /** Subscribes to moves of `main`; returns the unsubscribe function. Listeners must not throw (it is logged). */
  onMainMoved(listener: (event: MainMoved) => void): () => void {
    return this.moves.listen(listener);
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
    return this.writes
      .serialized(async () => {
        if (!this.closed) this.moves.observe(await this.head(), 'external');
      })
      .catch((err) => this.logger.warn('reading main failed', { err }));
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
    this.moves.clear();
    await this.loader.close();
    await this.servedCache?.close();
    this.objects.close();
  }

  readCommit(oid: string): Promise<CommitInfo> {
    return this.history.readCommit(oid);
  }

  changedPaths(oid: string): Promise<ChangedPath[]> {
    return this.graph.changedPaths(oid);
  }

  firstParentLog(options: { from: string | null; until?: string | null; limit?: number }): Promise<CommitInfo[]> {
    return this.history.firstParentLog(options);
  }

  height(oid: string): Promise<number> {
    return this.graph.height(oid);
  }

  /** Whether `oid` is one of main's commits (its first-parent chain); false for a commit this repository lacks. */
  async onMain(oid: string): Promise<boolean> {
    const head = await this.head();
    return head !== null && this.graph.inFirstParentChain(head, oid);
  }

  /**
   * The objects `commit` adds to its first parent, for another clone at that parent to take without fetching
   * (remote mode: the control plane that pushed hands them to the others); null past `maxBytes`.
   */
  objectsAddedBy(commit: string, maxBytes: number): Promise<AddedObjects | null> {
    return objectsAddedBy(this.objects, commit, maxBytes);
  }

  /** objectsAddedBy as a packfile: what a push of `commit` onto its parent sends. */
  async packAddedBy(commit: string, maxBytes: number): Promise<{ parent: string; pack: Buffer } | null> {
    const added = await this.objectsAddedBy(commit, maxBytes);
    return added && { parent: added.parent, pack: packOfAdded(added) };
  }

  /** Takes objects another clone's objectsAddedBy gave; true when `commit` (on `parent`) is then complete here. */
  writeAddedObjects(framed: Buffer, commit: string, parent: string): Promise<boolean> {
    return writeAddedObjects(this.objects, framed, commit, parent);
  }

  treeOid(commit: string, path: string): Promise<string | null> {
    return this.graph.treeOid(commit, path);
  }

  /** The text of a file version, by blob oid (as changedPaths names them): what the audit trail reads of a push. */
  async readBlob(oid: string): Promise<string> {
    return (await this.objects.readTyped(oid, 'blob')).toString('utf8');
  }

  resolveRevision(rev: string): Promise<string> {
    return resolveRevision(this.gitdir, this.objects, rev);
  }
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
