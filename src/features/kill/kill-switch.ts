import type { Actor, EnvironmentName, KillEntry, KillsFile, RepositoryState } from '@flagops/core';
import { NotFoundError, VersionConflictError } from '../../foundations/errors/kinds.js';
import { layout } from '../../foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../foundations/repository/serialize-file.js';
import type { CommitMeta, FlagRepository } from '../../foundations/storage/index.js';

/** Where a kill made by this process is announced before the kill call returns (the evaluation server). */
export interface KillListener {
  applyKills(org: string, slug: string, env: EnvironmentName, kills: KillsFile, commit: string, parent: string | null): Promise<void>;
}

export interface KillSwitchOptions {
  clock?: () => Date;
  /** Told, for each kill or cleared kill, the seconds from the call to the evaluation server serving it. */
  onServed?: (seconds: number) => void;
  /**
   * Remote mode: brings `org`'s main up to the git remote; true when it reached it. A kill that would change
   * nothing (killed already, or a clear of no kill) is decided again after it, since main here may not hold yet
   * what another control plane pushed a moment ago: "already killed" must be true where it counts.
   */
  catchUp?: (org: string) => Promise<boolean>;
  /**
   * Remote mode with several control planes: makes the kills and clears other control planes hold (from their
   * records) before this one is decided. One answered there before this call was sent comes before it: without
   * them, a clear answered elsewhere a moment ago could undo this kill once made here, or this kill could be
   * taken as made already.
   */
  heldFirst?: (org: string) => Promise<void>;
  /**
   * Why `org` cannot be killed in now, as the error to answer with: it holds no state yet (remote mode, the git
   * remote not read since the start), so no flag of it is known here; other control planes can kill it.
   */
  refused?: (org: string) => Error | undefined;
}

export interface KillRequest {
  org: string;
  repo: FlagRepository;
  projectSlug: string;
  flagKey: string;
  environment: EnvironmentName;
  actor: Actor;
  reason?: string;
  /** The entry of a kill first made elsewhere (another control plane held it), kept as made; default: a new one. */
  entry?: KillEntry;
  /** The kill commit's audit action when it is not a person's kill: `guard_failed` for a guard stopping a rollout. */
  action?: KillAction;
  /** The commit that first made this kill or clear, when it is made again from another control plane's record. */
  madeFrom?: string;
  /**
   * With `madeFrom`: whether main at `head` has made it already (from another record of it, or taken from the git
   * remote with what came after it); then nothing is made. Asked in the write, on the head it would commit on.
   */
  madeOnMain?: (head: string | null) => Promise<boolean>;
  /**
   * The version of the environment's config the caller read (a clear sent as a config update): compared in the
   * write, on the head it commits on, so also on the git host's main once a push refused for it brought it here.
   */
  expectedVersion?: number;
}

/** The audit actions of commits that change a kills file through the fast path. */
export const KILL_ACTIONS = ['kill', 'clear_kill', 'guard_failed'] as const;
export type KillAction = (typeof KILL_ACTIONS)[number];

/** Whether a commit of this action is a kill or cleared kill made through the fast path. */
export function isKillAction(action: string | undefined): action is KillAction {
  return (KILL_ACTIONS as readonly (string | undefined)[]).includes(action);
}

export interface KillOutcome {
  /** False when the request changed nothing: the flag was already killed (kill) or not killed (clear). */
  changed: boolean;
  commit: string | null;
  state: RepositoryState;
  entry?: KillEntry;
}

/** How a kill names its actor in kills.yaml and flag responses: the key prefix for keys, the name otherwise. */
export function killedBy(actor: Actor): string {
  return actor.keyPrefix ?? actor.name;
}

/**
 * The kill fast path: a kill is one commit that touches only the environment's kills file,
 * and the evaluation server gets the new overlay in process before `kill` resolves, so the caller's response
 * is only sent once evaluation serves valueOff. Kills are sticky until `clear`.
 */
export class KillSwitch {
  private readonly clock: () => Date;

  constructor(
    private readonly listener: KillListener,
    private readonly options: KillSwitchOptions = {},
  ) {
    this.clock = options.clock ?? (() => new Date());
  }

  kill(request: KillRequest): Promise<KillOutcome> {
    return this.change(request, (kills, at) => {
      const entry: KillEntry = request.entry ?? { killedAt: at.toISOString(), killedBy: killedBy(request.actor) };
      if (request.reason && !request.entry) entry.reason = request.reason;
      return killsAfter(kills, request.flagKey, entry);
    });
  }

  clear(request: KillRequest): Promise<KillOutcome> {
    return this.change(request, (kills) => killsAfter(kills, request.flagKey, null));
  }

  private async change(request: KillRequest, edit: (kills: KillsFile, at: Date) => KillsFile | null): Promise<KillOutcome> {
    const { repo, projectSlug: slug, flagKey, environment: env } = request;
    const startedAt = performance.now();
    const refused = this.options.refused?.(request.org);
    if (refused) throw refused;
    // Not for a kill made from such a record: that is the making.
    if (request.madeFrom === undefined) await this.options.heldFirst?.(request.org);
    let written: KillsFile | null = null;
    // The new overlay is swapped in before main's move is announced, so that the announcement finds the kill
    // served already instead of reloading the whole environment for it; a failure is the kill call's, after it.
    let serving: Promise<void> | undefined;
    const serve = (commit: string, parent: string | null) => {
      serving = written === null ? undefined : this.listener.applyKills(request.org, slug, env, written, commit, parent);
      return serving?.catch(() => {}) ?? Promise.resolve();
    };
    // A kill never fails because someone holds the lock on main: it waits for it. It works on what is served,
    // held-back flags and projects included: an invalid kills file is rewritten from its last valid kills
    // (ServedState.killFiles), which makes it valid again.
    const update = () =>
      repo.update(
        async (_committed, head) => {
          const served = await repo.readServed(head);
          const flag = served.state.projects.get(slug)?.flags.get(flagKey);
          if (!flag) throw new NotFoundError(`flag ${flagKey} in project ${slug}`);
          const version = flag.environments[env].version;
          if (request.expectedVersion !== undefined && request.expectedVersion !== version)
            throw new VersionConflictError(version, request.expectedVersion);
          // Made again after main took it with what followed it (a clear), it would undo what followed.
          const made = (await request.madeOnMain?.(head)) === true;
          written = made ? null : edit(served.killFiles.get(slug)![env], this.clock());
          if (written === null) return { changes: [], meta: this.meta(request, 'kill'), result: null };
          const action = Object.hasOwn(written.kills, flagKey) ? (request.action ?? 'kill') : 'clear_kill';
          return {
            changes: [{ path: layout.killsFile(slug, env), content: serializeRepositoryFile({ kind: 'kills', value: written }) }],
            meta: this.meta(request, action),
            result: null,
          };
        },
        // Made again from another control plane's record: that one gave the git host its time already.
        {
          waitForLock: true,
          beforeAnnounce: serve,
          cutAtOnce: request.madeFrom !== undefined,
          // A clear sent with the version its caller read is decided on the git host's main while the host
          // answers: made on main here alone, a change the host took a moment ago would not be seen.
          awaitRemote: request.expectedVersion !== undefined,
        },
      );
    let outcome = await update();
    if (!outcome.committed && (await this.options.catchUp?.(request.org))) outcome = await update();
    if (!outcome.committed || written === null || outcome.commit === null) {
      return { changed: false, commit: outcome.commit, state: outcome.state };
    }
    const kills: KillsFile = written;
    await (serving ?? this.listener.applyKills(request.org, slug, env, kills, outcome.commit, outcome.parent));
    this.options.onServed?.((performance.now() - startedAt) / 1000);
    return { changed: true, commit: outcome.commit, state: outcome.state, entry: kills.kills[flagKey] };
  }

  private meta(request: KillRequest, action: KillAction): CommitMeta {
    const verb = action === 'clear_kill' ? 'clear kill of' : 'kill';
    // A kill made again from another control plane's record keeps the reason of its first entry.
    const reason = request.reason ?? (action === 'clear_kill' ? undefined : request.entry?.reason);
    return {
      action,
      summary: `${verb} ${request.flagKey} in ${request.environment}`,
      body: reason ? `reason: ${reason}` : undefined,
      actor: request.actor,
      project: request.projectSlug,
      flag: request.flagKey,
      environment: request.environment,
      ...(request.madeFrom ? { madeFrom: request.madeFrom } : {}),
    };
  }
}

/**
 * An environment's kills after killing `flagKey` with `entry` (null: clearing its kill); null when that
 * changes nothing (killed already, or not killed). A kill stands as first made: a second one keeps its entry.
 */
export function killsAfter(kills: KillsFile, flagKey: string, entry: KillEntry | null): KillsFile | null {
  if (entry !== null) return Object.hasOwn(kills.kills, flagKey) ? null : { kills: { ...kills.kills, [flagKey]: entry } };
  if (!Object.hasOwn(kills.kills, flagKey)) return null;
  const next = { ...kills.kills };
  delete next[flagKey];
  return { kills: next };
}
