import type { Logger } from '../../log/logger.js';
import { execGitAtLowestPriority, gitRun } from './git-cli.js';

export interface HousekeepingOptions {
  /** Run `git gc --auto` after this many moves of main (0: never pack, not even roll up the commits' packs). */
  everyCommits: number;
  logger: Logger;
  /** Called with the repository and the git command (`repack`, `gc`) each time a run fails: the metrics count them. */
  onFailure?: (gitdir: string, step: string) => void;
}

/** Long enough for a 10,000-flag repository with years of history on a small machine. */
const GC_TIMEOUT_MS = 30 * 60_000;

/**
 * Moves of main between roll-ups of the packs commits leave (ObjectStore.writeObjects writes each commit's
 * objects as a small pack): as many as git's own gc.autoPackLimit, past which `git gc --auto` would repack
 * everything.
 */
export const ROLL_UP_EVERY = 50;

/**
 * Every commit adds a small pack (or a loose object or two), and in a big project a new copy of its
 * environment's tree (~0.4 MB at 10,000 flags), so repositories are packed now and then, as git hosts do.
 * Every ROLL_UP_EVERY moves, `git repack -d --geometric=2` combines the small packs and loose objects into
 * one (as deltas of each other: a tree's versions shrink to their differences), leaving packs whose sizes
 * at least double one to the next, so each object is repacked a logarithmic number of times. Every
 * `everyCommits` moves, `git gc --auto` runs after it, which prunes what nothing has referenced for two
 * weeks. Both run in the foreground of their own process (not detached, so a stop can end them, and ending
 * with the service when it is killed: execGitAtLowestPriority) with one pack thread, at the lowest CPU and
 * I/O priority, leaving the other core to serving. They start on the turn of the event loop after the move
 * that counts, not in it, so the commit's own answer goes first. Git's own locks make them safe beside the
 * store's writes; interrupted, they may leave temporary files, which the service removes at its next start
 * once they are an hour old (leftover-temp-files.ts).
 */
export class Housekeeping {
  private readonly moves = new Map<string, number>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(private readonly options: HousekeepingOptions) {}

  /**
   * Counts one move of main; every ROLL_UP_EVERY and every `everyCommits` moves, packs the repository in the
   * background and then calls `packed` (so that readers let go of packs that were combined and removed).
   */
  mainMoved(gitdir: string, packed: () => void = () => {}): void {
    const every = this.options.everyCommits;
    if (every <= 0 || this.stopping.signal.aborted) return;
    const moves = (this.moves.get(gitdir) ?? 0) + 1;
    this.moves.set(gitdir, moves % every);
    const full = moves >= every;
    if ((!full && moves % ROLL_UP_EVERY !== 0) || this.running.has(gitdir)) return;
    const run = new Promise((started) => setImmediate(started))
      .then(() => this.gc(gitdir, full))
      .then((done) => {
        if (done) packed();
      })
      .catch((err) => this.options.logger.error('after packing the repository', { gitdir, err }))
      .finally(() => this.running.delete(gitdir));
    this.running.set(gitdir, run);
  }

  /** Whether a gc of the repository is running now (its packs are being replaced). */
  busy(gitdir: string): boolean {
    return this.running.has(gitdir);
  }

  /** Resolves when no gc is running (tests, and stop). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }

  /** Ends a gc under way and waits for it to exit. */
  async close(): Promise<void> {
    this.stopping.abort();
    await this.idle();
  }

  /** True once every step succeeded; `full` adds `git gc --auto` to the roll-up. */
  private async gc(gitdir: string, full: boolean): Promise<boolean> {
    const started = performance.now();
    // The repository's own gc.auto is 0, so that no other git command packs it (init-repository.ts): git's default here.
    const config = ['-c', 'gc.autoDetach=false', '-c', 'pack.threads=1', '-c', 'gc.auto=6700'];
    const steps = [['repack', '-d', '-q', '--geometric=2'], ...(full ? [['gc', '--auto', '--quiet']] : [])];
    for (const step of steps) {
      if (this.stopping.signal.aborted) return false;
      const result = await gitRun(gitdir, [...config, ...step], {
        timeoutMs: GC_TIMEOUT_MS,
        signal: this.stopping.signal,
        launch: execGitAtLowestPriority,
      });
      if (this.stopping.signal.aborted) return false;
      if (result.code !== 0) {
        const stderr = result.stderr || 'no output (is the git CLI installed?)';
        this.options.logger.warn('packing the repository failed; it stays as it is until the next try', {
          gitdir,
          step: `git ${step[0]}`,
          code: result.code,
          stderr,
        });
        this.options.onFailure?.(gitdir, step[0]);
        return false;
      }
    }
    this.options.logger.info('repository packed', { gitdir, full, ms: Math.round(performance.now() - started) });
    return true;
  }
}
