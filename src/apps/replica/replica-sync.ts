import { readEventStream } from '@flagops/sdk/sse';
import type { Logger } from '../../foundations/log/logger.js';
import { isViewBody, type ReplicaHolder, type ViewListing, viewBody } from './replica-holder.js';
import type { ReplicaKeys } from './replica-keys.js';
import type { SnapshotFiles } from './snapshot-files.js';
import { failure, type UpstreamClient } from './upstream-client.js';
import { isKillChange } from './view-change.js';

export interface SyncOptions {
  /** Reconnect delays: doubling from the first to the last. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** How often the list of valid sdk keys is fetched (revocations reach replicas within this). */
  keysRefreshMs?: number;
  /** A stream silent this long (the control plane sends a heartbeat every 15 s) is taken for dead. */
  idleTimeoutMs?: number;
}

export interface SyncStatus {
  connected: boolean;
  /** When the replica last heard from the control plane, ISO-8601, or null. */
  lastSyncAt: string | null;
  /** Epoch ms of the last sign of life of the upstream stream (any event or its heartbeat), or null: the sync lag metric. */
  lastContactAt: number | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Keeps a replica's views equal to the control plane's: it follows GET /api/v1/replica/stream, reconciles
 * with the full listing sent on every (re)connect, applies a kill event over the view it serves (no fetch, no
 * recompilation), and fetches a view when its flags moved (with If-None-Match, so a race costs a 304). While the control plane is unreachable the last good views keep
 * serving (from disk after a restart) and the status says so; reconnecting catches up in one listing.
 */
export class ReplicaSync {
  private closed = false;
  private abort: AbortController | null = null;
  private queue: Promise<void> = Promise.resolve();
  private keysTimer: ReturnType<typeof setInterval> | undefined;
  private loop: Promise<void> | undefined;
  private firstSync: { promise: Promise<void>; resolve: () => void };
  readonly status: SyncStatus = { connected: false, lastSyncAt: null, lastContactAt: null };

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly holder: ReplicaHolder,
    private readonly files: SnapshotFiles,
    private readonly keys: ReplicaKeys,
    private readonly logger: Logger,
    private readonly options: SyncOptions = {},
  ) {
    let resolve = () => {};
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    this.firstSync = { promise, resolve };
  }

  /** Loads the views saved on disk, then follows upstream in the background. */
  async start(): Promise<void> {
    for (const { org, view } of await this.files.loadAll()) this.holder.put(org, view);
    this.loop = this.run();
    this.keysTimer = setInterval(() => void this.refreshKeys(), this.options.keysRefreshMs ?? 10_000);
    this.keysTimer.unref();
  }

  /** Resolves after the first complete sync with upstream, or after `timeoutMs`. */
  async synced(timeoutMs: number): Promise<boolean> {
    return Promise.race([this.firstSync.promise.then(() => true), sleep(timeoutMs).then(() => false)]);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.keysTimer);
    this.abort?.abort();
    await this.loop;
    await this.queue;
  }

  private async run(): Promise<void> {
    let delay = this.options.retryMinMs ?? 250;
    while (!this.closed) {
      try {
        await this.follow(() => {
          delay = this.options.retryMinMs ?? 250;
        });
      } catch (err) {
        if (!this.closed) this.logger.warn('upstream stream lost; serving the last good snapshots', { err: (err as Error).message });
      }
      this.status.connected = false;
      if (this.closed) return;
      await sleep(delay * (0.5 + Math.random() / 2)); // jitter: replicas cut off together do not return together
      delay = Math.min(delay * 2, this.options.retryMaxMs ?? 5_000);
    }
  }

  private async follow(onConnected: () => void): Promise<void> {
    this.abort = new AbortController();
    const res = await this.upstream.request('/api/v1/replica/stream', { signal: this.abort.signal, timeout: false });
    if (!res.ok || !res.body) throw await failure(res, '/api/v1/replica/stream');
    onConnected();
    this.status.lastContactAt = Date.now();
    const idleMs = this.options.idleTimeoutMs ?? 45_000;
    let idle = setTimeout(() => this.abort?.abort(), idleMs);
    try {
      await readEventStream(
        res.body,
        (event) => {
          const data = JSON.parse(event.data) as unknown;
          this.queue = this.queue
            .then(() => this.handle(event.event, data))
            .catch((err) => {
              this.logger.error('replica sync step failed', { err });
              this.abort?.abort(); // reconnecting reconciles from the full listing
            });
        },
        () => {
          this.status.lastContactAt = Date.now();
          clearTimeout(idle);
          idle = setTimeout(() => this.abort?.abort(), idleMs);
        },
      );
    } finally {
      clearTimeout(idle);
      await this.queue;
    }
  }

  private async handle(name: string, data: unknown): Promise<void> {
    if (name === 'versions') {
      const { org, snapshots } = data as { org: string; snapshots: ViewListing[] };
      this.holder.org = org;
      await Promise.all(snapshots.map((s) => this.fetchIfNewer(org, s)));
      const listed = new Set(snapshots.map((s) => `${s.projectId}/${s.environment}`));
      for (const view of this.holder.entries()) {
        if (listed.has(`${view.projectId}/${view.environment}`)) continue;
        this.holder.remove(view.projectId, view.environment);
        await this.files.remove(view.projectId, view.environment);
      }
      await this.refreshKeys();
      this.status.connected = true;
      this.status.lastSyncAt = new Date().toISOString();
      this.firstSync.resolve();
    } else if (name === 'version' && this.holder.org !== null) {
      await this.applyChange(this.holder.org, data as ViewListing);
      this.status.lastSyncAt = new Date().toISOString();
    }
  }

  /** One change on the feed: a kill is applied over the view it names; anything else fetches the view. */
  private async applyChange(org: string, change: ViewListing): Promise<void> {
    const served = this.holder.versionOf(change.projectId, change.environment);
    if (served !== undefined && served >= change.version) return;
    const killed = isKillChange(change) ? this.holder.applyKill(org, change) : undefined;
    if (killed) await this.files.save(org, viewBody(killed));
    else await this.fetchIfNewer(org, change);
  }

  private async fetchIfNewer(org: string, listing: ViewListing): Promise<void> {
    const served = this.holder.versionOf(listing.projectId, listing.environment);
    if (served !== undefined && served >= listing.version) return;
    const path = `/api/v1/replica/snapshots/${encodeURIComponent(listing.projectId)}/${listing.environment}`;
    const res = await this.upstream.request(path, { headers: served === undefined ? {} : { 'if-none-match': `"v${served}"` } });
    if (res.status === 304) return;
    if (!res.ok) throw await failure(res, path);
    const body = (await res.json()) as unknown;
    if (!isViewBody(body)) throw new Error(`upstream ${path}: not a snapshot view`);
    if (this.holder.put(org, body)) await this.files.save(org, body);
  }

  private async refreshKeys(): Promise<void> {
    try {
      const { keys } = await this.upstream.json<{ keys: Array<{ id: string; revoked: boolean }> }>('/api/v1/replica/keys');
      await this.keys.retain(new Set(keys.filter((k) => !k.revoked).map((k) => k.id)));
    } catch (err) {
      this.logger.debug('key list not refreshed', { err: (err as Error).message });
    }
  }
}
