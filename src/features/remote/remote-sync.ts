import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FlagopsError, GitRemoteTimeoutError, HeldKillsAheadError, RemoteDivergedError } from '../../foundations/errors/kinds.js';
import type { Logger } from '../../foundations/log/logger.js';
import { type GitResult, gitRun } from '../../foundations/storage/git/git-cli.js';
import { compareAndSwapRef, MAIN_REF, RefLockedError, readRef } from '../../foundations/storage/git/refs.js';
import { PUBLISH_CUT_WHEN_ASKED } from '../../foundations/storage/index.js';
import { isKillAction } from '../kill/kill-switch.js';
import { redact } from './redact.js';
import { type CommitPack, type KnownHost, pushOverSmartHttp } from './smart-http-push.js';

export { redact };

const TRACKING_REF = 'refs/flagops/remote-main';
/**
 * The newest commit of main known to have been the remote's main (pushed from here, fetched, or taken from another
 * control plane's push), kept across restarts: a remote whose main no longer holds it was force-pushed on the host.
 */
const REMOTE_HAD_REF = 'refs/flagops/remote-had';
/** The name git is given the remote by (its URL in git's environment, not on the command line: it holds credentials). */
const REMOTE = 'flagops-remote';
/** The host refused the push because main is no longer the commit ours builds on. */
const MOVED = /\[rejected\]|non-fast-forward|fetch first/;
/**
 * The host refused the push because another push was updating main at the same moment (git's ref lock or its
 * old-value check, as `git http-backend` and hosts report it): as good as a move, the store runs the change again.
 */
const LOST_RACE = /cannot lock ref|failed to lock|unable to create '[^']*\.lock'|incorrect old value|failed to update ref/i;
/** The host answered and refused the update (a hook, a protected branch): nothing changed there. */
const REFUSED = /\[remote rejected\]|\[rejected\]/;
/** The host was not reached at all: nothing was sent. */
const NOT_SENT = /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|Could not resolve host|Failed to connect|Connection refused/i;
const RACE_BACKOFF_MIN_MS = 10;
const RACE_BACKOFF_SPREAD_MS = 90;
const MOVED_BACKOFF_SPREAD_MS = 30;

/** Whether git's words say a push lost a race for the remote's main (it moved first), not that the host failed. */
export function lostRaceFor(said: string): boolean {
  return LOST_RACE.test(said) || MOVED.test(said);
}
/**
 * How long a kill waits for the remote to take it before it is served from here and held (pushed later): a git
 * host that answers slowly or not at all costs a kill this much, well within the second a kill has to be served
 * everywhere. A push that takes longer goes on meanwhile, up to KILL_PUSH_TIMEOUT_MS.
 */
const KILL_SERVE_AFTER_MS = 500;
/** How many times a fetch that finds the tracking ref locked by another process's fetch is tried again, ... */
const FETCH_LOCK_RETRIES = 5;
/** ... after 1–2 times this long. */
const FETCH_LOCK_WAIT_MS = 100;
/** How long the push of a kill goes on before it is given up; main is pushed again every second after that. */
const KILL_PUSH_TIMEOUT_MS = 2_000;
/** How long a push of a change other than a kill waits for the git host by default (FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS). */
export const PUSH_TIMEOUT_SECONDS = 10;
/** How often main is pushed again while the remote lacks kills made here. */
const RETRY_PUSH_MS = 1_000;
const ZERO = '0000000000000000000000000000000000000000';
/** Commits handed over and kept for the next pull; older ones are left to its fetch. */
const MAX_HANDED_OVER = 16;
/** How many times a pull decides again on main having moved meanwhile before it reports main and the remote diverged. */
const MAX_PULL_LOOKS = 3;
/** How many of the commits this sync moved main to are remembered: moves are observed soon after they are made. */
const MAX_MOVED_HERE = 32;

export type PullOutcome = 'unchanged' | 'fast-forwarded' | 'pushed' | 'rebased' | 'diverged';

/**
 * Given the commits main holds beyond the remote (oldest first) when the two have diverged, rebuilds main on
 * the remote's head where it can (kills made here while the remote was unreachable); false when it cannot.
 */
export type RebaseHeld = (held: readonly string[]) => Promise<boolean>;

/** A commit another control plane pushed on top of `parent`, with the objects it added to hand over. */
export interface PushedCommit {
  commit: string;
  parent: string;
  /** Writes the commit's objects here; false when main is not `parent` or they do not make the commit complete. */
  writeObjects(): Promise<boolean>;
}

/** What remote mode tells the rest of the service (held kills, other control planes). */
export interface RemoteEvents {
  /** `commit` is being pushed to the remote's main: what is told of it once it lands can be made meanwhile. */
  pushing?(commit: string): void;
  /** Main holds `commit`, a kill the remote did not take; awaited before the kill is answered. */
  held?(commit: string): Promise<void>;
  /** The remote's main is `commit` and main holds nothing it lacks: this instance pushed, or pulled. Awaited. */
  inSync?(commit: string, pushedHere: boolean): Promise<void> | void;
  /** Main held kills the remote lacked, and holds none now: the remote has them, or what they were rebuilt as. */
  released?(): void;
}

/**
 * Remote mode for one organisation (docs/deployment.md): an outside git repository is the source of truth.
 * Every control-plane commit is pushed before main moves (FlagRepository's `publish`); a rejected push means
 * the remote moved, so main is fast-forwarded to it and the store runs the change again on top — neither
 * side's change is lost. `pull()` (start, webhook, polling) brings main up to the remote.
 */
export class RemoteSync {
  private pulling: Promise<PullOutcome> | null = null;
  private pullAgain: Promise<PullOutcome> | null = null;
  /** Commits handed over while a pull ran, oldest first: the next pull takes them in order before fetching. */
  private handedOver: PushedCommit[] = [];
  private fetching: Promise<unknown> = Promise.resolve();
  /** Why the remote could not be reached the last time it was tried; null once it answered. */
  private failure: string | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Whether main holds kills the remote has not taken. */
  private holding = false;
  /** Whether the last push was not answered in time (and the host has not answered since). */
  private hung = false;
  /** Why the last pull found main and the remote diverged; null when it did not. */
  private diverged: string | null = null;
  /** The remote's main as seen here before it went back (force-pushed or deleted on the host); null otherwise. */
  private rewoundFrom: string | null = null;
  /** See remakingHeld(). */
  private remakingHeldKills = false;
  /** Why every push goes by `git push`: the remote is not one this process pushes to (null: it may be). */
  private pushedByGit: string | null = null;
  /** The remote's capabilities as its last ref advertisement gave them: later pushes send their update at once. */
  private readonly knownHost: KnownHost = { capabilities: null };
  /** The commits this sync moved main to last (a pull, a commit handed over), oldest first: see movedMainTo(). */
  private readonly movedHere: string[] = [];
  /** REMOTE_HAD_REF as known here (read from it once, then kept up to date); see remoteHas(). */
  private remoteHad: Promise<string | null> | null = null;
  /** The commit REMOTE_HAD_REF is still to be moved to (null: none), and the writing under way. */
  private remoteHadToWrite: string | null = null;
  private writingRemoteHad: Promise<void> | null = null;
  /** A commit main has that the remote had and no longer has, as the last pull found it; null otherwise. */
  private droppedOnRemote: string | null = null;
  private closed = false;
  /**
   * Whether main here is a state of the remote's to serve: main was there at the start (served before), or the
   * remote has been read since (an empty remote is an empty state). Until then there is nothing to serve.
   */
  private stateKnown = false;
  /** Whether the holder was told that the remote has been read for the first time. */
  private firstReadServed = false;
  private readonly remoteConfig: Readonly<Record<string, string>>;

  constructor(
    readonly gitdir: string,
    private readonly url: string,
    private readonly logger: Logger,
    /** Called after main moved to the remote's head (the holder serves it at once). */
    private readonly onPulled: () => Promise<void> | void = () => {},
    private readonly rebaseHeld: RebaseHeld = async () => false,
    private readonly events: RemoteEvents = {},
    /** How long a push waits for the git host (kills: KILL_PUSH_TIMEOUT_MS) before it is given up. */
    private readonly pushTimeoutMs: number = PUSH_TIMEOUT_SECONDS * 1000,
    /** The objects a commit adds to its parent, packed: what a push of main sends from this process. */
    private readonly packOf: (commit: string) => Promise<CommitPack | null> = async () => null,
  ) {
    this.remoteConfig = { [`remote.${REMOTE}.url`]: url };
  }

  /**
   * At start: a main already here is the last valid state (this data directory served it before), served while
   * the remote cannot be read. Without one, nothing is served until the remote has been read (unread()).
   */
  async lookForLastState(): Promise<void> {
    if ((await this.localHead()) !== null) this.stateKnown = true;
  }

  /**
   * Why there is no state of the remote's main to serve yet (no main here, and the remote not read since the
   * start), for the 503 answered meanwhile; undefined once there is one.
   */
  unread(): string | undefined {
    if (this.stateKnown) return undefined;
    const why = this.failure === null ? '' : ` (${this.failure})`;
    return `this control plane has not yet been able to read the git remote ${redact(this.url)}${why} and holds no earlier state of it; try again shortly`;
  }

  /** The remote's main as last fetched. */
  async fetchedHead(): Promise<string | null> {
    const head = await gitRun(this.gitdir, ['rev-parse', '--verify', '--quiet', TRACKING_REF]);
    return head.code === 0 ? head.stdout : null;
  }

  /**
   * FlagRepository `publish`: true once the remote's main is `commit`; false when main was moved to the remote's
   * newer head. A kill or cleared kill the remote cannot take now (unreachable, slow, refusing) is true too: it
   * is served and committed here, and pushed when the remote takes it (retried every second); a git host must
   * never stand between an operator and a kill. `awaitRemote`: such a kill waits for the remote's answer while the
   * remote is reachable (a clear sent with `expectedVersion`, decided on the remote's main when it moved).
   */
  async publish(commit: string, parent: string | null, action?: string, signal?: AbortSignal, awaitRemote = false): Promise<boolean> {
    // A kill, a cleared kill, a guard's kill (guard_failed) and kills made again go the fast path, without a signal
    // (FlagRepository `publish`). A guard's removal of the steps left (guard_failed too) is an ordinary change:
    // held, it would reach main from every control plane that stopped the rollout, each counting the stop.
    const kill = isKillAction(action) && signal === undefined;
    // Known to be out of reach (main already holds kills it lacks, retried every second, or the last push was
    // not answered): no attempt to wait for.
    if (kill && this.failure !== null && (this.holding || this.hung)) return this.keepUntilReachable(commit, this.failure);
    // Another control plane's held kill, made here: that control plane tried the host already. Or main holds kills
    // the remote lacks already (another's made here, or a push still under way): the retries every second push
    // this one with them. Trying the host first would keep this kill waiting on a host that just failed a kill.
    if (kill && (this.remakingHeldKills || this.holding)) return this.holdWhilePushed(commit, null);
    this.events.pushing?.(commit);
    const pushing = this.push(commit, MAIN_REF, kill ? KILL_PUSH_TIMEOUT_MS : this.pushTimeoutMs, signal);
    const pushed = kill && !awaitRemote ? await settledWithin(pushing, KILL_SERVE_AFTER_MS) : await pushing;
    if (pushed === null) return this.holdWhilePushed(commit, pushing);
    if (pushed.code === 0) return this.landed(commit);
    // A hung git host must not keep this change (and the turn it holds) waiting: nothing is acknowledged.
    if (!kill && (pushed.timedOut || signal?.aborted)) {
      // Cut off at once for another control plane's kill made here, the host was given no time: not taken as hung.
      if (signal?.reason === PUBLISH_CUT_WHEN_ASKED) throw new GitRemoteTimeoutError(redact(this.url), null);
      throw this.timedOut(signal?.aborted === true);
    }
    const said = `${pushed.stdout}\n${pushed.stderr}`;
    const raced = LOST_RACE.test(said);
    if (!raced && !MOVED.test(said)) {
      if (kill) return this.keepUntilReachable(commit, said);
      // The connection failed after the update may have been sent (its answer lost): the host may have taken it.
      // Its main says; a change it took is acknowledged as any other, not reported as nothing changed.
      const refused = REFUSED.test(said) || NOT_SENT.test(said);
      // Not reached at all: /healthz says so now, not at the next poll (the next fetch or push that works clears it).
      if (NOT_SENT.test(said)) this.failure ??= `a change was not taken: ${redact(said).trim().slice(0, 300)}`;
      const remote = refused ? null : await this.fetch().catch(() => null);
      if (remote !== null && (remote === commit || (await this.isAncestor(commit, remote)))) return this.landed(commit);
      throw new FlagopsError(
        'unavailable',
        `the git remote ${redact(this.url)} did not take the change (nothing was changed): ${redact(pushed.stderr).slice(0, 300)}`,
      );
    }
    const remote = kill ? await this.fetch().catch((err: Error) => err) : await this.fetch();
    if (remote instanceof Error) return this.keepUntilReachable(commit, remote.message);
    if (remote === null || (parent !== null && !(await this.isAncestor(parent, remote)))) {
      // Main holds a kill the remote lacks (another control plane's, made here from its record, while its own push
      // was on the way): a kill joins it, and the retries put both on the remote's head.
      if (kill) return this.holdWhilePushed(commit, null);
      // Held kills are what the remote lacks: not a divergence, and /healthz does not call it one either.
      if (this.holding) throw new HeldKillsAheadError(redact(this.url));
      throw new RemoteDivergedError(redact(this.url));
    }
    // Compare-and-swap: if main moved meanwhile, the store's next run starts from wherever it now is.
    if (remote !== parent && (await this.follow(parent, remote))) await this.onPulled();
    // Another push held the host's ref when ours came, and the remote shows no move yet: the other push may
    // still be finishing, or may have failed. A short random wait keeps two control planes from colliding again.
    else if (raced) await sleep(RACE_BACKOFF_MIN_MS + Math.random() * RACE_BACKOFF_SPREAD_MS);
    // Several control planes writing at once would otherwise go round in step, each losing to the same other.
    else await sleep(Math.random() * MOVED_BACKOFF_SPREAD_MS);
    return false;
  }

  /** The remote's main is `commit`, pushed from here: the host answers again, and the others are told. */
  private async landed(commit: string): Promise<true> {
    this.remoteHas(commit);
    this.failure = null;
    this.hung = false;
    this.holdingNoMore();
    await this.events.inSync?.(commit, true);
    return true;
  }

  /**
   * Pushes `commit` to the remote's `ref`, given up past `timeoutMs`. A commit on the remote's main goes from
   * this process where the host speaks smart HTTP (smart-http-push.ts); anything else by `git push`, where
   * curl's low-speed limit makes git's HTTP helper end too when the host stops answering, rather than outlive
   * the git process stopped at the deadline.
   */
  private async push(commit: string, ref: string, timeoutMs: number, signal?: AbortSignal): Promise<GitResult> {
    if (ref === MAIN_REF && this.pushedByGit === null) {
      const started = Date.now();
      const pushed = await pushOverSmartHttp({
        url: this.url,
        ref,
        commit,
        objects: () => this.packOf(commit),
        timeoutMs,
        signal,
        host: this.knownHost,
      });
      if (!('why' in pushed)) return pushed;
      if (pushed.always) {
        this.pushedByGit = pushed.why;
        this.logger.info('the git remote is pushed to by git push', { remote: redact(this.url), why: redact(pushed.why) });
      }
      timeoutMs = Math.max(1, timeoutMs - (Date.now() - started));
    }
    const seconds = String(Math.max(1, Math.ceil(timeoutMs / 1000)));
    return gitRun(
      this.gitdir,
      ['-c', 'http.lowSpeedLimit=1', '-c', `http.lowSpeedTime=${seconds}`, 'push', '--porcelain', REMOTE, `${commit}:${ref}`],
      { timeoutMs, signal, config: this.remoteConfig },
    );
  }

  /**
   * A push past its deadline, or cut off for a kill waiting behind it: the host is taken as out of reach until
   * it answers again (/healthz says so), and a kill made meanwhile is held at once rather than pushed.
   */
  private timedOut(cut = false): GitRemoteTimeoutError {
    const seconds = this.pushTimeoutMs / 1000;
    this.failure = cut ? 'a push was not answered before a kill needed the way' : `a push was not answered within ${seconds} s`;
    this.hung = true;
    this.logger.warn('git remote did not answer a push in time; the change was refused', { remote: redact(this.url), seconds, cut });
    return new GitRemoteTimeoutError(redact(this.url), cut ? null : seconds);
  }

  /**
   * A kill the git host has not taken yet, without a sign that it cannot: slow to answer (the push goes on), or
   * another control plane's held kill made here. Held and served now like a kill the host refused, and pushed by
   * the push under way or the retries after it; the host counts as out of reach (and /healthz degraded) only
   * once that push fails, so a slow host does not look down after each kill.
   */
  private async holdWhilePushed(commit: string, pushing: Promise<GitResult> | null): Promise<true> {
    this.holding = true;
    void pushing?.then(
      (pushed) => {
        const said = `${pushed.stdout}\n${pushed.stderr}`;
        if (pushed.code === 0) this.remoteHas(commit);
        if (pushed.code === 0 || lostRaceFor(said)) return;
        this.failure ??= pushed.timedOut
          ? `a push was not answered within ${KILL_PUSH_TIMEOUT_MS / 1000} s`
          : `a kill was not taken: ${redact(said).trim().slice(0, 300)}`;
        this.hung ||= pushed.timedOut === true;
      },
      () => {},
    );
    this.logger.info('git remote has not taken a kill yet; it is served and committed here, and pushed meanwhile', {
      commit,
      remote: redact(this.url),
    });
    await this.events.held?.(commit);
    this.retryPush();
    return true;
  }

  /** A kill's commit stays on main here; main is pushed again every second until the remote has it. */
  private async keepUntilReachable(commit: string, why: string): Promise<true> {
    this.failure ??= `a kill was not taken: ${redact(why).trim().slice(0, 300)}`;
    this.holding = true;
    this.logger.warn('git remote did not take a kill; it is served and committed here, and pushed when the remote is back', {
      commit,
      remote: redact(this.url),
      err: redact(why).trim().slice(0, 300),
    });
    await this.events.held?.(commit);
    this.retryPush();
    return true;
  }

  /**
   * At start, main holds kills held when the service stopped (their records say so). While the remote has not
   * answered since the start, they are held as before the stop: /healthz says so, and the retries every second
   * push them. Once it answered, main is on the remote already.
   */
  heldFromBefore(): void {
    if (this.failure === null) return;
    this.holding = true;
    this.retryPush();
  }

  /**
   * While true, this control plane makes kills another one holds (from its records): they are held here at once
   * rather than each wait for the host first (KILL_SERVE_AFTER_MS), so a kill is served everywhere as soon as
   * anywhere. Main is pushed a second later, also when the kills change nothing here.
   */
  remakingHeld(remaking: boolean): void {
    this.remakingHeldKills = remaking;
    if (remaking) this.retryPush();
  }

  /**
   * pull() for a kill that would change nothing (killed already?), waited for at most as long as a kill waits for
   * the git host: false when it takes longer (it goes on). A host that hangs otherwise held such a kill, and the
   * other control planes' making of held kills behind it, until the fetch's deadline.
   */
  async pullForKill(): Promise<boolean> {
    // Making another control plane's held kills replays what it did: a kill that changes nothing is done.
    if (this.remakingHeldKills) return false;
    const outcome = await settledWithin(
      this.pull().catch(() => 'unreachable' as const),
      KILL_SERVE_AFTER_MS,
    );
    return outcome !== null && outcome !== 'unreachable' && outcome !== 'diverged';
  }

  /**
   * Main was pushed to the remote by another process (the pre-receive hook of a push through the service,
   * `flagops import`): when main is the remote's head, the other control planes are told as of a push made here.
   */
  async tellPushed(): Promise<void> {
    const head = await this.localHead();
    if (head !== null && head === (await this.fetchedHead())) await this.events.inSync?.(head, true);
  }

  /**
   * For /healthz: whether the remote answered the last time, whether main holds kills it lacks, and whether the
   * last pull found main and the remote diverged (changes are refused until an operator reconciles them).
   */
  health(): { url: string; reachable: boolean; holdingKills: boolean; diverged: boolean; error?: string } {
    const error = this.unread() ?? this.failure ?? this.diverged;
    return {
      url: redact(this.url),
      reachable: this.failure === null,
      holdingKills: this.holding,
      diverged: this.diverged !== null,
      ...(error ? { error } : {}),
    };
  }

  /** Whether main holds kills the remote has not taken (committed here while it could not take them). */
  get holdsKills(): boolean {
    return this.holding;
  }

  /** Main is on the remote's main: whatever it held back is there now. */
  private holdingNoMore(): void {
    if (!this.holding) return;
    this.holding = false;
    this.events.released?.();
  }

  /** Pulls (and pushes what main holds back) every second until the remote answers. */
  retryPush(): void {
    if (this.retryTimer !== undefined || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.pull().then(
        (outcome) => {
          if (outcome === 'diverged') this.retryPush();
          else this.logger.info('git remote took what main held back', { outcome, remote: redact(this.url) });
        },
        () => this.retryPush(),
      );
    }, RETRY_PUSH_MS);
    this.retryTimer.unref();
  }

  /** Stops retrying pushes (the service stops); what main holds is pushed by the next start. */
  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  /** Pushes a branch other than main (a proposal branch) before it moves locally; throws when the remote refuses. */
  async publishBranch(ref: string, commit: string): Promise<void> {
    const pushed = await this.push(commit, ref, this.pushTimeoutMs);
    if (pushed.timedOut) throw this.timedOut();
    if (pushed.code !== 0)
      throw new FlagopsError(
        'unavailable',
        `the git remote ${redact(this.url)} did not take ${ref} (nothing was changed): ${redact(pushed.stderr).slice(0, 300)}`,
      );
  }

  /**
   * Brings a branch other than main (a proposal branch) to what the remote holds: another control plane's write
   * to it is seen here at once, not at the next pull. A branch the remote lacks is left as it is. One fetch at a
   * time, as fetch().
   */
  fetchBranch(ref: string): Promise<void> {
    const run = this.fetching.then(
      () => this.fetchBranchNow(ref),
      () => this.fetchBranchNow(ref),
    );
    this.fetching = run.catch(() => undefined);
    return run;
  }

  private async fetchBranchNow(ref: string): Promise<void> {
    const silent = String(Math.max(1, Math.ceil(this.pushTimeoutMs / 1000)));
    const fetched = await gitRun(
      this.gitdir,
      ['-c', 'http.lowSpeedLimit=1', '-c', `http.lowSpeedTime=${silent}`, 'fetch', '--quiet', '--no-tags', REMOTE, `+${ref}:${ref}`],
      { config: this.remoteConfig, timeoutMs: this.pushTimeoutMs },
    );
    if (fetched.code !== 0 && !/couldn't find remote ref/i.test(fetched.stderr))
      throw new FlagopsError(
        'unavailable',
        `fetching ${ref} from the git remote ${redact(this.url)} failed: ${redact(fetched.stderr).slice(0, 300)}`,
      );
  }

  /**
   * Brings main up to the remote: fast-forward, or push local commits the remote lacks. One at a time; asked
   * while one runs, one more runs after it (the remote may have moved since the running one fetched), shared
   * by everyone who asks meanwhile. `pushed`, a commit another control plane pushed and handed over, is taken
   * without a fetch when main is its parent.
   */
  pull(pushed?: PushedCommit): Promise<PullOutcome> {
    // Another control plane's run of pushes comes as a run of notices: each commit is taken on the one before.
    if (pushed) this.handedOver = [...this.handedOver, pushed].slice(-MAX_HANDED_OVER);
    if (this.pulling === null) return this.startPull();
    this.pullAgain ??= this.pulling
      .catch(() => undefined)
      .then(() => {
        this.pullAgain = null;
        return this.pull();
      });
    return this.pullAgain;
  }

  private startPull(): Promise<PullOutcome> {
    const pushed = this.handedOver;
    this.handedOver = [];
    this.pulling = this.doPull(pushed)
      .then(async (outcome) => {
        if (outcome !== 'diverged') this.diverged = null;
        // Read for the first time: served now, also when main did not move (an empty remote is an empty state).
        if (this.stateKnown && !this.firstReadServed) {
          this.firstReadServed = true;
          await this.onPulled();
        }
        const head = outcome === 'diverged' ? null : await this.localHead();
        if (head !== null) {
          this.holdingNoMore();
          await this.events.inSync?.(head, outcome === 'pushed' || outcome === 'rebased');
        }
        return outcome;
      })
      .finally(() => {
        this.pulling = null;
      });
    return this.pulling;
  }

  /**
   * Brings main up to what another control plane pushed in its last turn (the turn's note: its commits, oldest
   * first), before an update runs in this control plane's turn: each commit from its objects when main is its
   * parent, else by a fetch. Runs before the update is queued in the store's write queue, beside what is queued
   * there (a kill): each move of main is a compare-and-swap, so a kill committed meanwhile is never overwritten
   * (the update's push then says what to do). Not through `pull()`, whose rebuilding of held kills would wait
   * for the write queue; and when main holds kills the remote lacks, not at all. The move is served by the
   * update, which announces main's head before it runs.
   */
  async catchUpTo(pushed: readonly (PushedCommit | { commit: string; parent?: undefined })[]): Promise<void> {
    const last = pushed.at(-1)?.commit;
    if (this.holding || last === undefined) return;
    // Read from the file, not by a git process: this is on every update's way through several control planes.
    const head = () => readRef(this.gitdir, MAIN_REF);
    let local = await head();
    for (const next of pushed) {
      if (local === last) return;
      if (next.parent === undefined || local !== next.parent || !('writeObjects' in next)) continue;
      // A notice's pull may have taken it meanwhile: then main is read again.
      local = (await this.takePushed(next)) ? next.commit : await head();
    }
    if (local === last || (local !== null && (await this.isAncestor(last, local)))) return;
    const remote = await this.fetch();
    if (remote !== null && remote !== local) await this.fastForward(local, remote);
  }

  private async doPull(handedOver: readonly PushedCommit[]): Promise<PullOutcome> {
    let taken = 0;
    let lastTaken: string | undefined;
    for (const pushed of handedOver) {
      // Not taken (main is not its parent: it has it already, or a turn's catching up moved it): the next may be.
      if (await this.takePushed(pushed)) {
        taken++;
        lastTaken = pushed.commit;
      }
    }
    // Up to the newest commit handed over (what was asked for): no fetch. Short of it, the fetch brings the rest.
    const newest = handedOver.at(-1);
    if (newest && (lastTaken === newest.commit || (await this.hasAlready(newest)))) {
      this.remoteHas(newest.commit);
      if (taken > 0) await this.onPulled();
      return taken > 0 ? 'fast-forwarded' : 'unchanged';
    }
    if (taken > 0) await this.onPulled();
    // The remote's main as last seen here, before this fetch moves the tracking ref: a main that went back from it
    // was force-pushed (or deleted) on the host.
    const seen = this.rewoundFrom ?? (await readRef(this.gitdir, TRACKING_REF).catch(() => null));
    // So is what the remote had: a change of ours that lands while the fetch is under way is not in what it
    // brings, and taken as had it would read as dropped by a force-push.
    const had = await this.remoteHadNow();
    const remote = await this.fetch();
    let local = await this.localHead();
    // Main may move while this is decided (a commit handed over, a turn's catching up): decided again on it.
    for (let look = 1; ; look++) {
      const decided = await this.decidePull(local, remote, seen, had);
      if (decided !== 'diverged') return decided;
      const now = await this.localHead();
      if (now === local || look === MAX_PULL_LOOKS) break;
      local = now;
    }
    const rewound = this.rewoundFrom !== null;
    const dropped = this.droppedOnRemote;
    this.logger.error(
      rewound
        ? "the git remote's main went back (force-pushed or deleted on the host); serving main as it is until an operator reconciles them"
        : 'main and the git remote have diverged; serving main as it is until an operator reconciles them',
      {
        remote: redact(this.url),
        local,
        remoteHead: remote,
        ...(rewound ? { remoteHeadBefore: this.rewoundFrom } : {}),
        ...(dropped !== null ? { droppedOnRemote: dropped } : {}),
      },
    );
    const lost =
      dropped === null
        ? ''
        : ` (the git remote no longer has ${dropped.slice(0, 12)}, which it had and main has: force-pushed on the host)`;
    this.diverged = rewound
      ? `the git remote's main went back from ${this.rewoundFrom?.slice(0, 12)} to ${remote?.slice(0, 12) ?? 'nothing'} (force-pushed or deleted on the host), while main here is ${local?.slice(0, 12)}: changes are refused until an operator reconciles them`
      : `main (${local?.slice(0, 12)}) and the git remote's main (${remote?.slice(0, 12) ?? 'nothing'}) have diverged${lost}: changes are refused until an operator reconciles them`;
    return 'diverged';
  }

  /**
   * Whether the remote's main went back from `seen` (its head as last seen here) to `remote`: an ancestor of it, or
   * no main at all. Main here is ahead then, but what it has beyond the remote was taken off the host on purpose,
   * and pushing it again would undo that silently.
   */
  private async wentBack(remote: string | null, seen: string | null): Promise<boolean> {
    if (seen === null || remote === seen) return false;
    return remote === null || (await this.isAncestor(remote, seen));
  }

  /**
   * What a pull does with main at `local` and the remote's main at `remote`: nothing, a fast-forward, a push of
   * what main holds, a rebuild of held kills on the remote's head; 'diverged' when none of them applies.
   */
  private async decidePull(local: string | null, remote: string | null, seen: string | null, had: string | null): Promise<PullOutcome> {
    this.droppedOnRemote = null;
    if (remote === local) {
      this.rewoundFrom = null;
      if (remote !== null) this.remoteHas(remote);
      return 'unchanged';
    }
    // Asked before main is pushed over the remote's: once so, it stays so (the fetch moved the tracking ref back)
    // until main and the remote agree again (an operator reconciled them) or the remote moves on.
    const wentBack = async () => {
      if (!(await this.wentBack(remote, seen))) return false;
      this.rewoundFrom = seen;
      return true;
    };
    // Main holds a commit the remote had and has no more: the host's main was rewritten without it.
    const dropped = async () => {
      this.droppedOnRemote = local === null ? null : await this.droppedBy(had, remote, local);
      return this.droppedOnRemote !== null;
    };
    if (remote === null) {
      if (local === null) return 'unchanged';
      if ((await wentBack()) || (await dropped())) return 'diverged';
      await this.pushOrThrow(local);
      return 'pushed';
    }
    this.rewoundFrom = null;
    if (await this.follow(local, remote)) {
      await this.onPulled();
      return 'fast-forwarded';
    }
    if (local !== null && (await this.isAncestor(remote, local))) {
      if ((await wentBack()) || (await dropped())) return 'diverged';
      await this.pushOrThrow(local); // commits made while the remote was unreachable at push time cannot exist; a crash between push and ref move can
      return 'pushed';
    }
    if (local !== null) {
      // Only kills the remote never had are rebuilt on its head: one it had and lost was taken off by a force-push,
      // and made again it would leave main under another id, its first audit entry gone with it.
      if (await dropped()) return 'diverged';
      const held = await gitRun(this.gitdir, ['rev-list', '--first-parent', '--reverse', local, `^${remote}`]);
      if (held.code === 0 && (await this.rebaseHeld(held.stdout.split('\n').filter(Boolean)))) {
        await this.onPulled();
        // The kills made again were held rather than pushed (main held kills the remote lacked): pushed now, so
        // main is on the remote when this pull says so. Pushed later, another control plane's push could come
        // first and rebuild them once more, under other ids.
        const rebuilt = await this.localHead();
        if (rebuilt !== null && rebuilt !== remote) await this.pushOrThrow(rebuilt);
        else this.remoteHas(remote);
        return 'rebased';
      }
    }
    return 'diverged';
  }

  /**
   * Whether main holds `commit` already, which another control plane pushed: a turn's note brought what a
   * notice hands over (or the other way round), or the notice came late, after a commit of ours on top of it.
   * Nothing to fetch for it then.
   */
  private async hasAlready(pushed: PushedCommit): Promise<boolean> {
    if (this.holding) return false;
    const local = await this.localHead();
    if (local === pushed.commit) return true;
    // At its parent (the usual case) main cannot hold it: no git process to ask.
    return local !== null && local !== pushed.parent && (await this.isAncestor(pushed.commit, local));
  }

  /**
   * Moves main to a commit another control plane pushed, from the objects it handed over: a fetch costs two
   * HTTP round trips to the git host and several git processes on each side, which is most of the time from
   * one control plane's write to the others serving it. Only when main is the commit's parent and holds
   * nothing the remote lacks; git's compare-and-swap on main (the store's lock) keeps a local commit from
   * being overwritten. The remote-tracking ref is left to the next fetch.
   */
  private async takePushed(pushed: PushedCommit): Promise<boolean> {
    if (this.holding) return false;
    if (!(await pushed.writeObjects().catch(() => false))) return false;
    this.movingMainTo(pushed.commit);
    // In process, with the store's own compare-and-swap (the lock git takes too), rather than by `git update-ref`:
    // a git process is several milliseconds of a busy machine on the way to serving another control plane's kill.
    const moved = await compareAndSwapRef(this.gitdir, MAIN_REF, pushed.parent, pushed.commit, { lockTimeoutMs: 100 }).catch(
      (err: unknown) => {
        if (err instanceof RefLockedError) return { ok: false as const, current: null };
        throw err;
      },
    );
    if (moved.ok) this.remoteHas(pushed.commit);
    return moved.ok;
  }

  /**
   * `had`, the commit the remote's main was known to hold before it was fetched (REMOTE_HAD_REF), when main has it
   * and the remote's main `remote` no longer does: the host's main was rewritten without it (force-pushed, or
   * deleted). Null when the remote has it, or main does not.
   */
  private async droppedBy(had: string | null, remote: string | null, local: string): Promise<string | null> {
    if (had === null || had === remote || (remote !== null && (await this.isAncestor(had, remote)))) return null;
    return (await this.isAncestor(had, local)) ? had : null;
  }

  private remoteHadNow(): Promise<string | null> {
    this.remoteHad ??= readRef(this.gitdir, REMOTE_HAD_REF).catch(() => null);
    return this.remoteHad;
  }

  /**
   * `commit`, on main, is the remote's main (or was a moment ago): known at once here, and recorded in
   * REMOTE_HAD_REF meanwhile, off the way of the kill or change that found it (only the newest is written).
   */
  private remoteHas(commit: string): void {
    this.remoteHad = Promise.resolve(commit);
    this.remoteHadToWrite = commit;
    this.writingRemoteHad ??= this.writeRemoteHad().finally(() => {
      this.writingRemoteHad = null;
      if (this.remoteHadToWrite !== null) this.remoteHas(this.remoteHadToWrite);
    });
  }

  private async writeRemoteHad(): Promise<void> {
    for (let next = this.remoteHadToWrite; next !== null; next = this.remoteHadToWrite) {
      this.remoteHadToWrite = null;
      // Stopped: the repository is no longer this process's to write (it may be gone); the next start reads main again.
      if (this.closed) return;
      try {
        const current = await readRef(this.gitdir, REMOTE_HAD_REF).catch(() => null);
        if (current === next) continue;
        // Not recursive: a repository removed meanwhile is not made again as an empty directory.
        await mkdir(path.dirname(path.join(this.gitdir, REMOTE_HAD_REF))).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'EEXIST') throw err;
        });
        await compareAndSwapRef(this.gitdir, REMOTE_HAD_REF, current, next);
      } catch (err) {
        this.logger.warn("recording the git remote's main failed; a force-push on the host is still seen until a restart", {
          err: (err as Error).message,
        });
      }
    }
  }

  /**
   * The remote's main after fetching it, or null when the remote has no main yet. One fetch at a time: two at
   * once (a notice's and a write's) would race to move the tracking ref, and one would fail.
   */
  private fetch(): Promise<string | null> {
    const run = this.fetching.then(
      () => this.fetchNow(),
      () => this.fetchNow(),
    );
    this.fetching = run.catch(() => undefined);
    return run;
  }

  private async fetchNow(): Promise<string | null> {
    let fetched = await this.fetchOnce();
    // Another process fetching into this repository (`flagops import` beside the service) holds the tracking ref's
    // lock a moment: its fetch brought the same refs, so one more look, a moment later, is all it takes.
    for (let retry = 0; retry < FETCH_LOCK_RETRIES && fetched.code !== 0 && /cannot lock ref/.test(fetched.stderr); retry++) {
      await sleep(FETCH_LOCK_WAIT_MS + Math.random() * FETCH_LOCK_WAIT_MS);
      fetched = await this.fetchOnce();
    }
    if (fetched.code !== 0) {
      if (/couldn't find remote ref|not found: .*main/i.test(fetched.stderr)) {
        this.stateKnown = true;
        return null;
      }
      this.failure = `fetching failed: ${redact(fetched.stderr).trim().slice(0, 300)}`;
      throw new FlagopsError('unavailable', `fetching the git remote ${redact(this.url)} failed: ${redact(fetched.stderr).slice(0, 300)}`);
    }
    this.failure = null;
    this.hung = false;
    this.stateKnown = true;
    return this.fetchedHead();
  }

  private fetchOnce(): Promise<GitResult> {
    // Proposal branches come along: another control plane on the same remote may have opened or decided one.
    // A host that stops answering fails the fetch after the push deadline rather than git's 30 s.
    const silent = String(Math.max(1, Math.ceil(this.pushTimeoutMs / 1000)));
    return gitRun(
      this.gitdir,
      [
        '-c',
        'http.lowSpeedLimit=1',
        '-c',
        `http.lowSpeedTime=${silent}`,
        'fetch',
        '--quiet',
        '--no-tags',
        REMOTE,
        `+refs/heads/main:${TRACKING_REF}`,
        '+refs/heads/proposals/*:refs/heads/proposals/*',
      ],
      { config: this.remoteConfig },
    );
  }

  /**
   * Whether this sync moved main to `commit` (recently): a move of main the repository observes from outside its
   * own writes is then the remote's, taken here, and not one to tell the other control planes of.
   */
  movedMainTo(commit: string): boolean {
    return this.movedHere.includes(commit);
  }

  /** Remembered before main moves, so that whoever reads main right after the move knows whose it was. */
  private movingMainTo(commit: string): void {
    if (this.movedHere.includes(commit)) return;
    this.movedHere.push(commit);
    if (this.movedHere.length > MAX_MOVED_HERE) this.movedHere.shift();
  }

  /** Main, read from its file: no git process on the way from another control plane's push to serving it. */
  private localHead(): Promise<string | null> {
    return readRef(this.gitdir, MAIN_REF);
  }

  /**
   * Moves main to the remote's head `to` when it builds on main. A git host may take a branch that main was
   * merged into, pushed as main: main's head is then the second parent, off the first-parent line the audit
   * trail follows, and following it would drop every entry since the branch began. Main then moves to a merge
   * of that head onto main instead (main first, the host's head second, the host's tree, authored by its
   * author), pushed to the remote first: the line stays whole and the change shows as the host's author's.
   */
  private async follow(from: string | null, to: string): Promise<boolean> {
    if (from === null || (await this.onFirstParentLine(from, to))) return this.fastForward(from, to);
    if (!(await this.isAncestor(from, to))) return false;
    const merge = await this.mergeOntoMain(from, to);
    this.logger.warn('the git remote took a branch main was merged into; main follows it through a merge that keeps its line', {
      remoteHead: to,
      merge,
    });
    await this.pushOrThrow(merge);
    return this.fastForward(from, merge);
  }

  /** Whether `ancestor` is on `descendant`'s first-parent line. */
  private async onFirstParentLine(ancestor: string, descendant: string): Promise<boolean> {
    const line = await gitRun(this.gitdir, ['rev-list', '--first-parent', '--parents', descendant, `^${ancestor}`, '--']);
    if (line.code !== 0) return false;
    const commits = line.stdout.split('\n').filter(Boolean);
    return commits.length === 0 || commits[commits.length - 1].split(' ')[1] === ancestor;
  }

  private async mergeOntoMain(main: string, head: string): Promise<string> {
    const described = await gitRun(this.gitdir, ['show', '-s', '--date=raw', '--format=%an%x00%ae%x00%ad%x00%s', head]);
    const [name, email, date, subject] = described.stdout.split('\0');
    const message = `Merge the git host's main ${head.slice(0, 12)} onto main (${subject})\n\nThe host took a branch main was merged into; this merge keeps main's first-parent line, the audit trail.\n`;
    const made = await gitRun(this.gitdir, ['commit-tree', `${head}^{tree}`, '-p', main, '-p', head, '-m', message], {
      env: {
        GIT_AUTHOR_NAME: name,
        GIT_AUTHOR_EMAIL: email,
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_NAME: 'flagops',
        GIT_COMMITTER_EMAIL: 'flagops@localhost',
      },
    });
    if (made.code !== 0) throw new FlagopsError('unavailable', `following the git remote's main failed: ${made.stderr.slice(0, 300)}`);
    return made.stdout.trim();
  }

  private async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return (await gitRun(this.gitdir, ['merge-base', '--is-ancestor', ancestor, descendant])).code === 0;
  }

  /**
   * Moves main from `from` to `to` when that is a fast-forward, with git's own compare-and-swap (update-ref
   * takes `refs/heads/main.lock`, the lock the store uses), so a concurrent local commit is never overwritten.
   */
  private async fastForward(from: string | null, to: string): Promise<boolean> {
    if (from !== null && !(await this.isAncestor(from, to))) return false;
    this.movingMainTo(to);
    const moved = await gitRun(this.gitdir, [
      'update-ref',
      '-m',
      'flagops: fast-forward to the git remote',
      'refs/heads/main',
      to,
      from ?? ZERO,
    ]);
    if (moved.code === 0) this.remoteHas(to);
    return moved.code === 0;
  }

  private async pushOrThrow(commit: string): Promise<void> {
    const pushed = await this.push(commit, MAIN_REF, this.pushTimeoutMs);
    if (pushed.timedOut) throw this.timedOut();
    if (pushed.code !== 0)
      throw new FlagopsError('unavailable', `pushing to the git remote ${redact(this.url)} failed: ${redact(pushed.stderr).slice(0, 300)}`);
    this.remoteHas(commit);
  }
}

/** What `work` settled with, or null when it takes longer than `ms` (it goes on). */
export async function settledWithin<T>(work: Promise<T>, ms: number): Promise<T | null> {
  const timer = new AbortController();
  try {
    return await Promise.race([work, sleep(ms, null, { signal: timer.signal })]);
  } finally {
    timer.abort();
  }
}
