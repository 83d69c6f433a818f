import { readEventStream } from '@flagops/sdk/sse';
import type { Logger } from '../../foundations/log/logger.js';
import type { EnvironmentView } from '../eval-server/environment-view.js';
import { type FeedLossReason, FeedLost, feedLoss } from './feed-loss.js';
import { isViewBody, type ReplicaHolder, type UpstreamListing, type ViewListing, viewBody } from './replica-holder.js';
import type { ReplicaKeys } from './replica-keys.js';
import type { SnapshotFiles } from './snapshot-files.js';
import { failure, type UpstreamClient } from './upstream-client.js';
import { type BehindEnvironment, compareWithServed } from './upstream-lag.js';
import type { RotationOptions, UpstreamRotation } from './upstream-rotation.js';
import { isKillChange } from './view-change.js';
import { isViewDelta } from './view-delta.js';

export interface SyncOptions extends RotationOptions {
  /** How often the list of valid sdk keys is fetched (revocations reach replicas within this). */
  keysRefreshMs?: number;
  /**
   * A stream silent this long is taken for dead. Default: three of the heartbeats the control plane announces on
   * connect (`heartbeatMs` in its `versions` event), and 20 s for one that announces none (it beats every 15 s).
   */
  idleTimeoutMs?: number;
  /** While the followed upstream is behind, how often its listing is read again to see it catch up: default 1 s. */
  behindRecheckMs?: number;
}

export interface SyncStatus {
  connected: boolean;
  /** The origin of the control plane the replica follows (or is trying to reach). */
  following: string;
  /** The environments (`project/environment`) the followed upstream is behind on: they keep what they serve. */
  behind: string[];
  /** Moves from one upstream to another, by why the one it left failed. */
  failovers: Partial<Record<FeedLossReason, number>>;
  /** When the replica last heard from the control plane, ISO-8601, or null. */
  lastSyncAt: string | null;
  /** The answer of the control plane that last refused the replica's token (401 or 403), until one takes it; else null. */
  tokenRefused: string | null;
  /** Epoch ms of the last sign of life of the upstream stream (any event or its heartbeat), or null: the sync lag metric. */
  lastContactAt: number | null;
}

const FEED = '/api/v1/replica/stream';
/** The silence that means a control plane is gone when it did not say how often it beats (older ones: every 15 s). */
const UNANNOUNCED_IDLE_MS = 20_000;
/** Heartbeats missed in a row before a control plane counts as hung. */
const MISSED_HEARTBEATS = 3;

/** How long the feed may be silent, from the heartbeat the `versions` event announces. */
function idleTimeoutFor(listing: unknown): number {
  const beat = isObject(listing) ? listing.heartbeatMs : undefined;
  return typeof beat === 'number' && Number.isFinite(beat) && beat > 0 ? MISSED_HEARTBEATS * beat : UNANNOUNCED_IDLE_MS;
}
const LISTING = '/api/v1/replica/snapshots';
/** What a replica's token must be, said when a control plane refuses it. */
export const TOKEN_NEEDED =
  'it needs an admin key (svc_adm_…) of the organisation, not limited to projects or environments and without an expiry (--token or FLAGOPS_REPLICA_TOKEN); retrying, and serving only the snapshots saved on disk meanwhile';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const viewKey = (projectId: string, environment: string) => `${projectId}/${environment}`;

/**
 * Keeps a replica's views equal to the control plane's it follows: it follows GET /api/v1/replica/stream,
 * reconciles with the full listing sent on every (re)connect, applies a kill event over the view it serves (no
 * fetch, no recompilation), and fetches a view when its flags moved (with If-None-Match, so a race costs a
 * 304). When the followed upstream fails it moves to the next (UpstreamRotation); a view is never replaced by an
 * older one, so an upstream that is behind on an environment leaves it as served until it catches up
 * (compareWithServed). While no upstream is reachable the last good views keep serving (from disk after a
 * restart) and the status says so.
 */
export class ReplicaSync {
  private closed = false;
  private abort: AbortController | null = null;
  private queue: Promise<void> = Promise.resolve();
  private keysTimer: ReturnType<typeof setInterval> | undefined;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /**
   * Views read from files written before saved views carried a checksum (`projectId/environment`): served
   * until the first sync, which fetches them whole rather than ask whether they are still current.
   */
  private readonly unverified = new Set<string>();
  /** The organisation the upstreams serve, from the first listing of this run. */
  private feedOrg: string | null = null;
  /** Settles once the start may serve: true after the first complete sync, false once no upstream answered. */
  private ready: { promise: Promise<boolean>; resolve: (synced: boolean) => void };
  readonly status: SyncStatus;

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly rotation: UpstreamRotation,
    private readonly holder: ReplicaHolder,
    private readonly files: SnapshotFiles,
    private readonly keys: ReplicaKeys,
    private readonly logger: Logger,
    private readonly options: SyncOptions = {},
  ) {
    let resolve: (synced: boolean) => void = () => {};
    const promise = new Promise<boolean>((r) => {
      resolve = r;
    });
    this.ready = { promise, resolve };
    this.status = {
      connected: false,
      following: rotation.current,
      behind: [],
      failovers: {},
      lastSyncAt: null,
      lastContactAt: null,
      tokenRefused: null,
    };
  }

  /**
   * Loads the views saved on disk, then follows upstream in the background. A damaged file is not served: its
   * view is noted lost (503 until upstream gives it again) and fetched whole.
   */
  async start(): Promise<void> {
    const { views, damaged } = await this.files.loadAll();
    for (const { org, view, unverified } of views) {
      this.holder.put(org, view);
      if (unverified) this.unverified.add(viewKey(view.projectId, view.environment));
    }
    for (const { projectId, environment, file, reason } of damaged) {
      this.holder.markLost(projectId, environment);
      this.logger.warn('a saved snapshot is damaged and not served; its environment answers 503 until it is fetched again from upstream', {
        file,
        reason,
        projectId,
        environment,
      });
    }
    this.loop = this.run();
    this.keysTimer = setInterval(() => void this.refreshKeys(), this.options.keysRefreshMs ?? 10_000);
    this.keysTimer.unref();
  }

  /**
   * Resolves true after the first complete sync with upstream; false once every upstream has failed while
   * views saved on disk are there to serve (waiting longer would only answer "starting" instead of serving
   * them), after `timeoutMs`, or once `stop` is aborted.
   */
  async synced(timeoutMs: number, stop?: AbortSignal): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const given = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      if (stop?.aborted) resolve(false);
      stop?.addEventListener('abort', () => resolve(false), { once: true });
    });
    // The timer goes with the wait: a replica stopped while it starts exits at once, not once it fires.
    return Promise.race([this.ready.promise, given]).finally(() => clearTimeout(timer));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.keysTimer);
    this.abort?.abort();
    this.wake?.();
    await this.loop;
    await this.queue;
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      const from = this.rotation.current;
      this.upstream.follow(from);
      this.status.following = from;
      const loss = await this.follow().then(() => new FeedLost('stream-ended', `upstream ${from} ended the replica feed`), feedLoss);
      this.status.connected = false;
      this.noteBehind([]);
      if (this.closed) return;
      const { origin: to, delayMs } = this.rotation.failed();
      if (this.rotation.allFailed && this.holder.entries().length > 0) this.ready.resolve(false);
      const fields = { from, to, reason: loss.reason, err: loss.message, retryInMs: Math.round(delayMs) };
      this.status.tokenRefused = loss.tokenRefused ? loss.message : null;
      if (loss.tokenRefused) {
        // Not a passing failure: nothing comes from upstream until the token is replaced, so it is said as an error.
        this.logger.error(`upstream lost: it refuses the replica's token; ${TOKEN_NEEDED}`, fields);
      } else if (to === from) {
        this.logger.warn('upstream lost; serving the last good snapshots until it is back', fields);
      } else {
        this.status.failovers[loss.reason] = (this.status.failovers[loss.reason] ?? 0) + 1;
        this.logger.warn('replica failover', fields);
      }
      await this.pause(delayMs);
    }
  }

  /** Follows the feed of the current upstream until it fails (throws why) or ends (returns). */
  private async follow(): Promise<void> {
    const feed = new AbortController();
    this.abort = feed;
    let lost: FeedLost | undefined;
    const lose = (why: FeedLost) => {
      lost ??= why;
      feed.abort();
    };
    // The feed has no deadline (it lasts), but its answer must come within the request deadline.
    const answer = setTimeout(
      () => lose(new FeedLost('timeout', `upstream ${this.upstream.origin}: no answer within ${this.upstream.timeoutMs} ms`)),
      this.upstream.timeoutMs,
    );
    let res: Response;
    try {
      res = await this.upstream.request(FEED, { signal: feed.signal, timeout: false });
    } catch (err) {
      throw lost ?? err;
    } finally {
      clearTimeout(answer);
    }
    if (!res.ok || !res.body) throw await failure(res, FEED);
    this.status.lastContactAt = Date.now();
    let idleMs = this.options.idleTimeoutMs ?? UNANNOUNCED_IDLE_MS;
    const silent = () => lose(new FeedLost('silent', `upstream ${this.upstream.origin}: no event or heartbeat for ${idleMs} ms`));
    let idle = setTimeout(silent, idleMs);
    const heard = () => {
      this.status.lastContactAt = Date.now();
      clearTimeout(idle);
      idle = setTimeout(silent, idleMs);
    };
    const enqueue = (step: () => Promise<void>) => {
      this.queue = this.queue.then(step).catch((err: unknown) => {
        if (feed.signal.aborted) return; // the feed is lost already; its steps end with it
        this.logger.error('replica sync step failed', { upstream: this.upstream.origin, err });
        lose(err instanceof FeedLost ? err : new FeedLost('sync-failed', (err as Error).message));
      });
    };
    const recheck = setInterval(() => {
      if (this.status.behind.length > 0) enqueue(() => this.relist(feed.signal));
    }, this.options.behindRecheckMs ?? 1_000);
    try {
      await readEventStream(
        res.body,
        (event) => {
          const data = JSON.parse(event.data) as unknown;
          if (event.event === 'versions' && this.options.idleTimeoutMs === undefined) {
            idleMs = idleTimeoutFor(data);
            heard();
          }
          enqueue(() => this.handle(event.event, data, feed.signal));
        },
        heard,
      );
    } catch (err) {
      lose(lost ?? feedLoss(err));
    } finally {
      clearTimeout(idle);
      clearInterval(recheck);
      await this.queue;
    }
    if (lost) throw lost;
  }

  private async handle(name: string, data: unknown, signal: AbortSignal): Promise<void> {
    if (name === 'versions') {
      await this.reconcile(data as UpstreamListing, signal);
      await this.refreshKeys();
      this.status.connected = true;
      this.status.tokenRefused = null;
      this.status.lastSyncAt = new Date().toISOString();
      this.rotation.succeeded();
      this.ready.resolve(true);
    } else if (name === 'version' && this.holder.org !== null) {
      await this.applyChange(this.holder.org, data as ViewListing, signal);
      this.status.lastSyncAt = new Date().toISOString();
    } else if (name === 'keys') {
      // Not awaited: the versions and kills behind it in the feed do not wait for the key list.
      void this.refreshKeys();
    }
  }

  /** Takes what the upstream serves where it is not older than what this replica serves. */
  private async reconcile(listing: UpstreamListing, signal: AbortSignal): Promise<void> {
    const { org, snapshots } = listing;
    if (this.feedOrg !== null && org !== this.feedOrg)
      throw new FeedLost('other-organisation', `upstream ${this.upstream.origin} serves ${org}, the others ${this.feedOrg}`);
    this.feedOrg = org;
    this.holder.org = org;
    await Promise.all(snapshots.map((s) => this.fetchIfNewer(org, s, signal)));
    const { behind, deleted } = compareWithServed(listing, this.holder.entries());
    // A view lost on disk that upstream does not list is gone there too: its keys get 404 as upstream's would.
    const listed = new Set(snapshots.map((s) => viewKey(s.projectId, s.environment)));
    const gone = this.holder.lostViews().filter((v) => !listed.has(viewKey(v.projectId, v.environment)));
    for (const view of [...deleted, ...gone]) {
      this.unverified.delete(viewKey(view.projectId, view.environment));
      this.holder.remove(view.projectId, view.environment);
      await this.files.remove(view.projectId, view.environment);
    }
    this.noteBehind(behind);
  }

  /** The listing again, while the upstream is behind: once it has caught up, everything it serves is taken. */
  private async relist(signal: AbortSignal): Promise<void> {
    const res = await this.upstream.request(LISTING, { signal });
    if (!res.ok) throw await failure(res, LISTING);
    await this.reconcile((await res.json()) as UpstreamListing, signal);
  }

  /** Logs when the followed upstream falls behind and when it catches up, not at every comparison between. */
  private noteBehind(behind: BehindEnvironment[]): void {
    const was = this.status.behind.length > 0;
    this.status.behind = behind.map((b) => `${b.project}/${b.environment}`).sort();
    const upstream = this.upstream.origin;
    if (behind.length > 0 && !was) {
      this.logger.warn('upstream is behind what this replica serves; those environments keep it until the upstream catches up', {
        upstream,
        environments: behind.map(({ project, environment, served, offered }) => ({ project, environment, served, offered })),
      });
    } else if (behind.length === 0 && was && this.status.connected) {
      this.logger.info('upstream caught up', { upstream });
    }
  }

  /** One change on the feed: a kill is applied over the view it names; anything else fetches the view. */
  private async applyChange(org: string, change: ViewListing, signal: AbortSignal): Promise<void> {
    const served = this.holder.versionOf(change.projectId, change.environment);
    if (served !== undefined && served >= change.version) return;
    const trusted = !this.unverified.has(viewKey(change.projectId, change.environment));
    const killed = isKillChange(change) && trusted ? this.holder.applyKill(org, change) : undefined;
    if (killed) await this.files.save(org, viewBody(killed));
    else await this.fetchIfNewer(org, change, signal);
  }

  /**
   * Fetches a view the upstream serves newer than this replica: as a delta from the version served
   * (`?since=`), applied over it, or whole (nothing served, a since the upstream no longer knows, a delta that
   * does not apply). A view read from a file without a checksum is fetched whole at its version too, and
   * replaces what was read.
   */
  private async fetchIfNewer(org: string, listing: ViewListing, signal: AbortSignal, whole = false): Promise<void> {
    const key = viewKey(listing.projectId, listing.environment);
    const unverified = this.unverified.has(key);
    const served = this.holder.versionOf(listing.projectId, listing.environment);
    if (served !== undefined && (served > listing.version || (served === listing.version && !unverified))) return;
    const path = `/api/v1/replica/snapshots/${encodeURIComponent(listing.projectId)}/${listing.environment}`;
    const from = unverified ? undefined : served;
    const headers: Record<string, string> = from === undefined ? {} : { 'if-none-match': `"v${from}"` };
    const since = from === undefined || whole ? '' : `?since=${from}`;
    const res = await this.upstream.request(path + since, { headers, signal });
    if (res.status === 304) return;
    if (!res.ok) throw await failure(res, path);
    const body = (await res.json()) as unknown;
    if (since !== '' && isObject(body) && body.since !== undefined) {
      let view: EnvironmentView | undefined;
      try {
        view = isViewDelta(body) ? this.holder.applyDelta(org, body) : undefined;
      } catch (err) {
        this.logger.warn('a view delta did not apply; fetching the whole view', { upstream: this.upstream.origin, path, err });
      }
      if (view === undefined) return this.fetchIfNewer(org, listing, signal, true);
      await this.files.save(org, viewBody(view));
      return;
    }
    if (!isViewBody(body)) throw new Error(`upstream ${path}: not a snapshot view`);
    // put keeps the served view when this one is older: a view fetched from a lagging upstream is never served.
    if (this.holder.put(org, body, unverified)) {
      await this.files.save(org, body);
      this.unverified.delete(key);
    }
  }

  private async refreshKeys(): Promise<void> {
    try {
      const { keys } = await this.upstream.json<{ keys: Array<{ id: string; revoked: boolean; validUntil?: string }> }>(
        '/api/v1/replica/keys',
      );
      await this.keys.retain(new Map(keys.filter((k) => !k.revoked).map((k) => [k.id, k.validUntil])));
    } catch (err) {
      this.logger.debug('key list not refreshed', { err: (err as Error).message });
    }
  }

  /** Waits `ms` before the next attempt; close() ends the wait. */
  private pause(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
