import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { HeldKills } from './features/kill/held-kills.js';
import { rebaseHeldKills } from './features/kill/kill-rebase.js';
import type { KillSwitch } from './features/kill/kill-switch.js';
import { RemoteMode, type RemoteSettings } from './features/remote/remote-mode.js';
import type { PushedCommit } from './features/remote/remote-sync.js';
import { RemoteTurns } from './features/remote/remote-turns.js';
import type { Logger } from './foundations/log/logger.js';
import type { ControlState, Unsubscribe } from './foundations/state/index.js';
import type { FlagRepository, RepositoryRegistry, UpdateResult } from './foundations/storage/index.js';

/**
 * The notice a control plane sends when it moved the git remote's main: every other one takes the commit from
 * the objects the notice carries when it is at the commit's parent, and fetches otherwise.
 */
const REMOTE_MOVED = 'git-remote-moved';
/** Objects are handed over up to this much (deflated, base64): a notice is at most ~8 KB. */
const MAX_HANDOFF_CHARS = 6_000;
/** Bigger than this before deflating is not worth reading to find out. */
const MAX_HANDOFF_OBJECT_BYTES = 64 * 1024;
/** A commit adding more than this is pushed by `git push`, which deltas against what the host has. */
const MAX_PUSHED_PACK_OBJECT_BYTES = 8 * 1024 * 1024;

interface RemoteMovedNotice {
  org?: string;
  commit?: string;
  parent?: string;
  /** The objects `commit` adds to `parent` (FlagRepository.objectsAddedBy), deflated and base64. */
  objects?: string;
}

export interface RemoteWiring {
  remote: RemoteMode;
  /** Once the organisation is served (after `remote.start()`): serve what other control planes hold, and listen to them. */
  listen(): Promise<void>;
  /**
   * Runs an update in this control plane's turn among those sharing the remote (RemoteTurns), waiting at most
   * `waitMs` for it.
   */
  inTurn<T>(waitMs: number, work: () => Promise<UpdateResult<T>>): Promise<UpdateResult<T>>;
  close(): void;
}

/**
 * Remote mode's wiring into the service: the remote sync, kills held while the remote is unreachable (shared
 * with the other control planes through the state), and the notices that make every control plane fetch as
 * soon as one of them moved the remote's main, rather than at its next poll.
 */
export function wireRemoteMode(deps: {
  settings: RemoteSettings;
  repos: RepositoryRegistry;
  state: ControlState;
  killSwitch: () => KillSwitch;
  served: () => Promise<void> | void;
  logger: Logger;
}): RemoteWiring {
  const { settings, repos, state, logger } = deps;
  const org = settings.org;
  const repo = () => repos.get(org);
  let held: HeldKills | undefined;
  const heldKills = () => {
    held ??= new HeldKills({
      org,
      store: state.heldKills,
      repo,
      killSwitch: deps.killSwitch(),
      logger,
      remakingHeld: (remaking) => remote.sync.remakingHeld(remaking),
    });
    return held;
  };
  const remote: RemoteMode = new RemoteMode(
    settings,
    repos.gitdirOf(org),
    logger,
    deps.served,
    async (commits) => rebaseHeldKills(await repo(), commits, () => remote.sync.fetchedHead()),
    {
      // The notice is made while the push runs, so the others are told the moment it lands.
      pushing: (commit) => void noticeOf(commit).catch(() => undefined),
      held: (commit) => heldKills().held(commit),
      inSync: (commit, pushedHere) => {
        void heldKills().released();
        if (pushedHere)
          noticeOf(commit)
            .then((notice) => state.notices.publish(REMOTE_MOVED, notice))
            .catch((err: Error) => logger.warn('other control planes not told of a push to the git remote', { err: err.message }));
      },
    },
    async (commit) => (await repo()).packAddedBy(commit, MAX_PUSHED_PACK_OBJECT_BYTES).catch(() => null),
  );
  // The notice of this control plane's last push, made once for the other control planes and the next turn's holder.
  let lastNotice: { commit: string; notice: Promise<string> } | undefined;
  const noticeOf = (commit: string): Promise<string> => {
    if (lastNotice?.commit !== commit) lastNotice = { commit, notice: remoteMovedNotice(org, commit, repo).then((n) => JSON.stringify(n)) };
    return lastNotice.notice;
  };
  const turns = new RemoteTurns({
    take: (waitMs) => state.takeTurn(`git-remote:${org}`, waitMs),
    catchUp: (notices) =>
      remote.sync.catchUpTo(
        notices
          .map((payload) => JSON.parse(payload) as RemoteMovedNotice)
          .filter((notice) => notice.org === org && notice.commit)
          .map((notice) => handedOver(notice, repo) ?? { commit: notice.commit! }),
      ),
    noticeOf,
  });
  const unsubscribe: Unsubscribe[] = [];
  return {
    remote,
    inTurn: (waitMs, work) => turns.run(waitMs, work),
    async listen() {
      unsubscribe.push(
        state.notices.subscribe(REMOTE_MOVED, (payload) => {
          const notice = JSON.parse(payload) as RemoteMovedNotice;
          if (notice.org === org) remote.remoteMoved('another control plane pushed', handedOver(notice, repo));
        }),
        state.notices.onResync(() => {
          remote.remoteMoved('notices from other control planes may have been missed');
          void heldKills().catchUp();
        }),
        state.heldKills.onChange(() => void heldKills().catchUp()),
      );
      await heldKills().catchUp();
    },
    close() {
      for (const stop of unsubscribe.splice(0)) stop();
      void turns.close();
      remote.close();
    },
  };
}

/** The notice of a push to the remote's main, with the objects the commit added when they are small enough. */
async function remoteMovedNotice(org: string, commit: string, repo: () => Promise<FlagRepository>): Promise<RemoteMovedNotice> {
  const added = await (await repo()).objectsAddedBy(commit, MAX_HANDOFF_OBJECT_BYTES).catch(() => null);
  if (!added) return { org, commit };
  const objects = deflateRawSync(added.framed).toString('base64');
  return objects.length > MAX_HANDOFF_CHARS ? { org, commit } : { org, commit, parent: added.parent, objects };
}

/** The commit a notice hands over, for RemoteSync to take without a fetch; undefined when it carries none. */
function handedOver(notice: RemoteMovedNotice, repo: () => Promise<FlagRepository>): PushedCommit | undefined {
  const { commit, parent, objects } = notice;
  if (!commit || !parent || !objects) return undefined;
  return {
    commit,
    parent,
    async writeObjects() {
      const repository = await repo();
      if ((await repository.head()) !== parent) return false;
      return repository.writeAddedObjects(
        inflateRawSync(Buffer.from(objects, 'base64'), { maxOutputLength: MAX_HANDOFF_OBJECT_BYTES }),
        commit,
        parent,
      );
    },
  };
}
