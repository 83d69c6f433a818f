import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RepositoryState } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { VersionConflictError, WriteConflictError } from '../../src/foundations/errors/kinds.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository, type MainMoved } from '../../src/foundations/storage/index.js';
import { configYaml, git, meta, pushFromOutside, seedShop, tempDir, track, waitFor } from './helpers.js';

async function openSeeded(options: { maxAttempts?: number } = {}) {
  const repo = track(await FlagRepository.open({ gitdir: join(tempDir(), 'org.git'), create: true, watchDebounceMs: 20, ...options }));
  const seeded = await seedShop(repo);
  return { repo, seeded };
}

/** An engineer's push that sets flag `flag`'s prod config to `version`. */
function pushConfig(gitdir: string, flag: string, version: number): string {
  return pushFromOutside(gitdir, (checkout) =>
    writeFileSync(join(checkout, layout.configFile('shop', 'prod', flag)), configYaml({ enabled: true, rolloutPct: 10, version })),
  );
}

const prodVersion = (state: RepositoryState, flag: string) => state.projects.get('shop')!.flags.get(flag)!.environments.prod.version;

describe('onMainMoved', () => {
  it('announces our own commit at once, before update resolves, and only once', async () => {
    const { repo, seeded } = await openSeeded();
    await repo.watch();
    const events: MainMoved[] = [];
    repo.onMainMoved((e) => events.push(e));
    const { commit } = await repo.update(() => ({
      changes: [{ path: layout.configFile('shop', 'dev', 'a'), content: configYaml({ enabled: true }) }],
      meta: meta('config_update'),
      result: undefined,
    }));
    expect(events).toEqual([{ from: seeded, to: commit, origin: 'local' }]);
    // The watcher sees the ref file change too; it must not announce our commit a second time. A push after it
    // is announced by that same watcher: our commit announced again would come before it, or in its place
    // (from the seed, when both ref changes are read at once).
    const pushed = pushConfig(repo.gitdir, 'a', 5);
    await waitFor(() => (events.length > 1 ? true : undefined));
    expect(events).toEqual([
      { from: seeded, to: commit, origin: 'local' },
      { from: commit, to: pushed, origin: 'external' },
    ]);
  });

  it('announces a push from outside (git push into the bare repository) with origin external', async () => {
    const { repo, seeded } = await openSeeded();
    await repo.watch();
    const events: MainMoved[] = [];
    repo.onMainMoved((e) => events.push(e));
    const pushed = pushConfig(repo.gitdir, 'a', 5);
    await waitFor(() => (events.length > 0 ? true : undefined));
    expect(events).toEqual([{ from: seeded, to: pushed, origin: 'external' }]);
    expect(prodVersion((await repo.readState()).state, 'a')).toBe(5);
  });

  it('announces a push that landed before watching started, once watch() is ready', async () => {
    const { repo, seeded } = await openSeeded();
    const events: MainMoved[] = [];
    repo.onMainMoved((e) => events.push(e));
    const pushed = pushConfig(repo.gitdir, 'a', 4);
    await repo.watch();
    await waitFor(() => (events.length > 0 ? true : undefined));
    expect(events).toEqual([{ from: seeded, to: pushed, origin: 'external' }]);
  });

  it('stops calling a listener once it unsubscribes', async () => {
    const { repo } = await openSeeded();
    const events: MainMoved[] = [];
    const stop = repo.onMainMoved((e) => events.push(e));
    stop();
    await repo.update(() => ({
      changes: [{ path: layout.configFile('shop', 'dev', 'a'), content: configYaml({ version: 9 }) }],
      meta: meta('config_update'),
      result: 0,
    }));
    expect(events).toEqual([]);
  });
});

describe('a change that lands on main while an update is in flight (compare-and-swap)', () => {
  it('is kept: the write function runs again on the new head and both changes are on main', async () => {
    const { repo, seeded } = await openSeeded();
    const events: MainMoved[] = [];
    repo.onMainMoved((e) => events.push(e));
    const heads: Array<string | null> = [];
    let pushed = '';
    const { commit, parent } = await repo.update((_current, head) => {
      heads.push(head);
      if (heads.length === 1) pushed = pushConfig(repo.gitdir, 'b', 7);
      return {
        changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: true, version: 2 }) }],
        meta: meta('config_update', { flag: 'a' }),
        result: undefined,
      };
    });
    expect(heads).toEqual([seeded, pushed]);
    expect(parent).toBe(pushed);
    expect(git(repo.gitdir, 'rev-list', '--count', 'main')).toBe('3');
    const { state } = await repo.readState();
    expect(prodVersion(state, 'a')).toBe(2);
    expect(prodVersion(state, 'b')).toBe(7);
    // Subscribers see the push, then our commit on top of it: a chain with no gap.
    expect(events).toEqual([
      { from: seeded, to: pushed, origin: 'external' },
      { from: pushed, to: commit, origin: 'local' },
    ]);
  });

  it('is never overwritten when the re-run refuses (version conflict): nothing of ours is committed', async () => {
    const { repo } = await openSeeded();
    let pushed = '';
    const update = repo.update((current) => {
      const version = prodVersion(current, 'a');
      if (!pushed) pushed = pushConfig(repo.gitdir, 'a', version + 1);
      else if (version !== 1) throw new VersionConflictError(version, 1);
      return {
        changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ rolloutPct: 99, version: version + 1 }) }],
        meta: meta('config_update', { flag: 'a' }),
        result: undefined,
      };
    });
    await expect(update).rejects.toBeInstanceOf(VersionConflictError);
    expect(git(repo.gitdir, 'rev-parse', 'main')).toBe(pushed);
    expect((await repo.readState()).state.projects.get('shop')!.flags.get('a')!.environments.prod.rolloutPct).toBe(10);
  });

  it('fails with WriteConflictError after a bounded number of runs when main keeps moving', async () => {
    const { repo } = await openSeeded({ maxAttempts: 3 });
    let runs = 0;
    const update = repo.update(() => {
      runs++;
      pushConfig(repo.gitdir, 'b', 100 + runs);
      return {
        changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ version: 50 }) }],
        meta: meta('config_update'),
        result: undefined,
      };
    });
    await expect(update).rejects.toBeInstanceOf(WriteConflictError);
    expect(runs).toBe(3);
    expect(prodVersion((await repo.readState()).state, 'a')).toBe(1);
    // The seed and three pushes; our change never landed.
    expect(git(repo.gitdir, 'rev-list', '--count', 'main')).toBe('4');
    expect(git(repo.gitdir, 'log', '--format=%an', 'main~3..main').split('\n')).toEqual([
      'Erin Engineer',
      'Erin Engineer',
      'Erin Engineer',
    ]);
  });
});

describe('main living in packed-refs (after git gc or git pack-refs)', () => {
  it('is read and updated, and git agrees with the result', async () => {
    const { repo, seeded } = await openSeeded();
    git(repo.gitdir, 'pack-refs', '--all');
    expect(git(repo.gitdir, 'for-each-ref', '--format=%(refname)', 'refs/heads')).toBe('refs/heads/main');
    const reopened = track(await FlagRepository.open({ gitdir: repo.gitdir }));
    expect(await reopened.head()).toBe(seeded);
    const { commit, parent } = await reopened.update(() => ({
      changes: [{ path: layout.configFile('shop', 'staging', 'b'), content: configYaml({ enabled: true }) }],
      meta: meta('config_update'),
      result: undefined,
    }));
    expect(parent).toBe(seeded);
    expect(git(repo.gitdir, 'rev-parse', 'main')).toBe(commit);
    expect(git(repo.gitdir, 'fsck', '--full', '--strict', '--no-dangling')).toBe('');
  });

  it('is not overwritten when it moved in packed-refs during an update', async () => {
    const { repo, seeded } = await openSeeded();
    const heads: Array<string | null> = [];
    let pushed = '';
    await repo.update((_current, head) => {
      heads.push(head);
      if (heads.length === 1) {
        pushed = pushConfig(repo.gitdir, 'a', 3);
        git(repo.gitdir, 'pack-refs', '--all');
      }
      return {
        changes: [{ path: layout.configFile('shop', 'dev', 'b'), content: configYaml({ version: 4 }) }],
        meta: meta('config_update'),
        result: undefined,
      };
    });
    expect(heads).toEqual([seeded, pushed]);
    expect(git(repo.gitdir, 'rev-list', '--count', 'main')).toBe('3');
    expect(prodVersion((await repo.readState()).state, 'a')).toBe(3);
  });
});
