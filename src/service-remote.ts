import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { HeldKills } from './features/kill/held-kills.js';
import { rebaseHeldKills } from './features/kill/kill-rebase.js';
import type { KillSwitch } from './features/kill/kill-switch.js';
import { RemoteMode, type RemoteSettings } from './features/remote/remote-mode.js';
import { type PushedCommit, settledWithin } from './features/remote/remote-sync.js';
import { RemoteTurns } from './features/remote/remote-turns.js';
import type { HeldBack } from './features/webhooks/webhook-service.js';
import { HeldKillsAheadError, RemoteDivergedError } from './foundations/errors/kinds.js';
import type { Logger } from './foundations/log/logger.js';
import type { ControlState, Unsubscribe } from './foundations/state/index.js';
import {
  type AddedObjects,
  type FlagRepository,
  type MainWrite,
  packOfAdded,
  type RepositoryRegistry,
} from './foundations/storage/index.js';

/**
 * The notice a control plane sends when it moved the git remote's main: every other one takes the commit from
 * the objects the notice carries when it is at the commit's parent, and fetches otherwise.
 */
const REMOTE_MOVED = 'git-remote-moved';
/** Objects are handed over up to this much (deflated, base64): a notice is at most ~8 KB. */
const MAX_HANDOFF_CHARS = 6_000;
/** Bigger than this before deflating would not fit in a notice deflated. */
const MAX_HANDOFF_OBJECT_BYTES = 64 * 1024;
/** A commit adding more than this is pushed by `git push`, which deltas against what the host has. */
const MAX_PUSHED_OBJECT_BYTES = 8 * 1024 * 1024;
/** How long a push's acknowledgement waits at most for the other control planes to be told of it. */
const TELL_OTHERS_WAIT_MS = 100;
/** How long a kill waits at most for the kills other control planes hold to be made here first. */
const HELD_FIRST_WAIT_MS = 500;
/** How long a kill waits at most for those kills to be made here, the database having listed them. */
const HELD_FIRST_MOST_MS = 3_000;

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
  inTurn<R extends MainWrite>(waitMs: number, work: () => Promise<R>): Promise<R>;
  /** What main holds that the remote lacks, for webhooks: they deliver an entry once the remote has it. */
  heldBack: HeldBack;
  /** Before a kill or clear through this control plane: the kills other control planes hold, made here first. */
  heldKillsFirst(org: string): Promise<void>;
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
  /** Told when main holds nothing the remote lacks any more (webhooks read on). */
  const releasedListeners = new Set<(org: string) => void>();
  // Until listen() has read the kills held before a stop, main may hold kills the remote lacks unknown to the sync.
  let listened = false;
  const released = () => {
    for (const listener of releasedListeners) listener(org);
  };
  const heldKills = () => {
    held ??= new HeldKills({
      org,
      store: state.heldKills,
      repo,
      killSwitch: deps.killSwitch(),
      logger,
      remakingHeld: (remaking) => remote.sync.remakingHeld(remaking),
      databaseDown: () => state.writesRefused(),
    });
    return held;
  };
  // Another control plane's held kills are made on the flags main holds: with nothing of the remote read yet there
  // are none, so the records are read once the first pull has read it (a kill refused meanwhile would be dropped).
  let heldSkipped = false;
  const catchUpHeld = async () => {
    heldSkipped = remote.sync.unread() !== undefined;
    if (!heldSkipped) await heldKills().catchUp();
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
      inSync: async (commit, pushedHere) => {
        void heldKills().released();
        if (heldSkipped) void catchUpHeld();
        if (!pushedHere) return;
        // Told before the change is acknowledged: a control plane killed right after answering would otherwise
        // leave the others without a change it acknowledged. A database that hangs holds the answer up no longer
        // than TELL_OTHERS_WAIT_MS (the notice goes on).
        const telling = noticeOf(commit)
          .then((notice) => state.notices.publish(REMOTE_MOVED, notice))
          .catch((err: Error) => logger.warn('other control planes not told of a push to the git remote', { err: err.message }));
        await settledWithin(telling, TELL_OTHERS_WAIT_MS);
      },
      released: () => {
        if (listened) released();
      },
    },
    async (commit) => {
      const added = await addedBy(commit);
      return added && { parent: added.parent, pack: packOfAdded(added) };
    },
  );
  // What the last commit pushed added, read once for its push and for the notice that hands it over.
  let lastAdded: { commit: string; added: Promise<AddedObjects | null> } | undefined;
  const addedBy = (commit: string): Promise<AddedObjects | null> => {
    if (lastAdded?.commit !== commit)
      lastAdded = {
        commit,
        added: repo()
          .then((r) => r.objectsAddedBy(commit, MAX_PUSHED_OBJECT_BYTES))
          .catch(() => null),
      };
    return lastAdded.added;
  };
  // The notice of this control plane's last push, made once for the other control planes and the next turn's holder.
  let lastNotice: { commit: string; notice: Promise<string> } | undefined;
  const noticeOf = (commit: string): Promise<string> => {
    if (lastNotice?.commit !== commit)
      lastNotice = { commit, notice: addedBy(commit).then((added) => JSON.stringify(remoteMovedNotice(org, commit, added))) };
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
    heldBack: {
      holding: (of) => of === org && (!listened || remote.sync.holdsKills),
      onReleased(listener) {
        releasedListeners.add(listener);
        return () => releasedListeners.delete(listener);
      },
    },
    async heldKillsFirst(of) {
      // Before listen() the records are read at start; with the database out of reach, there are none to read.
      if (of !== org || !listened || state.writesRefused() !== undefined) return;
      // A database slow to answer holds a kill no longer than this; the reading goes on. The making of what it
      // listed is waited for: a kill or clear made before an older one's copy would be undone by it.
      await heldKills().catchUpFirst(HELD_FIRST_WAIT_MS, HELD_FIRST_MOST_MS);
    },
    inTurn: (waitMs, work) =>
      turns.run(waitMs, async () => {
        try {
          return await work();
        } catch (err) {
          if (!(err instanceof RemoteDivergedError || err instanceof HeldKillsAheadError)) throw err;
          // Main holds kills the remote lacks (one slow to reach the host, made here from another control plane's
          // record): put on the remote's head, the update runs again on them, once.
          await remote.sync.pull().catch(() => undefined);
          return work();
        }
      }),
    async listen() {
      unsubscribe.push(
        state.notices.subscribe(REMOTE_MOVED, (payload) => {
          const notice = JSON.parse(payload) as RemoteMovedNotice;
          if (notice.org === org) remote.remoteMoved('another control plane pushed', handedOver(notice, repo));
        }),
        state.notices.onResync(() => {
          remote.remoteMoved('notices from other control planes may have been missed');
          void catchUpHeld();
        }),
        state.heldKills.onChange(() => void catchUpHeld()),
        // Main moved by a push through /git, `flagops import` against this data directory or another process:
        // told to the others as a change made here, since none of them hears of it otherwise before its poll.
        (await repo()).onMainMoved(({ to, origin }) => {
          if (origin === 'external') remote.movedOutside(org, to);
        }),
      );
      // With the database down or hanging, no notice comes: what the others push is fetched several times a second instead.
      remote.pollWhileDeaf(() => state.writesRefused() !== undefined);
      await catchUpHeld();
      // Kills held when the service stopped are on main still: held until the remote takes them.
      if (heldKills().holding) remote.sync.heldFromBefore();
      listened = true;
      if (!remote.sync.holdsKills) released();
    },
    close() {
      for (const stop of unsubscribe.splice(0)) stop();
      void turns.close();
      remote.close();
    },
  };
}

/** The notice of a push to the remote's main, with the objects the commit added when they are small enough. */
function remoteMovedNotice(org: string, commit: string, added: AddedObjects | null): RemoteMovedNotice {
  if (!added || added.framed.length > MAX_HANDOFF_OBJECT_BYTES) return { org, commit };
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
