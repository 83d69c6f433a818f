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

/** Kills flag `a` in prod, as the kill switch does (queued behind what is writing). */
const killA = (repo: FlagRepository, options: { cutAtOnce?: boolean } = {}) =>
  repo.update(
    () => ({
      changes: [
        { path: layout.killsFile('shop', 'prod'), content: 'kills:\n  a:\n    killedAt: 2026-01-01T00:00:00.000Z\n    killedBy: ops\n' },
      ],
      meta: meta('kill', { project: 'shop', flag: 'a', environment: 'prod' }),
      result: 'killed',
    }),
    { waitForLock: true, ...options },
  );

/**
 * A seeded repository whose git host, once `hang` is set, takes every push but a kill's and never answers it
 * until the signal ends the push. `cut`: commits whose publishing the signal let go; `published`: the others.
 */
async function repositoryWithHangingHost(name: string, cutPublishAfterMs = 50) {
  const host = { hang: false, hung: 0, slowMs: 0, slow: 0, cut: [] as string[], published: [] as string[] };
  const gitdir = join(tempDir(), name);
  const repo = track(
    await FlagRepository.open({
      gitdir,
      create: true,
      durable: false,
      cutPublishAfterMs,
      publish: (_dir, commit, _parent, action, signal) => {
        if (action !== 'kill' && !host.hang && host.slowMs > 0) {
          // Answers, but not at once: as a git host does.
          host.slow++;
          return new Promise((resolve, reject) => {
            const answered = setTimeout(() => {
              host.published.push(commit);
              resolve(true);
            }, host.slowMs);
            signal?.addEventListener('abort', () => {
              clearTimeout(answered);
              host.cut.push(commit);
              reject(new Error('the git host did not answer'));
            });
          });
        }
        if (!host.hang || action === 'kill') {
          host.published.push(commit);
          return Promise.resolve(true);
        }
        host.hung++;
        return new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => {
            host.cut.push(commit);
            reject(new Error('the git host did not answer'));
          });
        });
      },
    }),
  );
  const seeded = await seedShop(repo);
  host.published.length = 0;
  return { gitdir, repo, seeded, host };
}

/**
 * Starts `write` with the host hanging, then, once its publishing has begun (its commit is with the host), a
 * kill: the write's publishing is cut off and the write refused, and the kill is committed on the head the
 * write left alone.
 */
async function killBehindHungWrite(
  repo: FlagRepository,
  seeded: string,
  host: { hang: boolean; hung: number; cut: string[] },
  write: () => Promise<unknown>,
) {
  host.hang = true;
  // What the write settles to: null when answered, its error when refused.
  const refused = write().then(
    () => null,
    (err: Error) => err,
  );
  await until(
    async () => host.hung,
    (n) => n === 1,
  );
  const kill = await killA(repo);
  expect(kill).toMatchObject({ committed: true, parent: seeded, result: 'killed' });
  expect((await refused)?.message).toMatch(/did not answer/);
  expect(host.cut).toHaveLength(1);
  return kill;
}

describe('a kill queued behind an update whose publishing hangs (remote mode: a git host that does not answer)', () => {
  it('cuts that publishing off after the grace, is committed on the head the update left alone, and the next update works', async () => {
    const { gitdir, repo, seeded, host } = await repositoryWithHangingHost('hung.git');
    const kill = await killBehindHungWrite(repo, seeded, host, () => repo.update(configUpdate(40)));
    expect(git(gitdir, 'rev-parse', 'main')).toBe(kill.commit);

    host.hang = false;
    const next = await repo.update(configUpdate(60));
    expect(next).toMatchObject({ committed: true, parent: kill.commit });
    // Each change that was answered is on main once; the one cut off is not there.
    expect(git(gitdir, 'log', '--format=%s', 'main').split('\n')).toHaveLength(3);
    expect(host.published).toEqual([kill.commit, next.commit]);
  });

  it('a kill made again from another control plane’s record (cutAtOnce) cuts that publishing off at once, not after the grace', async () => {
    // A grace no test waits for: only cutting at once lets the kill through.
    const { repo, seeded, host } = await repositoryWithHangingHost('hung-copy.git', 600_000);
    host.hang = true;
    const refused = repo.update(configUpdate(40)).then(
      () => null,
      (err: Error) => err,
    );
    await until(
      async () => host.hung,
      (n) => n === 1,
    );
    const kill = await killA(repo, { cutAtOnce: true });
    expect(kill).toMatchObject({ committed: true, parent: seeded, result: 'killed' });
    expect((await refused)?.message).toMatch(/did not answer/);
    expect(host.cut).toHaveLength(1);
  });

  it('cuts off a series (scheduled steps) the same way, and the next series works', async () => {
    const { repo, seeded, host } = await repositoryWithHangingHost('hung-series.git');
    const kill = await killBehindHungWrite(repo, seeded, host, () => repo.updateSeries([configUpdate(40), configUpdate(50)]));

    host.hang = false;
    const next = await repo.updateSeries([configUpdate(60)]);
    expect(next.outcomes).toMatchObject([{ committed: true }]);
    expect(next.parent).toBe(kill.commit);
  });

  it('gives the grace again a few seconds after a cut, so a host that answers again gets through a steady run of kills', async () => {
    const { repo, seeded, host } = await repositoryWithHangingHost('hung-then-answering.git');
    await killBehindHungWrite(repo, seeded, host, () => repo.update(configUpdate(40)));
    host.hang = false;
    // Slow enough that the kill behind it is surely queued while it is under way, however busy the machine.
    host.slowMs = 2_000;
    /** A config update whose publishing is under way when a kill is queued behind it: how it settles. */
    const updateWithKillBehind = async (rolloutPct: number) => {
      const before = host.slow;
      const update = repo.update(configUpdate(rolloutPct)).then(
        (outcome) => outcome.committed,
        (err: Error) => err.message,
      );
      await until(
        async () => host.slow,
        (n) => n > before,
      );
      await killA(repo);
      return update;
    };
    // Right after the cut the host is taken as not answering: cut at once, not given the grace.
    expect(await updateWithKillBehind(50)).toMatch(/did not answer/);
    // A few seconds on, given the grace (50 ms), the host's answer (20 ms) comes in time.
    await new Promise((resolve) => setTimeout(resolve, 5_100));
    host.slowMs = 20;
    expect(await updateWithKillBehind(60)).toBe(true);
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
