import { join } from 'node:path';
import { RemoteSync } from '../../src/features/remote/remote-sync.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { configYaml, git, meta, seedShop, tempDir, track } from '../storage/helpers.js';

/**
 * A repository holding project `shop`, a bare repository on disk as its git remote (main at the same commit), and
 * the RemoteSync between them; `commit(version)` commits a change of shop/a in prod here, without publishing it.
 */
export async function repositoryFollowingRemote() {
  const gitdir = join(tempDir(), 'r.git');
  const repo = track(await FlagRepository.open({ gitdir, create: true }));
  const parent = await seedShop(repo);
  const remote = join(tempDir(), 'host.git');
  git(tempDir(), 'init', '--quiet', '--bare', '--initial-branch=main', remote);
  git(gitdir, 'push', '--quiet', remote, `${parent}:refs/heads/main`);
  const sync = new RemoteSync(gitdir, remote, silentLogger);
  const commit = async (version: number): Promise<string> =>
    (
      await repo.update(() => ({
        changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: true, rolloutPct: 40, version }) }],
        meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
        result: undefined,
      }))
    ).commit!;
  return { gitdir, repo, parent, remote, sync, commit };
}
