import type { KillEntry, RepositoryState } from '@flagops/core';
import { layout } from '../../foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../foundations/repository/serialize-file.js';
import type { Change, CommitMeta, FlagRepository, SeriesChange } from '../../foundations/storage/index.js';
import { isKillAction, killsAfter } from './kill-switch.js';

/** One kill or cleared kill that main holds and the remote does not, as its commit recorded it. */
export interface CommittedKill {
  /** A kill's body is one paragraph, its reason: kept as one string, as held kills record it. */
  meta: CommitMeta & { body?: string; project: string; flag: string; environment: NonNullable<CommitMeta['environment']> };
  /** The kill's entry as first made (killedAt, killedBy, reason); null for a cleared kill. */
  entry: KillEntry | null;
}

/** How far back commits are read for kills made already (the remote's new ones after an outage, or main's). */
const MAX_COMMITS_READ = 10_000;

/**
 * Remote mode, when main and the remote have diverged because main holds kills the remote could not take
 * (it was unreachable or slow) while the remote got other commits (another control plane's, a merged pull
 * request): main is rebuilt on the remote's head with each held kill made again, in order, with its first
 * entry, and pushed. A kill or clear the remote has already (the same one, pushed by another control plane that
 * made it from its record: `Flagops-Made-From` says so) is not made again: made after what the remote got
 * since, a kill would undo a clear that came after it. A kill that would change nothing on the remote's head
 * makes no commit either. So each reaches the audit trail once, in the order it was made. Main moves in one step
 * from the old commits to the new ones: nothing is un-served on the way.
 *
 * False, and nothing changed, unless every commit main holds beyond the remote is a kill or cleared kill this
 * installation made (its signature says so): other divergence is an operator's to reconcile.
 */
export async function rebaseHeldKills(
  repo: FlagRepository,
  heldCommits: readonly string[],
  remoteHead: () => Promise<string | null>,
): Promise<boolean> {
  const held: CommittedKill[] = [];
  if (!(await readHeld(repo, heldCommits, held))) return false;
  const forkPoint = heldCommits.length > 0 ? ((await repo.readCommit(heldCommits[0])).parents[0] ?? null) : null;
  let last = heldCommits.at(-1) ?? forkPoint;
  try {
    await repo.rebuildMainOnto(async (head) => {
      // Kills committed here since main was read (a kill or clear made meanwhile) are rebuilt too, never dropped.
      if (head !== last) {
        const commits = head === null ? [] : (await repo.firstParentLog({ from: head, until: last, limit: MAX_COMMITS_READ })).reverse();
        const onLast = commits.length > 0 && commits[0].parents[0] === last;
        const oids = commits.map((commit) => commit.oid);
        if (!onLast || !(await readHeld(repo, oids, held))) throw new MainMovedOtherwise();
        last = head;
      }
      const onto = await remoteHead();
      const madeOnRemote = await killsMade(repo, { from: onto, until: forkPoint });
      const restores = restoredAfter(held, madeOnRemote);
      const changes: SeriesChange<null>[] = held.map(
        (kill, i) => (current) => (madeOnRemote.has(kill.meta.madeFrom!) && !restores.has(i) ? null : remake(current, kill)),
      );
      return { onto, changes };
    });
  } catch (err) {
    if (err instanceof MainMovedOtherwise) return false;
    throw err;
  }
  return true;
}

/**
 * The held kills (by index) the remote has already that are made again all the same: for each flag and
 * environment, the last one the remote has, when kills or clears held here that the remote lacks came before it
 * (another control plane made it before it listed them, or its copies of them changed nothing there). Those are
 * made again on the remote's head, so each is in the audit trail; made after them, this one keeps the last word.
 */
function restoredAfter(held: readonly CommittedKill[], madeOnRemote: ReadonlyMap<string, number>): Set<number> {
  const lastOnRemote = new Map<string, number>();
  held.forEach((kill, i) => {
    if (madeOnRemote.has(kill.meta.madeFrom!)) lastOnRemote.set(killTarget(kill), i);
  });
  const restores = new Set<number>();
  held.forEach((kill, i) => {
    const last = lastOnRemote.get(killTarget(kill));
    if (last !== undefined && i < last && !madeOnRemote.has(kill.meta.madeFrom!)) restores.add(last);
  });
  return restores;
}

const killTarget = (kill: CommittedKill) => `${kill.meta.project}/${kill.meta.flag}/${kill.meta.environment}`;

/** Main moved, while a rebase waited for the write queue, by something other than kills made here. */
class MainMovedOtherwise extends Error {}

/** Adds the kill or clear each of `oids` made to `held`, each naming the commit that first made it; false for any other commit. */
async function readHeld(repo: FlagRepository, oids: readonly string[], held: CommittedKill[]): Promise<boolean> {
  for (const oid of oids) {
    const kill = await committedKill(repo, oid);
    if (!kill) return false;
    // Made again on the remote's head, it names the commit that first made it.
    held.push({ ...kill, meta: { ...kill.meta, madeFrom: kill.meta.madeFrom ?? oid } });
  }
  return true;
}

/**
 * The kills and clears that the commits from `from` back along first parents made, stopping before `until`, or
 * at a commit authored before `notBefore` (seconds): their commits, and the commits they were made again from,
 * each with the time (seconds) of the commit that made it.
 */
export async function killsMade(
  repo: FlagRepository,
  options: { from: string | null; until?: string | null; notBefore?: number },
): Promise<Map<string, number>> {
  const made = new Map<string, number>();
  let oid = options.from ?? undefined;
  for (let read = 0; oid !== undefined && oid !== options.until && read < MAX_COMMITS_READ; read++) {
    const commit = await repo.readCommit(oid);
    const at = commit.author.timestamp;
    if (options.notBefore !== undefined && at < options.notBefore) break;
    if (isKillAction(commit.flagops?.action)) {
      made.set(commit.oid, at);
      if (commit.flagops.madeFrom) made.set(commit.flagops.madeFrom, at);
    }
    oid = commit.parents[0];
  }
  return made;
}

/** The kill or cleared kill commit `oid` made, read from its signed trailers and kills file; null for any other commit. */
export async function committedKill(repo: FlagRepository, oid: string): Promise<CommittedKill | null> {
  const commit = await repo.readCommit(oid);
  const trailers = commit.flagops;
  if (!trailers || !isKillAction(trailers.action)) return null;
  const { project, flag, environment, actor } = trailers;
  if (!project || !flag || !environment) return null;
  let entry: KillEntry | null = null;
  if (trailers.action !== 'clear_kill') {
    const served = await repo.readServed(oid);
    entry = served.killFiles.get(project)?.[environment].kills[flag] ?? null;
    if (entry === null) return null;
  }
  const meta = {
    action: trailers.action,
    summary: commit.summary,
    body: commit.body.trim() || undefined,
    actor: {
      type: actor.type,
      name: actor.name ?? actor.keyPrefix ?? actor.type,
      ...(actor.keyPrefix ? { keyPrefix: actor.keyPrefix } : {}),
    },
    project,
    flag,
    environment,
    ...(trailers.madeFrom ? { madeFrom: trailers.madeFrom } : {}),
  };
  return { meta, entry };
}

/** The kill made again on `current` (the remote's state); null when it changes nothing there. */
function remake(current: RepositoryState, kill: CommittedKill): Change<null> | null {
  const { project: slug, flag, environment } = kill.meta;
  const project = current.projects.get(slug);
  if (!project?.flags.has(flag)) return null;
  const next = killsAfter(project.kills[environment], flag, kill.entry);
  if (next === null) return null;
  return {
    changes: [{ path: layout.killsFile(slug, environment), content: serializeRepositoryFile({ kind: 'kills', value: next }) }],
    meta: kill.meta,
    result: null,
  };
}
