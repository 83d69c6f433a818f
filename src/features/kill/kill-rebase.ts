import type { KillEntry, RepositoryState } from '@flagops/core';
import { layout } from '../../foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../foundations/repository/serialize-file.js';
import type { Change, CommitMeta, FlagRepository, SeriesChange } from '../../foundations/storage/index.js';
import { isKillAction, killsAfter } from './kill-switch.js';

/** One kill or cleared kill that main holds and the remote does not, as its commit recorded it. */
export interface CommittedKill {
  meta: CommitMeta & { project: string; flag: string; environment: NonNullable<CommitMeta['environment']> };
  /** The kill's entry as first made (killedAt, killedBy, reason); null for a cleared kill. */
  entry: KillEntry | null;
}

/**
 * Remote mode, when main and the remote have diverged because main holds kills the remote could not take
 * (it was unreachable) while the remote got other commits (another control plane's, a merged pull request):
 * main is rebuilt on the remote's head with each held kill made again, in order, with its first entry, and
 * pushed. A kill the remote already has (another control plane made the same kill) makes no commit, so each
 * reaches the audit trail once. Main moves in one step from the old commits to the new ones: nothing is
 * un-served on the way.
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
  for (const oid of heldCommits) {
    const kill = await committedKill(repo, oid);
    if (!kill) return false;
    held.push(kill);
  }
  const changes: SeriesChange<null>[] = held.map((kill) => (current) => remake(current, kill));
  await repo.rebuildMainOnto(remoteHead, changes);
  return true;
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
