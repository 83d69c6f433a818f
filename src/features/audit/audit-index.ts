import type { AuditEntry } from '@flagops/core';
import { type Logger, silentLogger } from '../../foundations/log/logger.js';
import type { PushReader } from '../../foundations/state/index.js';
import type { FlagRepository } from '../../foundations/storage/index.js';
import { type AuditPage, type AuditQuery, checkQuery } from './audit-query.js';
import { EntryLog } from './entry-log.js';
import { readIndexCache, writeIndexCache } from './index-cache.js';
import { readNewCommits } from './read-new-commits.js';

/** What the index needs of an organisation's repository. */
export type AuditSource = Pick<FlagRepository, 'head' | 'firstParentLog' | 'changedPaths' | 'readBlob' | 'onMainMoved'> &
  Partial<Pick<FlagRepository, 'unsignedTrailersUpTo'>>;

export interface AuditIndexOptions {
  repo: AuditSource;
  logger?: Logger;
  /** Keeps the index between restarts (e.g. `<dataDir>/state/audit/<org>.json`); without it, memory only. */
  cacheFile?: string;
  /** Who pushed which commit over git over HTTP. */
  pushes?: PushReader;
}

/** Commits indexed before the cache on disk is written again: a restart re-reads at most about this many. */
const CHECKPOINT = 256;

/**
 * The audit trail of one organisation: main's first-parent log, described once at open and
 * then followed as main moves, so a query never walks the log. A move that extends main indexes only the
 * new commits; one that does not (a force push, a reset) rebuilds from the new head, reusing the entries of
 * the commits still on main.
 */
export class AuditIndex {
  private log = new EntryLog();
  private running: Promise<void> | null = null;
  private dirty = false;
  /** The error of the last pass, while no pass has succeeded since. */
  private failure: unknown = null;
  private closed = false;
  private unsubscribe: () => void = () => {};
  /** Commits indexed since the cache was last written. */
  private unsaved = 0;
  private saving: Promise<void> = Promise.resolve();
  private readonly pushes: PushReader | undefined;

  private constructor(
    private readonly repo: AuditSource,
    private readonly logger: Logger,
    private readonly cacheFile: string | undefined,
    pushes: PushReader | undefined,
  ) {
    this.pushes = pushes;
  }

  static async open(options: AuditIndexOptions): Promise<AuditIndex> {
    const index = new AuditIndex(options.repo, options.logger ?? silentLogger, options.cacheFile, options.pushes);
    const started = performance.now();
    if (options.cacheFile) index.log = (await readIndexCache(options.cacheFile, index.logger)) ?? index.log;
    const cached = index.log.commitCount;
    // The cached entries name their pushers, but when each push was accepted is only in the push log: without
    // this read, a cache that holds main as it is leaves it unread until main moves, and budgets would count
    // those pushes from the dates their authors wrote.
    await index.pushes?.refresh();
    // Subscribe before the first read of main, so a move during the build is not missed.
    index.unsubscribe = options.repo.onMainMoved(() => void index.follow());
    await index.follow();
    if (index.failure !== null) {
      await index.close();
      throw index.failure;
    }
    index.logger.info('audit index built', {
      commits: index.log.commitCount,
      fromCache: cached,
      entries: index.log.size,
      ms: Math.round(performance.now() - started),
    });
    index.save();
    return index;
  }

  /**
   * Entries newest first. Waits for a move of main already announced, so a caller sees its own commit.
   * `side`: entries of other branches (proposals opened and rejected), newest first, merged in by time.
   */
  async query(query: AuditQuery, side: readonly AuditEntry[] = []): Promise<AuditPage> {
    checkQuery(query);
    if (this.running) await this.running;
    else if (this.failure !== null && !this.closed) await this.follow();
    return this.log.mergedPage(query, side);
  }

  /**
   * Main's entries newest first, from main as it is now (announced or not; or `at`, when the index holds it)
   * down to the first entry made by the control plane before `until` (EntryLog.recent), with the head they
   * were read at.
   */
  async recent(until: string, at?: string | null): Promise<{ head: string | null; entries: AuditEntry[] }> {
    // A caller that knows the head it works on (a write, checking a budget) need not read main's ref again
    // when the index holds that head already, as it does once it has followed the caller's own last commit.
    if (at === undefined || at !== this.log.head) await this.caughtUp();
    return { head: this.log.head, entries: this.log.recent(until) };
  }

  /** When the push that brought `commit` was accepted, for commits that came over git over HTTP. */
  pushedAt(commit: string): string | undefined {
    return this.pushes?.pushedAt(commit);
  }

  /** The entry of the commit on main that applied a proposal, or undefined while none has. */
  async appliedProposal(id: string): Promise<AuditEntry | undefined> {
    if (this.running) await this.running;
    else if (this.failure !== null && !this.closed) await this.follow();
    return this.log.appliedProposal(id);
  }

  /**
   * Resolves once the index holds main as it is now, announced or not: what a push's answer waits for, so
   * that an audit query right after it sees the pushed commits.
   */
  async caughtUp(): Promise<void> {
    if (this.closed) return;
    await this.follow();
    if (this.failure !== null) throw this.failure;
  }

  /**
   * Stops following main and resolves once what was indexed is in the cache on disk: every write started
   * before, and one more for what they did not cover. Whoever removes the cache's directory (a stop, a test)
   * awaits it, or a write still under way would recreate a file in it.
   */
  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.unsubscribe();
      // A pass already under way finishes first, so what it indexes is written too.
      const pending = this.running ?? Promise.resolve();
      this.saving = this.saving.then(() => pending).then(() => this.writeCache());
    }
    return this.saving;
  }

  /** Resolves when the cache writes started so far have finished (for shutdown and tests). */
  saved(): Promise<void> {
    return this.saving;
  }

  /** Brings the index up to main; moves announced meanwhile are folded into one more pass. */
  private follow(): Promise<void> {
    this.dirty = true;
    this.running ??= this.drain();
    return this.running;
  }

  private async drain(): Promise<void> {
    try {
      while (this.dirty && !this.closed) {
        this.dirty = false;
        try {
          await this.syncTo(await this.repo.head());
          this.failure = null;
        } catch (err) {
          // What is indexed keeps serving; the next move or query tries again.
          this.failure = err;
          this.logger.error('indexing the audit trail failed', { err });
        }
      }
    } finally {
      this.running = null;
    }
  }

  private async syncTo(head: string | null): Promise<void> {
    const indexed = this.log.head;
    if (head === indexed) return;
    if (head === null) {
      this.log = new EntryLog();
      return;
    }
    // Pushed commits are in the push log before main can move to them.
    await this.pushes?.refresh();
    const facts = {
      unsignedTrailersUpTo: this.repo.unsignedTrailersUpTo ?? null,
      pusherOf: (commit: string) => this.pushes?.pusherOf(commit),
    };
    const { commits, reachedUntil } = await readNewCommits(this.repo, head, indexed, this.log, facts);
    let log = this.log;
    if (!reachedUntil) {
      // The old head is not on the new first-parent line: the walk went down to the root, so `commits` is all of it.
      this.logger.info('main was rewritten; rebuilding the audit index', { from: indexed, to: head });
      log = new EntryLog();
    }
    for (const { oid, entries } of commits) log.append(oid, entries);
    this.log = log;
    this.unsaved += commits.length;
    if (this.unsaved >= CHECKPOINT) this.save();
  }

  private save(): void {
    this.saving = this.saving.then(() => this.writeCache());
  }

  /** Writes the index as it is now, unless nothing changed since the last write. Never throws. */
  private async writeCache(): Promise<void> {
    const file = this.cacheFile;
    if (!file || this.unsaved === 0) return;
    this.unsaved = 0;
    try {
      await writeIndexCache(file, this.log);
    } catch (err) {
      this.logger.warn('writing the audit index cache failed; a restart reads more of the log', { err, file });
    }
  }
}
