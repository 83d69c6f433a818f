import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { configYaml, flagYaml, git, meta, seedShop, tempDir, track } from './helpers.js';

/** Each writer creates its own flags: flag `w<writer>-<n>` with its configs, one commit per flag. */
function createFlag(writer: number, n: number) {
  const key = `w${writer}-${n}`;
  return () => ({
    changes: [
      { path: layout.flagFile('shop', key), content: flagYaml(key) },
      ...(['dev', 'staging', 'prod'] as const).map((env) => ({
        path: layout.configFile('shop', env, key),
        content: configYaml({ version: n }),
      })),
    ],
    meta: meta('flag_create', { project: 'shop', flag: key }),
    result: key,
  });
}

async function runWriters(repos: FlagRepository[], writers: number, perWriter: number): Promise<string[]> {
  const keys: string[] = [];
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const repo = repos[w % repos.length];
      for (let n = 0; n < perWriter; n++) keys.push((await repo.update(createFlag(w, n))).result);
    }),
  );
  return keys;
}

describe('concurrent writers', () => {
  it('20 writers × 25 changes: every change is on main, each in exactly one commit', async () => {
    const repo = track(await FlagRepository.open({ gitdir: join(tempDir(), 'busy.git'), create: true, durable: false }));
    await seedShop(repo);
    const keys = await runWriters([repo], 20, 25);
    expect(new Set(keys).size).toBe(500);
    expect(git(repo.gitdir, 'rev-list', '--count', 'main')).toBe('501');
    const { state, issues } = await repo.readState();
    expect(issues).toEqual([]);
    for (const key of keys) expect(state.projects.get('shop')!.flags.has(key), key).toBe(true);
    // One commit per change: no commit carries two writers' flags.
    const subjects = git(repo.gitdir, 'log', '--format=%(trailers:key=Flagops-Flag,valueonly)', 'main').split('\n').filter(Boolean);
    expect(new Set(subjects).size).toBe(500);
  }, 120_000);

  it('two instances on one repository (two processes) never lose each other’s commits', async () => {
    const gitdir = join(tempDir(), 'shared.git');
    const first = track(await FlagRepository.open({ gitdir, create: true, durable: false, maxAttempts: 100 }));
    const second = track(await FlagRepository.open({ gitdir, durable: false, maxAttempts: 100 }));
    await seedShop(first);
    const keys = await runWriters([first, second], 6, 10);
    expect(git(gitdir, 'rev-list', '--count', 'main')).toBe('61');
    const { state } = await first.readState();
    for (const key of keys) expect(state.projects.get('shop')!.flags.has(key), key).toBe(true);
    // Commits that lost the race are left dangling, which git gc prunes; nothing may be missing or broken.
    expect(git(gitdir, 'fsck', '--full', '--no-dangling')).toBe('');
  }, 120_000);
});

describe('a commit published and moved onto main by someone else first (remote mode: a poll between push and ref move)', () => {
  it('counts as committed, once, instead of running the change again', async () => {
    const gitdir = join(tempDir(), 'published.git');
    let runs = 0;
    const repo = track(
      await FlagRepository.open({
        gitdir,
        create: true,
        durable: false,
        // What the poller does when it fetches the pushed commit: fast-forward main to it.
        publish: async (dir, commit, parent) => {
          if (parent !== null) git(dir, 'update-ref', 'refs/heads/main', commit, parent);
          return true;
        },
      }),
    );
    const seeded = await seedShop(repo);
    const outcome = await repo.update(() => {
      runs++;
      return {
        changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ rolloutPct: 40, version: 2 }) }],
        meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
        result: 'done',
      };
    });
    expect(runs).toBe(1);
    expect(outcome).toMatchObject({ committed: true, parent: seeded, result: 'done' });
    expect(git(gitdir, 'rev-parse', 'main')).toBe(outcome.commit);
    expect(git(gitdir, 'rev-list', '--count', 'main')).toBe('2');
  });
});
