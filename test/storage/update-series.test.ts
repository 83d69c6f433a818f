import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/foundations/errors/kinds.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository, type SeriesChange } from '../../src/foundations/storage/index.js';
import { configYaml, git, meta, pushFromOutside, seedShop, tempDir, track } from './helpers.js';

/** A change that sets flag `key`'s prod rollout, checked against the state it runs on, as the scheduler's are. */
function setRollout(key: string, rolloutPct: number): SeriesChange<number> {
  return (current) => {
    const config = current.projects.get('shop')?.flags.get(key)?.environments.prod;
    if (!config) throw new InvalidInputError(`no flag ${key}`);
    if (config.rolloutPct === rolloutPct) return null;
    return {
      changes: [{ path: layout.configFile('shop', 'prod', key), content: configYaml({ rolloutPct, version: config.version + 1 }) }],
      meta: meta('scheduled_change', { project: 'shop', flag: key, environment: 'prod' }),
      result: rolloutPct,
    };
  };
}

describe('a series of updates', () => {
  it('makes one commit per change, each on the one before, and moves main once to the last', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true }));
    const seeded = await seedShop(repo);
    const moves: string[] = [];
    repo.onMainMoved((event) => moves.push(`${event.from}→${event.to} ${event.origin}`));
    const result = await repo.updateSeries([
      setRollout('a', 25),
      setRollout('missing', 5),
      setRollout('b', 50),
      setRollout('a', 25),
      setRollout('a', 60),
    ]);
    expect(result.outcomes.map((o) => o.committed)).toEqual([true, false, true, false, true]);
    expect((result.outcomes[1] as { error?: unknown }).error).toBeInstanceOf(InvalidInputError);
    expect((result.outcomes[3] as { error?: unknown }).error).toBeUndefined();
    const commits = result.outcomes.flatMap((o) => (o.committed ? [o.commit] : []));
    expect(git(gitdir, 'rev-list', '--first-parent', `${seeded}..main`).split('\n').reverse()).toEqual(commits);
    expect(result.commit).toBe(commits[2]);
    expect(moves).toEqual([`${seeded}→${commits[2]} local`]);
    for (const [i, commit] of commits.entries()) {
      const files = git(gitdir, 'diff-tree', '--no-commit-id', '--name-only', '-r', commit).split('\n');
      expect(files).toEqual([layout.configFile('shop', 'prod', ['a', 'b', 'a'][i])]);
    }
    const prod = (await repo.readState()).state.projects.get('shop')!.flags;
    expect([prod.get('a')!.environments.prod.rolloutPct, prod.get('b')!.environments.prod.rolloutPct]).toEqual([60, 50]);
    expect(git(gitdir, 'fsck', '--full', '--strict', '--no-progress')).toBe('');
  });

  it('counts each of its commits, as every commit the service makes is counted (flagops_commits_total)', async () => {
    const counted: string[] = [];
    const repo = track(
      await FlagRepository.open({ gitdir: join(tempDir(), 'r.git'), create: true, onCommit: (action) => counted.push(action) }),
    );
    await seedShop(repo);
    expect(counted).toEqual(['project_create']);
    await repo.updateSeries([setRollout('a', 25), setRollout('missing', 5), setRollout('b', 50)]);
    expect(counted).toEqual(['project_create', 'scheduled_change', 'scheduled_change']);
  });

  it('makes no commit when no change does, and leaves main where it was', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true }));
    const seeded = await seedShop(repo);
    const result = await repo.updateSeries([setRollout('a', 0), setRollout('missing', 5)]);
    expect(result.commit).toBe(seeded);
    expect(result.outcomes.map((o) => o.committed)).toEqual([false, false]);
    expect(await repo.head()).toBe(seeded);
  });

  it('runs the whole series again on the new head when main moved meanwhile', async () => {
    const gitdir = join(tempDir(), 'r.git');
    let pushes = 0;
    const repo = track(
      await FlagRepository.open({
        gitdir,
        create: true,
        beforeRefUpdate: () => {
          if (pushes++ > 0) return;
          // Someone sets a's rollout to 25 first: the series' first change is then already made.
          pushFromOutside(gitdir, (checkout) =>
            writeFileSync(join(checkout, layout.configFile('shop', 'prod', 'a')), configYaml({ rolloutPct: 25, version: 7 })),
          );
        },
      }),
    );
    pushes = 1;
    await seedShop(repo);
    pushes = 0;
    const result = await repo.updateSeries([setRollout('a', 25), setRollout('b', 50)]);
    expect(result.outcomes.map((o) => o.committed)).toEqual([false, true]);
    expect(git(gitdir, 'log', '--format=%s', '-3').split('\n')).toEqual([
      'scheduled_change by test',
      'edit from outside',
      'project_create by test',
    ]);
  });
});
