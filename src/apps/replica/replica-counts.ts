import { randomUUID } from 'node:crypto';
import { hourStart } from '../../features/stats/hours.js';
import type { Logger } from '../../foundations/log/logger.js';
import { MAX_COUNT_ENTRIES } from '../eval-server/counts.js';
import { type UpstreamClient, UpstreamError } from './upstream-client.js';

interface Scope {
  projectId: string;
  environment: string;
  counts: Array<{ flagKey: string; variation: string; hour: string; count: number }>;
}

interface Batch {
  batchId: string;
  scopes: Scope[];
}

const SEP = '\u0000';

/**
 * The evaluations a replica answered, forwarded to the control plane's stats exactly once: counts gather
 * in memory and leave in batches, one at a time. A batch keeps its id until upstream acknowledges it, so a
 * retry after a lost answer is recognised upstream and not counted twice; a batch upstream refuses (4xx) is
 * dropped, as the SDK does; anything else is retried, with newer counts waiting behind it.
 */
export class ReplicaCounts {
  private pending = new Map<string, number>();
  private inFlight: Batch | null = null;
  private sending: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** One evaluation this replica answered. */
  record(projectId: string, environment: string, flagKey: string, variation: string): void {
    this.add(projectId, environment, flagKey, variation, hourStart(this.now()), 1);
  }

  /** Counts an SDK reported to this replica (POST /v1/counts), passed on with the replica's own. */
  add(projectId: string, environment: string, flagKey: string, variation: string, hourStartMs: number, count: number): void {
    const key = [projectId, environment, flagKey, variation, hourStartMs].join(SEP);
    this.pending.set(key, (this.pending.get(key) ?? 0) + count);
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  /** Sends the batch in flight, or a new one of what is pending; resolves when that attempt is over. */
  flush(): Promise<void> {
    this.sending ??= this.send().finally(() => {
      this.sending = null;
    });
    return this.sending;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    if (this.inFlight === null && this.pending.size > 0) await this.flush();
  }

  /** Counts not yet acknowledged by upstream (for health and tests). */
  get unsent(): number {
    let n = 0;
    for (const count of this.pending.values()) n += count;
    for (const scope of this.inFlight?.scopes ?? []) for (const c of scope.counts) n += c.count;
    return n;
  }

  private async send(): Promise<void> {
    this.inFlight ??= this.nextBatch();
    const batch = this.inFlight;
    if (batch === null) return;
    try {
      await this.upstream.postJson('/api/v1/replica/counts', batch);
      this.inFlight = null;
    } catch (err) {
      if (err instanceof UpstreamError && err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429) {
        this.logger.error('the control plane refused a counts batch; dropped', { batchId: batch.batchId, err: err.message });
        this.inFlight = null;
        return;
      }
      this.logger.warn('counts batch not delivered; will retry', { batchId: batch.batchId, err: (err as Error).message });
    }
  }

  private nextBatch(): Batch | null {
    if (this.pending.size === 0) return null;
    const scopes = new Map<string, Scope>();
    for (const [key, count] of this.pending) {
      const [projectId, environment, flagKey, variation, hourMs] = key.split(SEP);
      const scopeKey = `${projectId}${SEP}${environment}`;
      let scope = scopes.get(scopeKey);
      if (!scope) {
        scope = { projectId, environment, counts: [] };
        scopes.set(scopeKey, scope);
      }
      if (scope.counts.length >= MAX_COUNT_ENTRIES) continue; // the rest goes in the next batch
      scope.counts.push({ flagKey, variation, hour: new Date(Number(hourMs)).toISOString(), count });
      this.pending.delete(key);
    }
    return { batchId: randomUUID(), scopes: [...scopes.values()] };
  }
}
