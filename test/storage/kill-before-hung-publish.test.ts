import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { until } from '../helpers/deadlines.js';
import { configYaml, git, meta, seedShop, tempDir, track } from './helpers.js';

/** A change of flag `a`'s config in prod, as the API's config update makes it. */
const configUpdate = (rolloutPct: number) => () => ({
  changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ rolloutPct, version: 2 }) }],
  meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
  result: rolloutPct,
});

describe('a kill queued behind an update whose publishing hangs (remote mode: a git host that does not answer)', () => {
  it('cuts that publishing off after the grace, is committed on the head the update left alone, and the next update works', async () => {
    const gitdir = join(tempDir(), 'hung.git');
    /** Commits whose publishing was let go by the signal, and those published. */
    const cut: string[] = [];
    const published: string[] = [];
    let hang = false;
    let hung = 0;
    const repo = track(
      await FlagRepository.open({
        gitdir,
        create: true,
        durable: false,
        cutPublishAfterMs: 50,
        // A git host that takes the push and never answers, until the signal ends the push.
        publish: (_dir, commit, _parent, action, signal) => {
          if (!hang || action === 'kill') {
            published.push(commit);
            return Promise.resolve(true);
          }
          hung++;
          return new Promise((_resolve, reject) => {
            signal?.addEventListener('abort', () => {
              cut.push(commit);
              reject(new Error('the git host did not answer'));
            });
          });
        },
      }),
    );
    const seeded = await seedShop(repo);
    published.length = 0;
    hang = true;
    const update = repo.update(configUpdate(40));
    const refused = update.then(
      () => null,
      (err: Error) => err,
    );
    // The update's commit is with the host: its publishing has begun.
    await until(
      async () => hung,
      (n) => n === 1,
    );
    const kill = await repo.update(
      () => ({
        changes: [
          { path: layout.killsFile('shop', 'prod'), content: 'kills:\n  a:\n    killedAt: 2026-01-01T00:00:00.000Z\n    killedBy: ops\n' },
        ],
        meta: meta('kill', { project: 'shop', flag: 'a', environment: 'prod' }),
        result: 'killed',
      }),
      { waitForLock: true },
    );
    expect(kill).toMatchObject({ committed: true, parent: seeded, result: 'killed' });
    expect((await refused)?.message).toMatch(/did not answer/);
    expect(cut).toHaveLength(1);
    expect(git(gitdir, 'rev-parse', 'main')).toBe(kill.commit);

    hang = false;
    const next = await repo.update(configUpdate(60));
    expect(next).toMatchObject({ committed: true, parent: kill.commit });
    // Each change that was answered is on main once; the one cut off is not there.
    expect(git(gitdir, 'log', '--format=%s', 'main').split('\n')).toHaveLength(3);
    expect(published).toEqual([kill.commit, next.commit]);
  });

  it('cuts off a series (scheduled steps) the same way, and the next series works', async () => {
    const gitdir = join(tempDir(), 'hung-series.git');
    const cut: string[] = [];
    let hang = false;
    let hung = 0;
    const repo = track(
      await FlagRepository.open({
        gitdir,
        create: true,
        durable: false,
        cutPublishAfterMs: 50,
        publish: (_dir, commit, _parent, action, signal) => {
          if (!hang || action === 'kill') return Promise.resolve(true);
          hung++;
          return new Promise((_resolve, reject) => {
            signal?.addEventListener('abort', () => {
              cut.push(commit);
              reject(new Error('the git host did not answer'));
            });
          });
        },
      }),
    );
    const seeded = await seedShop(repo);
    hang = true;
    const series = repo.updateSeries([configUpdate(40), configUpdate(50)]);
    const refused = series.then(
      () => null,
      (err: Error) => err,
    );
    // Both steps are committed and their tip is with the host: the series' publishing has begun.
    await until(
      async () => hung,
      (n) => n === 1,
    );
    const kill = await repo.update(
      () => ({
        changes: [
          { path: layout.killsFile('shop', 'prod'), content: 'kills:\n  a:\n    killedAt: 2026-01-01T00:00:00.000Z\n    killedBy: ops\n' },
        ],
        meta: meta('kill', { project: 'shop', flag: 'a', environment: 'prod' }),
        result: 'killed',
      }),
      { waitForLock: true },
    );
    expect(kill).toMatchObject({ committed: true, parent: seeded, result: 'killed' });
    expect((await refused)?.message).toMatch(/did not answer/);
    expect(cut).toHaveLength(1);

    hang = false;
    const next = await repo.updateSeries([configUpdate(60)]);
    expect(next.outcomes).toMatchObject([{ committed: true }]);
    expect(next.parent).toBe(kill.commit);
  });

  it('does not cut an update off when no kill waits', async () => {
    let release: (() => void) | undefined;
    let slow = false;
    const repo = track(
      await FlagRepository.open({
        gitdir: join(tempDir(), 'slow.git'),
        create: true,
        durable: false,
        cutPublishAfterMs: 1,
        publish: (_dir, _commit, _parent, _action, signal) =>
          slow
            ? new Promise((resolve, reject) => {
                release = () => resolve(true);
                signal?.addEventListener('abort', () => reject(new Error('cut off')));
              })
            : Promise.resolve(true),
      }),
    );
    await seedShop(repo);
    slow = true;
    const update = repo.update(configUpdate(40));
    await until(
      async () => release,
      (answer) => answer !== undefined,
    );
    // Well past the grace: only a kill waiting would cut it off.
    await new Promise((resolve) => setTimeout(resolve, 20));
    release?.();
    await expect(update).resolves.toMatchObject({ committed: true });
  });
});
