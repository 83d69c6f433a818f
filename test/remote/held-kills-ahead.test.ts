import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RemoteSync } from '../../src/features/remote/remote-sync.js';
import { HeldKillsAheadError } from '../../src/foundations/errors/kinds.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { configYaml, git, meta, pushFromOutside, seedShop, tempDir, track } from '../storage/helpers.js';

describe('a change pushed while main holds a kill the git remote has not taken, the remote having moved on meanwhile', () => {
  it('is refused as one to try again in a moment, not as a divergence an operator must reconcile', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true }));
    const parent = await seedShop(repo);
    const remote = join(tempDir(), 'host.git');
    git(tempDir(), 'init', '--quiet', '--bare', '--initial-branch=main', remote);
    git(gitdir, 'push', '--quiet', remote, `${parent}:refs/heads/main`);
    const sync = new RemoteSync(gitdir, remote, silentLogger);
    const commit = async (version: number) =>
      (
        await repo.update(() => ({
          changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: true, rolloutPct: 40, version }) }],
          meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
          result: undefined,
        }))
      ).commit!;

    // The host is out of reach when the kill comes: it is held here (committed, served) and retried.
    const kill = await commit(2);
    renameSync(remote, `${remote}.away`);
    expect(await sync.publish(kill, parent, 'kill')).toBe(true);
    expect(sync.holdsKills).toBe(true);
    sync.close(); // no retries: the host stays without the kill for this test
    renameSync(`${remote}.away`, remote);
    // Back, it takes another change first (a merge on the host, another control plane).
    const moved = pushFromOutside(
      remote,
      (checkout) => writeFileSync(join(checkout, 'README.md'), 'merged on the host\n'),
      'a change on the host',
    );

    const change = await commit(3);
    const refused = await sync.publish(change, kill).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(HeldKillsAheadError);
    expect((refused as Error).message).toContain('holds kills the git remote');
    expect(sync.health()).toMatchObject({ diverged: false, holdingKills: true });
    expect(git(remote, 'rev-parse', 'main')).toBe(moved);
  });
});
