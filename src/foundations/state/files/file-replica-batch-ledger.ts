import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { appendFileSynced, stateWriteFault } from '../../state-files/state-files.js';
import type { ReplicaBatchLedger } from '../replica-batch-ledger.js';

/** `<dataDir>/state/replica-batches.jsonl`: one JSON line per batch taken, `{ org, id, at }`. */
export const REPLICA_BATCH_FILE = 'replica-batches.jsonl';

/**
 * The ledger as a file: a batch id is appended (and synced) before its counts are added. Ids are kept for a day
 * and at most `limit` per organisation; the file is read, and rewritten without the expired ones, as the ledger
 * is made. Owner-only (0600), as all state is.
 */
export class FileReplicaBatchLedger implements ReplicaBatchLedger {
  private readonly seen = new Map<string, Map<string, number>>();
  private readonly loaded: Promise<void>;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly limit = 100_000,
    private readonly keepMs = 24 * 3600_000,
    private readonly now: () => number = Date.now,
  ) {
    this.loaded = this.load(file);
    this.loaded.catch(() => {}); // the claims that wait for it fail with its error
  }

  /**
   * Claims `batchId` for `org`: false when it was taken before (a retry). Resolves once the claim is durable,
   * so the caller adds the counts only after that.
   */
  async claim(org: string, batchId: string): Promise<boolean> {
    await this.loaded;
    const at = this.seen.get(org)?.get(batchId);
    if (at !== undefined && this.now() - at < this.keepMs) return false;
    // Claimed in memory before any await, so a concurrent retry of the same batch sees it.
    this.remember(org, batchId, this.now());
    const line = `${JSON.stringify({ org, id: batchId, at: this.now() })}\n`;
    const write = this.writes.then(() => appendFileSynced(this.file, line));
    this.writes = write.catch(() => undefined); // a failed append does not fail the claims after it
    try {
      await write;
    } catch (err) {
      // Not durable, so not taken: the replica's retry is a claim of its own, not a duplicate.
      this.seen.get(org)?.delete(batchId);
      throw err;
    }
    return true;
  }

  private remember(org: string, batchId: string, at: number): void {
    let ids = this.seen.get(org);
    if (!ids) {
      ids = new Map();
      this.seen.set(org, ids);
    }
    ids.set(batchId, at);
    // Maps iterate in insertion order: the first entries are the oldest.
    for (const [id, when] of ids) {
      if (ids.size <= this.limit && this.now() - when < this.keepMs) break;
      ids.delete(id);
    }
  }

  private async load(file: string): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true }).catch((err) => Promise.reject(stateWriteFault(file, err)));
    let text = '';
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const line of text.split('\n')) {
      try {
        const { org, id, at } = JSON.parse(line);
        if (typeof org === 'string' && typeof id === 'string' && typeof at === 'number' && this.now() - at < this.keepMs)
          this.remember(org, id, at);
      } catch {
        // a blank or torn last line
      }
    }
    const kept = [...this.seen].flatMap(([org, ids]) => [...ids].map(([id, at]) => `${JSON.stringify({ org, id, at })}\n`));
    try {
      await writeFile(file, kept.join(''), { mode: 0o600 });
      // The mode above applies to a new file only; one written by an earlier version was 0644.
      await chmod(file, 0o600);
    } catch (err) {
      throw stateWriteFault(file, err);
    }
  }
}
