import { createHash, timingSafeEqual } from 'node:crypto';
import type Router from '@koa/router';
import { NotFoundError, UnauthorizedError } from '../../foundations/errors/kinds.js';
import type { Logger } from '../../foundations/log/logger.js';
import {
  lostRaceFor,
  PUSH_TIMEOUT_SECONDS,
  type PushedCommit,
  type RebaseHeld,
  type RemoteEvents,
  RemoteSync,
  redact,
} from './remote-sync.js';
import type { CommitPack } from './smart-http-push.js';

export interface RemoteSettings {
  /** FLAGOPS_GIT_REMOTE: the remote's URL, credentials included. */
  url: string;
  /** FLAGOPS_GIT_REMOTE_ORG: the organisation whose repository it is. */
  org: string;
  /** FLAGOPS_GIT_WEBHOOK_SECRET: enables POST /api/v1/hooks/git. */
  webhookSecret?: string;
  /** FLAGOPS_GIT_POLL_SECONDS: fetch this often in case a webhook is missed (0: never). */
  pollSeconds: number;
  /** FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS: how long a push of a change (not a kill) waits for the git host. */
  pushTimeoutSeconds?: number;
}

export const WEBHOOK_PATH = '/api/v1/hooks/git';
/**
 * How often the remote is fetched while the other control planes' notices cannot be heard (the database is down
 * or hangs): a fetch of a main that has not moved is one request answered with its refs, no objects.
 */
const DEAF_POLL_MS = 250;
export const WEBHOOK_SECRET_HEADER = 'x-flagops-webhook-secret';

/**
 * Remote mode's wiring: the `publish` hook for the store, the webhook route, and the poller. The store is
 * given `publish` for every repository; only the configured organisation's is pushed.
 */
export class RemoteMode {
  readonly sync: RemoteSync;
  private timer: ReturnType<typeof setInterval> | undefined;
  private deafTimer: ReturnType<typeof setInterval> | undefined;
  private deafPulling = false;

  constructor(
    private readonly settings: RemoteSettings,
    gitdir: string,
    private readonly logger: Logger,
    onPulled: () => Promise<void> | void,
    rebaseHeld?: RebaseHeld,
    events?: RemoteEvents,
    packOf?: (commit: string) => Promise<CommitPack | null>,
  ) {
    const timeoutMs = settings.pushTimeoutSeconds === undefined ? undefined : settings.pushTimeoutSeconds * 1000;
    this.sync = new RemoteSync(gitdir, settings.url, logger, onPulled, rebaseHeld, events, timeoutMs, packOf);
  }

  get org(): string {
    return this.settings.org;
  }

  readonly publish = (
    gitdir: string,
    commit: string,
    parent: string | null,
    action?: string,
    signal?: AbortSignal,
    awaitRemote?: boolean,
  ): Promise<boolean> =>
    gitdir === this.sync.gitdir ? this.sync.publish(commit, parent, action, signal, awaitRemote) : Promise.resolve(true);

  /** FlagRepository `publishBranch`: proposal branches are pushed too, so every control plane sees them. */
  readonly publishBranch = (gitdir: string, ref: string, commit: string): Promise<void> =>
    gitdir === this.sync.gitdir ? this.sync.publishBranch(ref, commit) : Promise.resolve();

  /** FlagRepository `fetchBranch`: a proposal branch as the remote holds it, before it is decided here. */
  readonly fetchBranch = (gitdir: string, ref: string): Promise<void> =>
    gitdir === this.sync.gitdir ? this.sync.fetchBranch(ref) : Promise.resolve();

  /**
   * Fetches the remote once (the remote wins where main is behind), then polls. Start never fails on the remote;
   * with no main here and the remote out of reach, nothing is served until it is read (RemoteSync.unread).
   */
  async start(): Promise<void> {
    await this.sync.lookForLastState();
    // Unreachable at start: tried again every second, so kills committed here while it was down reach it soon.
    if (!(await this.pullLogged('start'))) this.sync.retryPush();
    if (this.settings.pollSeconds > 0) {
      this.timer = setInterval(() => void this.pullLogged('poll'), this.settings.pollSeconds * 1000);
      this.timer.unref();
    }
  }

  /**
   * While `deaf()` says the other control planes' notices cannot be heard (they travel through the database,
   * which is down or hangs), the remote is fetched every DEAF_POLL_MS, so their kills and changes are still served
   * here within a second rather than at the next poll.
   */
  pollWhileDeaf(deaf: () => boolean): void {
    this.deafTimer = setInterval(() => {
      if (this.deafPulling || !deaf()) return;
      this.deafPulling = true;
      void this.sync
        .pull()
        .catch(() => undefined)
        .finally(() => {
          this.deafPulling = false;
        });
    }, DEAF_POLL_MS);
    this.deafTimer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    clearInterval(this.deafTimer);
    this.sync.close();
  }

  /**
   * Brings `org`'s main up to the remote now, if it is the remote's; true when main is the remote's head now
   * (a pull already under way may be what moved it, so "moved" cannot be told apart). Never throws.
   */
  async catchUp(org: string): Promise<boolean> {
    if (org !== this.settings.org) return false;
    const outcome = await this.sync.pull().catch(() => 'unreachable' as const);
    return outcome !== 'unreachable' && outcome !== 'diverged';
  }

  /** catchUp for a kill that would change nothing: never waits longer than a kill waits for the git host. */
  async catchUpForKill(org: string): Promise<boolean> {
    return org === this.settings.org && (await this.sync.pullForKill());
  }

  /**
   * Another control plane moved the remote's main (or notices were missed): fetch it now, or take the commit
   * it pushed from the objects it handed over.
   */
  remoteMoved(why: string, pushed?: PushedCommit): void {
    void this.pullLogged(why, pushed);
  }

  /** Where a push through /git/<org>.git goes before main moves here: the remote, as every change does. */
  pushTarget(): { url: string; timeoutMs: number; diverged: string | null } {
    const health = this.sync.health();
    return {
      url: this.settings.url,
      timeoutMs: (this.settings.pushTimeoutSeconds ?? PUSH_TIMEOUT_SECONDS) * 1000,
      diverged: health.diverged ? (health.error ?? 'main and the git remote have diverged') : null,
    };
  }

  /**
   * Main moved to `to` by someone other than this control plane: a push through /git/<org>.git (its hook pushed
   * it to the remote first), `flagops import` run against this data directory (it pushes first too), any other
   * process. Once main is the remote's head (fetched, or pushed now when the remote lacks it), the other control
   * planes are told, as of a change made here, rather than at their next poll. What this sync moved main to
   * itself is the remote's already, told by whoever pushed it.
   */
  movedOutside(org: string, to: string): void {
    if (org !== this.settings.org || this.sync.movedMainTo(to)) return;
    void this.pullLogged('main moved outside').then(async (reached) => {
      if (reached) await this.sync.tellPushed();
    });
  }

  /** POST /api/v1/hooks/git: a merged pull request (any push to main) announced by the git host. */
  register(router: Router): void {
    router.post(WEBHOOK_PATH, async (ctx) => {
      const secret = this.settings.webhookSecret;
      if (!secret) throw new NotFoundError('the git webhook (set FLAGOPS_GIT_WEBHOOK_SECRET)');
      if (!secretMatches(ctx.get(WEBHOOK_SECRET_HEADER) || undefined, secret))
        throw new UnauthorizedError(`the ${WEBHOOK_SECRET_HEADER} header does not match`);
      ctx.req.resume(); // the host's payload says nothing the fetch does not
      ctx.status = 202;
      ctx.body = { outcome: await this.sync.pull() };
    });
  }

  /** Pulls once; false when the remote could not be reached. */
  private async pullLogged(why: string, pushed?: PushedCommit): Promise<boolean> {
    try {
      const outcome = await this.sync.pull(pushed);
      if (outcome !== 'unchanged') this.logger.info('git remote synced', { why, outcome, remote: redact(this.settings.url) });
      return true;
    } catch (err) {
      const message = (err as Error).message;
      // Another control plane or a merge moved the remote's main first: the next pull takes it, nothing is down.
      if (lostRaceFor(message)) this.logger.info('git remote moved while syncing; syncing again at the next pull', { why, err: message });
      else this.logger.warn('git remote not reachable; serving main as it is', { why, err: message });
      return false;
    }
  }
}

/** Constant-time comparison of a presented webhook secret: hashing first makes the lengths equal too. */
export function secretMatches(presented: string | undefined, secret: string): boolean {
  if (!presented) return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}
