import { HeldKills } from './features/kill/held-kills.js';
import { rebaseHeldKills } from './features/kill/kill-rebase.js';
import type { KillSwitch } from './features/kill/kill-switch.js';
import { RemoteMode, type RemoteSettings } from './features/remote/remote-mode.js';
import type { Logger } from './foundations/log/logger.js';
import type { ControlState, Unsubscribe } from './foundations/state/index.js';
import type { RepositoryRegistry } from './foundations/storage/index.js';

/** The notice a control plane sends when it moved the git remote's main: every other one fetches at once. */
const REMOTE_MOVED = 'git-remote-moved';

export interface RemoteWiring {
  remote: RemoteMode;
  /** Once the organisation is served (after `remote.start()`): serve what other control planes hold, and listen to them. */
  listen(): Promise<void>;
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
    held ??= new HeldKills({ org, store: state.heldKills, repo, killSwitch: deps.killSwitch(), logger });
    return held;
  };
  const remote: RemoteMode = new RemoteMode(
    settings,
    repos.gitdirOf(org),
    logger,
    deps.served,
    async (commits) => rebaseHeldKills(await repo(), commits, () => remote.sync.fetchedHead()),
    {
      held: (commit) => heldKills().held(commit),
      inSync: (commit, pushedHere) => {
        void heldKills().released();
        if (pushedHere)
          state.notices
            .publish(REMOTE_MOVED, JSON.stringify({ org, commit }))
            .catch((err: Error) => logger.warn('other control planes not told of a push to the git remote', { err: err.message }));
      },
    },
  );
  const unsubscribe: Unsubscribe[] = [];
  return {
    remote,
    async listen() {
      unsubscribe.push(
        state.notices.subscribe(REMOTE_MOVED, (payload) => {
          if ((JSON.parse(payload) as { org?: string }).org === org) remote.remoteMoved('another control plane pushed');
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
      remote.close();
    },
  };
}
