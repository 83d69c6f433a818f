import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type Logger, silentLogger } from '../../log/logger.js';
import type { CountEntry, CountStore } from '../count-store.js';
import type { Unsubscribe } from '../unsubscribe.js';
import { STATS_LOG_FILE, StatsLog } from './stats-log.js';

export interface FileCountStoreOptions {
  /** The log is rewritten aggregated once it grows past this (and past twice its last compacted size). Default 16 MiB. */
  compactAboveBytes?: number;
  logger?: Logger;
}

const DEFAULT_COMPACT_BYTES = 16 * 1024 * 1024;

/**
 * Counts in `<statsDir>/evaluations.jsonl`, append-only (StatsLog): every add is one fsynced append of one line
 * per count. The log is rewritten aggregated, without expired hours, when it has grown (tidy) or held lines to
 * drop when read.
 */
export class FileCountStore implements CountStore {
  private log: StatsLog | undefined;
  private compactedSize = 0;
  /** The log read had unreadable or expired lines, or was already big: the next tidy rewrites it. */
  private rewriteDue = false;
  private readonly compactAboveBytes: number;
  private readonly logger: Logger;

  constructor(
    private readonly dir: string,
    options: FileCountStoreOptions = {},
  ) {
    this.compactAboveBytes = options.compactAboveBytes ?? DEFAULT_COMPACT_BYTES;
    this.logger = options.logger ?? silentLogger;
  }

  async read(oldestHour: number, onEntry: (entry: CountEntry) => void): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    let expired = 0;
    const { log, invalidLines, tornLineRemoved } = await StatsLog.open(path.join(this.dir, STATS_LOG_FILE), (entry) => {
      if (entry.hour >= oldestHour) onEntry(entry);
      else expired++;
    });
    this.log = log;
    this.compactedSize = log.size;
    if (tornLineRemoved) this.logger.warn('stats: removed a partial last line left by an interrupted write');
    if (invalidLines > 0) this.logger.warn('stats: skipped unreadable lines', { invalidLines });
    this.rewriteDue = log.size > this.compactAboveBytes || invalidLines > 0 || expired > 0;
  }

  async add(entries: Iterable<CountEntry>): Promise<void> {
    await this.opened().append(entries);
  }

  async tidy(_oldestHour: number, current: () => Iterable<CountEntry>): Promise<void> {
    const log = this.opened();
    if (!this.rewriteDue && log.size <= Math.max(this.compactAboveBytes, 2 * this.compactedSize)) return;
    await log.rewrite(current());
    this.rewriteDue = false;
    this.compactedSize = log.size;
    this.logger.info('stats: compacted the evaluation log', { bytes: log.size });
  }

  /** One service owns the stats log: nothing else adds to it. */
  onChange(_listener: () => void): Unsubscribe {
    return () => {};
  }

  async close(): Promise<void> {
    const log = this.log;
    this.log = undefined;
    await log?.close();
  }

  private opened(): StatsLog {
    if (!this.log) throw new Error('the stats log is not open: read it first');
    return this.log;
  }
}
