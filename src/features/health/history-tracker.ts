import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type Logger, silentLogger } from '../../foundations/log/logger.js';
import { loopTurn } from '../../foundations/process/loop-turns.js';
import { classifyPath } from '../../foundations/repository/layout.js';
import { parseRepositoryFile } from '../../foundations/repository/parse-file.js';
import { Lru } from '../../foundations/storage/git/lru.js';
import type { ChangedPath, FlagRepository } from '../../foundations/storage/index.js';
import { type ConfigSummary, FlagHistory } from './flag-history.js';
import { oneValue, summarizeServed } from './served-summary.js';

/** What the tracker needs of an organisation's repository. */
export type HistorySource = Pick<FlagRepository, 'head' | 'firstParentLog' | 'changedPaths' | 'readBlob' | 'onMainMoved'>;

/** Bump when what a record means changes: an older file is then read as none (history is read again). */
const FORMAT = 3;
/** Commits of the log read at once: reading and parsing 256 packed commits held the event loop for tens of ms. */
const CHUNK = 32;
/** Commits folded in before the file on disk is written again (also during a long first read). */
const CHECKPOINT = 2_000;
/**
 * Fewer commits than that are written once main has not moved for this long: writing 10,000 flags takes
 * ~300 ms of the event loop in 5 ms turns, and a kill made meanwhile waits behind a turn at each of its steps
 * (76–93 ms instead of 7), so a burst of changes (kills in an incident) is not slowed by it...
 */
const SAVE_AFTER_MS = 5_000;
/** ...or this long after the first of them, whichever comes first. */
const SAVE_AT_MOST_AFTER_MS = 60_000;

/**
 * The cache file: a first line `{ format, head }`, then one line per flag (`["flag", id, record]`) and per
 * project environment with kills (`["kills", where, keys]`). Lines, so that reading and writing 10,000 flags
 * (a few MB) is split into turns of the event loop instead of one JSON.parse or JSON.stringify of the whole.
 */
interface CacheHeader {
  format: number;
  head: string | null;
}

/**
 * What main's first-parent history says of each flag (FlagHistory), for stale-flag detection: read once, then
 * followed as main moves, a commit at a time (its changed files, by blob: a config's summary is kept per blob
 * oid, so a config that goes back and forth is parsed once). A move that does not extend main (a rewrite)
 * reads the new line from its root. Kept in `cacheFile` so a restart reads only the commits made since.
 * Times are the commits' author times, as the audit trail shows them.
 */
export class HistoryTracker {
  private history = new FlagHistory();
  private head: string | null = null;
  private running: Promise<void> | null = null;
  private dirty = false;
  private closed = false;
  private unsaved = 0;
  private saving: Promise<void> = Promise.resolve();
  private failure: unknown = null;
  private unsubscribe: () => void = () => {};
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the first commit not yet written was folded in (Date.now()), while a save waits. */
  private unsavedSince: number | undefined;
  private lock: Promise<void> = Promise.resolve();
  private saveQueued = false;
  private readonly summaries = new Lru<string, ConfigSummary | null>(100_000);
  /** Per flag file blob: the summary key of its defaultValue while it is archived, '' while it is not, null if invalid. */
  private readonly archivedKeys = new Lru<string, string | null>(100_000);

  private constructor(
    private readonly repo: HistorySource,
    private readonly logger: Logger,
    private readonly cacheFile: string | undefined,
    private readonly checkpoint: number,
    private readonly saveDelays: { quietMs: number; atMostMs: number },
  ) {}

  static async open(options: {
    repo: HistorySource;
    logger?: Logger;
    cacheFile?: string;
    /** Commits folded in before the cache file is written again (default 2,000). */
    checkpointEvery?: number;
    /** Fewer are written once main has been still this long (default 5 s)... */
    saveWhenStillMs?: number;
    /** ...or this long after the first of them (default 60 s). */
    saveAtMostAfterMs?: number;
  }): Promise<HistoryTracker> {
    const tracker = new HistoryTracker(
      options.repo,
      options.logger ?? silentLogger,
      options.cacheFile,
      options.checkpointEvery ?? CHECKPOINT,
      {
        quietMs: options.saveWhenStillMs ?? SAVE_AFTER_MS,
        atMostMs: options.saveAtMostAfterMs ?? SAVE_AT_MOST_AFTER_MS,
      },
    );
    if (options.cacheFile) await tracker.readCache(options.cacheFile);
    // Subscribed before the first read of main, so a move meanwhile is not missed. Followed in the background.
    tracker.unsubscribe = options.repo.onMainMoved(() => {
      tracker.follow().catch(() => {});
    });
    return tracker;
  }

  /** The history as of main's head now (its moves announced or not). */
  async current(): Promise<{ head: string | null; history: FlagHistory }> {
    await this.follow();
    if (this.failure !== null) throw this.failure;
    return { head: this.head, history: this.history };
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.unsubscribe();
      if (this.saveTimer) clearTimeout(this.saveTimer);
      const pending = this.running ?? Promise.resolve();
      this.saving = this.saving.then(() => pending).then(() => this.writeCache());
    }
    return this.saving;
  }

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
          this.failure = err;
          this.logger.error('reading flag history for health failed', { err });
        }
      }
    } finally {
      this.running = null;
    }
  }

  private async syncTo(head: string | null): Promise<void> {
    if (head === this.head) return;
    const oids: Array<{ oid: string; at: number }> = [];
    let from: string | undefined = head ?? undefined;
    while (from !== undefined && from !== this.head) {
      const chunk = await this.repo.firstParentLog({ from, until: this.head, limit: CHUNK });
      for (const commit of chunk) oids.push({ oid: commit.oid, at: commit.author.timestamp * 1000 });
      await loopTurn();
      from = chunk.length === 0 ? undefined : chunk[chunk.length - 1].parents[0];
    }
    let history = this.history;
    if (this.head !== null && from !== this.head) {
      this.logger.info('main was rewritten; reading flag history again', { to: head });
      history = new FlagHistory();
    }
    for (let i = oids.length - 1; i >= 0; i--) {
      if (this.closed) return;
      const { oid, at } = oids[i];
      await this.exclusively(async () => {
        await this.apply(history, oid, at);
        if (history !== this.history) return;
        // The history in memory is always that of one commit, which is what the cache file says it is: a long
        // read is written every CHECKPOINT commits, and a restart goes on from there.
        this.head = oid;
        if (++this.unsaved >= this.checkpoint) this.save();
      });
      await loopTurn();
    }
    if (history !== this.history) {
      this.history = history;
      this.unsaved += oids.length;
    }
    this.head = head;
    if (this.unsaved >= this.checkpoint) this.save();
    else if (this.unsaved > 0) this.saveSoon();
  }

  /** Folds one commit's changed files into the history: flag files first, so a new flag's configs find it. */
  private async apply(history: FlagHistory, oid: string, at: number): Promise<void> {
    const paths = await this.repo.changedPaths(oid);
    for (let i = 0; i < paths.length; i++) {
      const p = paths[i];
      // An import of thousands of flags is one commit: its list of files is gone through in turns too.
      if (i % 256 === 255) await loopTurn();
      const where = classifyPath(p.path);
      if (where.kind !== 'flag') continue;
      const id = `${where.project}/${where.flag}`;
      if (p.change === 'deleted') {
        history.flagDeleted(id);
        continue;
      }
      if (p.change === 'added') history.flagAdded(id, at);
      const archivedKey = await this.archivedKeyOf(p);
      // An invalid flag file is not served: the flag keeps serving as it did.
      if (archivedKey !== null) history.archiveChanged(id, archivedKey, at);
    }
    for (const p of paths) {
      // A commit that adds thousands of flags (an import) is read in turns too.
      await loopTurn();
      const where = classifyPath(p.path);
      if (where.kind === 'config') {
        const summary = p.newOid === undefined ? undefined : await this.summaryOf(p);
        // An invalid config is not served: what it held keeps serving, so nothing changed.
        if (summary === null) continue;
        history.configChanged(`${where.project}/${where.flag}`, where.environment, summary, at);
      } else if (where.kind === 'kills') {
        const killed = p.newOid === undefined ? new Set<string>() : await this.killsOf(p);
        if (killed) history.killsChanged(where.project, where.environment, killed, at);
      }
    }
  }

  /**
   * Runs `fn` alone among the folding in of commits and the writing of the cache file: the file is written in
   * turns of the event loop, and must be the history of one commit.
   */
  private async exclusively<T>(fn: () => Promise<T>): Promise<T> {
    const before = this.lock;
    let release!: () => void;
    this.lock = new Promise((resolve) => {
      release = resolve;
    });
    await before;
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private async summaryOf(p: ChangedPath): Promise<ConfigSummary | null> {
    const oid = p.newOid!;
    const known = this.summaries.get(oid);
    if (known !== undefined) return known;
    const parsed = parseRepositoryFile(p.path, await this.repo.readBlob(oid)).file;
    const summary =
      parsed?.kind === 'config' ? { key: summarizeServed(parsed.value, false).key, offKey: summarizeServed(parsed.value, true).key } : null;
    this.summaries.set(oid, summary);
    return summary;
  }

  /** What a flag file says FlagHistory.archiveChanged needs: undefined while not archived; null when it is invalid. */
  private async archivedKeyOf(p: ChangedPath): Promise<string | undefined | null> {
    const oid = p.newOid!;
    let key = this.archivedKeys.get(oid);
    if (key === undefined) {
      const parsed = parseRepositoryFile(p.path, await this.repo.readBlob(oid)).file;
      if (parsed?.kind !== 'flag') key = null;
      else if (parsed.value.archivedAt === null) key = '';
      // As the snapshot serves it: an archived flag without a defaultValue serves null.
      else key = oneValue(parsed.value.defaultValue ?? null).key;
      this.archivedKeys.set(oid, key);
    }
    return key === '' ? undefined : key;
  }

  private async killsOf(p: ChangedPath): Promise<Set<string> | undefined> {
    const parsed = parseRepositoryFile(p.path, await this.repo.readBlob(p.newOid!)).file;
    return parsed?.kind === 'kills' ? new Set(Object.keys(parsed.value.kills)) : undefined;
  }

  private async readCache(file: string): Promise<void> {
    try {
      const lines = (await readFile(file, 'utf8')).split('\n');
      const header = JSON.parse(lines[0]) as Partial<CacheHeader>;
      if (header.format !== FORMAT || (header.head !== null && typeof header.head !== 'string')) return;
      const flags: unknown[] = [];
      const kills: unknown[] = [];
      for (let i = 1; i < lines.length; i++) {
        if (lines[i] === '') continue;
        await loopTurn();
        const [kind, key, value] = JSON.parse(lines[i]) as [unknown, unknown, unknown];
        if (kind === 'flag') flags.push([key, value]);
        else if (kind === 'kills') kills.push([key, value]);
        else return;
      }
      const history = FlagHistory.fromJSON({ flags, kills });
      if (!history) return;
      this.history = history;
      this.head = header.head ?? null;
    } catch {
      // No cache, or not ours: history is read from the start.
    }
  }

  /**
   * A few commits at a time are written later, together, rather than the whole file per commit: once main has
   * been still for a while (each move puts the write off again), or at the latest a while after the first.
   */
  private saveSoon(): void {
    if (!this.cacheFile) return;
    const now = Date.now();
    this.unsavedSince ??= now;
    if (this.saveTimer) clearTimeout(this.saveTimer);
    const delay = Math.min(this.saveDelays.quietMs, this.unsavedSince + this.saveDelays.atMostMs - now);
    this.saveTimer = setTimeout(
      () => {
        this.saveTimer = undefined;
        this.save();
      },
      Math.max(0, delay),
    );
    this.saveTimer.unref?.();
  }

  private save(): void {
    if (this.saveQueued) return;
    this.saveQueued = true;
    this.saving = this.saving.then(() => {
      this.saveQueued = false;
      return this.writeCache();
    });
  }

  /** Written to a temp file and renamed, so a crash leaves the previous file or none. Never throws. */
  private async writeCache(): Promise<void> {
    const file = this.cacheFile;
    this.unsavedSince = undefined;
    if (!file || this.unsaved === 0) return;
    this.unsaved = 0;
    const text = await this.exclusively(async () => {
      const { history, head } = this;
      const lines = [JSON.stringify({ format: FORMAT, head } satisfies CacheHeader)];
      for (const [id, record] of history.flags) {
        await loopTurn();
        lines.push(JSON.stringify(['flag', id, record]));
      }
      for (const [where, keys] of history.kills) lines.push(JSON.stringify(['kills', where, keys]));
      return `${lines.join('\n')}\n`;
    });
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(tmp, text, { mode: 0o600 });
      await rename(tmp, file);
    } catch (err) {
      await unlink(tmp).catch(() => {});
      this.logger.warn('writing the flag history cache failed; a restart reads more of the log', { err, file });
    }
  }
}
