import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { addCounts } from '../../features/stats/count-maps.js';
import { addMicros, MAX_KEPT_TRACK_NAMES } from '../../features/stats/event-counts.js';
import { hourStart } from '../../features/stats/hours.js';
import type { Logger } from '../../foundations/log/logger.js';
import { writeFileAtomic } from '../../foundations/state-files/state-files.js';
import { MAX_COUNT_ENTRIES } from '../eval-server/counts.js';
import { type UpstreamClient, UpstreamError } from './upstream-client.js';

interface Scope {
  projectId: string;
  environment: string;
  counts: Array<{ flagKey: string; variation: string; hour: string; count: number }>;
  /** Exposure events, in the format of `counts`. */
  exposures: Array<{ flagKey: string; variation: string; hour: string; count: number }>;
  /** Track events per name and hour: how many, and the sum of their values in millionths. */
  track: Array<{ name: string; hour: string; count: number; sumMicros: number }>;
}

/** What a pending entry is: an evaluation count, an exposure count or a track count. */
type Kind = 'c' | 'e' | 't';

interface Batch {
  batchId: string;
  scopes: Scope[];
}

const SEP = '\u0000';

/**
 * The evaluations a replica answered, and the events SDKs sent it, forwarded to the control plane's stats exactly once: counts gather
 * in memory and leave in batches, one at a time. A batch keeps its id until upstream acknowledges it, so a
 * retry after a lost answer is recognised upstream and not counted twice; a batch upstream refuses (4xx) is
 * dropped, as the SDK does; anything else is retried, with newer counts waiting behind it.
 */
export class ReplicaCounts {
  /** kind, project, environment, flag key (or event name), variation, hour → count and sum */
  private pending = new Map<string, { count: number; sum: number }>();
  private inFlight: Batch | null = null;
  /** Batches made before a stop and not acknowledged then, oldest first: sent, with their ids, before new ones. */
  private queued: Batch[] = [];
  /** Whether the spool file holds batches not yet acknowledged. */
  private spooled = false;
  private sending: Promise<void> | null = null;
  /** Per project, the track event names forwarded in the current hour (see addTrack), and whether a drop was logged. */
  private trackNames = new Map<string, { hour: number; names: Set<string>; logged: boolean }>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
    /** Where what upstream has not acknowledged at a stop is kept for the next start; none: it is lost. */
    private readonly spool?: string,
  ) {}

  /**
   * Takes back what the last stop kept (its batches keep their ids, so one upstream had taken before its answer
   * was lost is still counted once). The file stays until they are acknowledged: a crash before loses nothing.
   */
  async restore(): Promise<void> {
    if (this.spool === undefined) return;
    const text = await readFile(this.spool, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (text === null) return;
    try {
      this.queued = (JSON.parse(text) as { batches: Batch[] }).batches;
      this.spooled = true;
    } catch (err) {
      // A file cut short by a crash while it was written cannot be: written atomically. Said, and set aside.
      this.logger.error('counts kept at the last stop are unreadable; they are not sent', {
        file: this.spool,
        err: (err as Error).message,
      });
      await rm(this.spool, { force: true });
    }
  }

  /** One evaluation this replica answered. */
  record(projectId: string, environment: string, flagKey: string, variation: string): void {
    this.add(projectId, environment, flagKey, variation, hourStart(this.now()), 1);
  }

  /** Counts an SDK reported to this replica (POST /v1/counts), passed on with the replica's own. */
  add(projectId: string, environment: string, flagKey: string, variation: string, hourStartMs: number, count: number): void {
    this.put('c', projectId, environment, flagKey, variation, hourStartMs, count, 0);
  }

  /** Exposure events an SDK sent to this replica (POST /v1/events). */
  addExposure(projectId: string, environment: string, flagKey: string, variation: string, hourStartMs: number, count: number): void {
    this.put('e', projectId, environment, flagKey, variation, hourStartMs, count, 0);
  }

  /**
   * Track events of one name and hour an SDK sent to this replica, with the sum of their values in millionths.
   * A project's names are bounded upstream (MAX_KEPT_TRACK_NAMES); here, so that made-up names cannot grow what
   * waits for upstream either, a project's events of more names than that in one hour are dropped: false.
   */
  addTrack(projectId: string, environment: string, name: string, hourStartMs: number, count: number, sumMicros: number): boolean {
    const hour = hourStart(this.now());
    let seen = this.trackNames.get(projectId);
    if (seen === undefined || seen.hour !== hour) {
      seen = { hour, names: new Set(), logged: false };
      this.trackNames.set(projectId, seen);
    }
    if (!seen.names.has(name)) {
      if (seen.names.size >= MAX_KEPT_TRACK_NAMES) {
        if (!seen.logged) {
          seen.logged = true;
          this.logger.warn(`track events of new names are dropped: a replica forwards ${MAX_KEPT_TRACK_NAMES} names per project an hour`, {
            projectId,
            name,
          });
        }
        return false;
      }
      seen.names.add(name);
    }
    this.put('t', projectId, environment, name, '', hourStartMs, count, sumMicros);
    return true;
  }

  private put(
    kind: Kind,
    projectId: string,
    environment: string,
    key1: string,
    key2: string,
    hourStartMs: number,
    count: number,
    sum: number,
  ) {
    const key = [kind, projectId, environment, key1, key2, hourStartMs].join(SEP);
    const entry = this.pending.get(key);
    if (entry) {
      // Held within what the control plane takes (whole numbers it can hold exactly), as it holds its own.
      entry.count = addCounts(entry.count, count);
      entry.sum = addMicros(entry.sum, sum);
    } else this.pending.set(key, { count, sum });
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

  /** A clean stop: sends what it can, and keeps what upstream did not acknowledge for the next start (spool). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    while (this.inFlight === null && (this.queued.length > 0 || this.pending.size > 0)) {
      const before = this.unsent;
      await this.flush();
      if (this.unsent === before) break;
    }
    if (this.spool === undefined) return;
    const batches = [...(this.inFlight ? [this.inFlight] : []), ...this.queued];
    for (let batch = this.nextBatch(); batch !== null; batch = this.nextBatch()) batches.push(batch);
    this.inFlight = null;
    this.queued = [];
    if (batches.length === 0) {
      if (this.spooled) await rm(this.spool, { force: true });
      return;
    }
    await writeFileAtomic(this.spool, JSON.stringify({ batches }));
    this.logger.warn('counts upstream did not acknowledge are kept for the next start', { batches: batches.length, file: this.spool });
  }

  /** Counts not yet acknowledged by upstream (for health and tests). */
  get unsent(): number {
    let n = 0;
    for (const { count } of this.pending.values()) n += count;
    for (const batch of [...(this.inFlight ? [this.inFlight] : []), ...this.queued])
      for (const scope of batch.scopes) for (const c of [...scope.counts, ...scope.exposures, ...scope.track]) n += c.count;
    return n;
  }

  private async send(): Promise<void> {
    this.inFlight ??= this.queued.shift() ?? this.nextBatch();
    const batch = this.inFlight;
    if (batch === null) return;
    try {
      await this.upstream.postJson('/api/v1/replica/counts', batch);
      this.inFlight = null;
      // What the last stop kept is all acknowledged: its file goes.
      if (this.spooled && this.queued.length === 0 && this.spool !== undefined) {
        await rm(this.spool, { force: true });
        this.spooled = false;
      }
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
    for (const [key, { count, sum }] of this.pending) {
      const [kind, projectId, environment, key1, key2, hourMs] = key.split(SEP);
      const scopeKey = `${projectId}${SEP}${environment}`;
      let scope = scopes.get(scopeKey);
      if (!scope) {
        scope = { projectId, environment, counts: [], exposures: [], track: [] };
        scopes.set(scopeKey, scope);
      }
      const hour = new Date(Number(hourMs)).toISOString();
      // Past MAX_COUNT_ENTRIES of a kind in a scope, the rest goes in the next batch.
      if (kind === 't') {
        if (scope.track.length >= MAX_COUNT_ENTRIES) continue;
        scope.track.push({ name: key1, hour, count, sumMicros: sum });
      } else {
        const list = kind === 'c' ? scope.counts : scope.exposures;
        if (list.length >= MAX_COUNT_ENTRIES) continue;
        list.push({ flagKey: key1, variation: key2, hour, count });
      }
      this.pending.delete(key);
    }
    return { batchId: randomUUID(), scopes: [...scopes.values()] };
  }
}
