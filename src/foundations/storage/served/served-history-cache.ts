import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../log/logger.js';
import { PARSE_CACHE_DIR, parserFingerprint } from './parse-cache.js';

/** Bump when what is recorded, or what a record means, changes. */
const FORMAT = 1;
const CACHE_FILE = 'served-history.txt';
/** Records are written in batches, this long after the first of a batch. */
const FLUSH_AFTER_MS = 200;

/**
 * What ServedStates learned about history, kept under `<gitdir>/flagops-cache/`, so that a restart does not
 * walk back through history again: for a commit and a project, which environments it changed in what is
 * served; for a commit and a held-back unit, the commit its last valid state is from; for a commit and flags
 * clashing over an id or a key, which keeps it (ClashIncumbents). Every record is about commits, which never
 * change, and the file is fingerprinted by the code that derives them (the parser's fingerprint and the
 * sources of served-state and what it reads through), so it is never stale; it is safe to delete.
 *
 * One line per record, `key<TAB>value`, appended; a line cut short by a crash is ignored.
 */
export class ServedHistoryCache {
  private readonly records = new Map<string, string>();
  private loaded: Promise<void> | undefined;
  /** Whether the file on disk is ours (right header): otherwise the next write starts it over. */
  private fileIsOurs = false;
  private pending: string[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    /** `<gitdir>/flagops-cache/served-history.txt`. */
    private readonly path: string,
    /** The first line: format and fingerprint. A file with another is not ours. */
    private readonly header: string,
    private readonly logger: Logger,
  ) {}

  /** Undefined when the sources cannot be found to fingerprint (a bundled build): then nothing is kept. */
  static open(gitdir: string, logger: Logger): ServedHistoryCache | undefined {
    const fingerprint = servedFingerprint();
    if (fingerprint === undefined) return undefined;
    return new ServedHistoryCache(join(gitdir, PARSE_CACHE_DIR, CACHE_FILE), `flagops served history ${FORMAT} ${fingerprint}`, logger);
  }

  /** Reads the file once; every later call resolves at once. */
  load(): Promise<void> {
    this.loaded ??= Promise.resolve().then(() => {
      let text: string;
      try {
        text = fs.readFileSync(this.path, 'utf8');
      } catch {
        return;
      }
      const lines = text.split('\n');
      if (lines[0] !== this.header) return;
      this.fileIsOurs = true;
      // The last line is cut short if a write was: only lines that end in a newline count.
      for (const line of lines.slice(1, -1)) {
        const tab = line.indexOf('\t');
        if (tab > 0) this.records.set(line.slice(0, tab), line.slice(tab + 1));
      }
    });
    return this.loaded;
  }

  get(key: string): string | undefined {
    return this.records.get(key);
  }

  set(key: string, value: string): void {
    // Keys are made of commit ids, slugs and flag keys; a file name with a tab or newline is not recorded.
    if (this.closed || /[\t\n]/.test(key + value) || this.records.get(key) === value) return;
    this.records.set(key, value);
    this.pending.push(`${key}\t${value}\n`);
    this.timer ??= setTimeout(() => this.flush(), FLUSH_AFTER_MS);
    this.timer.unref?.();
  }

  /** Writes what is pending, then stops recording (nothing writes into the gitdir after the repository is closed). */
  async close(): Promise<void> {
    this.flush();
    this.closed = true;
    await this.writing;
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const lines = this.pending.join('');
    this.pending = [];
    this.writing = this.writing
      .then(async () => {
        // Not recursive: if the gitdir itself is gone (a removed repository), there is nothing to keep.
        await mkdir(dirname(this.path)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'EEXIST') throw err;
        });
        if (this.fileIsOurs) await appendFile(this.path, lines);
        else {
          await writeFile(this.path, `${this.header}\n${[...this.records].map(([key, value]) => `${key}\t${value}\n`).join('')}`);
          this.fileIsOurs = true;
        }
      })
      .catch((err) => this.logger.warn('saving the served history cache failed', { err }));
  }
}

let fingerprint: string | undefined | null = null;

/** The parser's fingerprint and the sources that derive what is recorded. */
function servedFingerprint(): string | undefined {
  if (fingerprint !== null) return fingerprint;
  const parser = parserFingerprint();
  try {
    const ext = extname(fileURLToPath(import.meta.url));
    const hash = createHash('sha1').update(`${parser}\n`);
    for (const name of [
      'served-state',
      'project-folders',
      'served-history-cache',
      'effective-versions',
      'clash-incumbents',
      'state-loader',
    ])
      hash.update(fs.readFileSync(fileURLToPath(new URL(`./${name}${ext}`, import.meta.url))));
    fingerprint = parser === undefined ? undefined : hash.digest('hex');
  } catch {
    fingerprint = undefined;
  }
  return fingerprint;
}
