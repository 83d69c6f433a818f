import { appendFile, chmod, mkdir, open, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isEnvironmentName } from '@flagops/core';
import { InvalidInputError, NotFoundError } from '../../errors/kinds.js';
import { parseCountReport } from '../../eval-server/counts.js';
import type { SnapshotHolder } from '../../eval-server/snapshot-holder.js';
import { statsScope } from '../../stats/evaluation-counter.js';

export interface BatchEntry {
  scope: string;
  flagKey: string;
  variation: string;
  hourStartMs: number;
  count: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A replica's counts batch: `{ batchId, scopes: [{ projectId, environment, counts: [...] }] }`, each scope's
 * `counts` in the format of POST /v1/counts and checked by the same parser. Checked whole before anything
 * is counted, so a refused batch left nothing behind.
 */
export function countsBatch(body: unknown, org: string, holder: SnapshotHolder): { batchId: string; entries: BatchEntry[] } {
  if (!isObject(body)) throw new InvalidInputError('the body must be { batchId, scopes }', 'body');
  const { batchId, scopes } = body;
  if (typeof batchId !== 'string' || !/^[A-Za-z0-9-]{8,64}$/.test(batchId))
    throw new InvalidInputError('batchId must be 8 to 64 letters, digits or dashes', 'batchId');
  if (!Array.isArray(scopes)) throw new InvalidInputError('scopes must be an array', 'scopes');
  const now = Date.now();
  const entries: BatchEntry[] = [];
  scopes.forEach((s, i) => {
    if (!isObject(s) || typeof s.projectId !== 'string' || !isEnvironmentName(s.environment)) {
      throw new InvalidInputError(`scopes[${i}] must be { projectId, environment, counts }`, `scopes[${i}]`);
    }
    const view = holder.view(org, s.projectId, s.environment);
    if (!view) throw new NotFoundError(`project ${s.projectId}`);
    const scope = statsScope(org, s.projectId, s.environment);
    // A replica adds up what it served and what SDKs reported to it (each report bounded there) for as long as
    // upstream was away: its entries are not bound per entry, only by what the stats can hold.
    const rules = { hasFlag: (key: string) => view.compiled.has(key), now, maxCount: Number.MAX_SAFE_INTEGER };
    for (const e of parseCountReport({ counts: s.counts }, rules)) entries.push({ scope, ...e });
  });
  return { batchId, entries };
}

/**
 * The count batches already taken, per organisation, so that a replica retrying a batch whose answer it lost
 * is not counted twice — across a control-plane restart too. A batch id is written to the ledger file (and
 * synced) before its counts are added: a crash in between loses that batch's counts, which the stats already
 * allow for the last flush interval, and never counts it twice. Ids are kept for a day (replicas retry
 * within minutes) and at most `limit` per organisation; the file is rewritten without the expired ones at
 * start. Owner-only (0600), as all state is.
 */
export class BatchLedger {
  private readonly seen = new Map<string, Map<string, number>>();
  private readonly loaded: Promise<void>;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly file?: string,
    private readonly limit = 100_000,
    private readonly keepMs = 24 * 3600_000,
    private readonly now: () => number = Date.now,
  ) {
    this.loaded = file === undefined ? Promise.resolve() : this.load(file);
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
    if (this.file !== undefined) {
      const line = `${JSON.stringify({ org, id: batchId, at: this.now() })}\n`;
      const file = this.file;
      this.writes = this.writes.then(() => appendSynced(file, line));
      await this.writes;
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
    await mkdir(path.dirname(file), { recursive: true });
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
    await writeFile(file, kept.join(''), { mode: 0o600 });
    // The mode above applies to a new file only; one written by an earlier version was 0644.
    await chmod(file, 0o600);
  }
}

async function appendSynced(file: string, line: string): Promise<void> {
  await appendFile(file, line, { mode: 0o600 });
  const handle = await open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
