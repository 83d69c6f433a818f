import { createReadStream } from 'node:fs';
import { type FileHandle, open, stat, truncate } from 'node:fs/promises';
import { stateWriteFault, writeFileAtomic } from '../../state-files/state-files.js';
import type { CountEntry } from '../count-store.js';

/** Counts are per UTC hour: an entry whose hour does not start one is not ours. */
const HOUR_MS = 3_600_000;

export const STATS_LOG_FILE = 'evaluations.jsonl';

export interface StatsLogLoad {
  log: StatsLog;
  /** Complete lines that could not be read as a count (skipped). */
  invalidLines: number;
  /** Whether a partial last line, left by a crash mid-write, was cut off. */
  tornLineRemoved: boolean;
}

/**
 * The append-only stats file: one JSON line per (hour, scope, flag, variation) delta. Each append is
 * fsynced, so a crash loses at most the counts not yet flushed; a crash mid-append leaves a partial last
 * line, which the next open cuts off before appending after it.
 */
export class StatsLog {
  private constructor(
    private readonly file: string,
    private handle: FileHandle,
    /** Bytes in the file now; what compaction decisions are made on. */
    public size: number,
  ) {}

  /** Opens (or creates) the file, handing every valid entry in it to `onEntry`. */
  static async open(file: string, onEntry: (entry: CountEntry) => void): Promise<StatsLogLoad> {
    let invalidLines = 0;
    let size = 0;
    let tail: Buffer = Buffer.alloc(0);
    try {
      for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
        size += chunk.length;
        const buf = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
        let start = 0;
        for (let nl = buf.indexOf(0x0a, start); nl !== -1; nl = buf.indexOf(0x0a, start)) {
          const line = buf.toString('utf8', start, nl);
          start = nl + 1;
          if (line.trim() === '') continue;
          const entry = parseEntry(line);
          if (entry) onEntry(entry);
          else invalidLines++;
        }
        tail = buf.subarray(start);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    // Appending after a partial line would glue the next line onto it; cut it off first.
    if (tail.length > 0) {
      size -= tail.length;
      await truncate(file, size);
    }
    const handle = await open(file, 'a', 0o600);
    return { log: new StatsLog(file, handle, (await stat(file)).size), invalidLines, tornLineRemoved: tail.length > 0 };
  }

  /** Appends the entries and fsyncs. On failure the file is cut back, so a retry cannot count twice. */
  async append(entries: Iterable<CountEntry>): Promise<void> {
    const data = Buffer.from(formatEntries(entries), 'utf8');
    if (data.length === 0) return;
    try {
      await this.handle.appendFile(data);
      await this.handle.datasync();
    } catch (err) {
      await this.handle.truncate(this.size).catch(() => undefined);
      throw stateWriteFault(this.file, err);
    }
    this.size += data.length;
  }

  /** Replaces the whole file with `entries`, atomically: a crash leaves the old file or the new one. */
  async rewrite(entries: Iterable<CountEntry>): Promise<void> {
    const data = formatEntries(entries);
    await this.handle.close();
    try {
      await writeFileAtomic(this.file, data, 0o600);
    } finally {
      this.handle = await open(this.file, 'a', 0o600);
      this.size = (await this.handle.stat()).size;
    }
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

function formatEntries(entries: Iterable<CountEntry>): string {
  let out = '';
  for (const e of entries) {
    out += `${JSON.stringify({ h: new Date(e.hour).toISOString(), s: e.scope, f: e.flagKey, v: e.variation, n: e.count })}\n`;
  }
  return out;
}

function parseEntry(line: string): CountEntry | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { h, s, f, v, n } = value as Record<string, unknown>;
  if (typeof h !== 'string' || typeof s !== 'string' || typeof f !== 'string' || typeof v !== 'string') return null;
  const hour = Date.parse(h);
  if (!Number.isFinite(hour) || hour % HOUR_MS !== 0) return null;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) return null;
  return { hour, scope: s, flagKey: f, variation: v, count: n };
}
