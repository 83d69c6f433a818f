import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WriteConflictError } from '../../src/foundations/errors/kinds.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { removeLeftoverRefLocks } from '../../src/foundations/storage/git/refs.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { configYaml, git, meta, seedShop, tempDir, track } from './helpers.js';

const enableA = () => ({
  changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: true, version: 2 }) }],
  meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
  result: undefined,
});

/** Loose objects written but not reachable from main: what an interrupted commit leaves. */
function danglingObjects(gitdir: string): string {
  return git(gitdir, 'fsck', '--full', '--strict', '--dangling', '--no-progress');
}

describe('a write interrupted between its object writes and the ref update', () => {
  it('leaves main at the previous commit and a repository git fsck accepts', async () => {
    const gitdir = join(tempDir(), 'r.git');
    let fail = true;
    const repo = track(
      await FlagRepository.open({
        gitdir,
        create: true,
        beforeRefUpdate: () => {
          if (fail) throw new Error('power cut');
        },
      }),
    );
    fail = false;
    const seeded = await seedShop(repo);
    fail = true;
    await expect(repo.update(enableA)).rejects.toThrow('power cut');
    expect(await repo.head()).toBe(seeded);
    expect(git(gitdir, 'rev-parse', 'main')).toBe(seeded);
    // Neither the lock nor main's next value, written beside the objects, is left behind.
    expect(readdirSync(join(gitdir, 'refs/heads'))).toEqual(['main']);
    expect(readdirSync(join(gitdir, 'refs')).filter((name) => name.endsWith('.lock'))).toEqual([]);
    // The new commit's objects are complete on disk, just unreferenced: fsck lists them as dangling only.
    expect(danglingObjects(gitdir)).toMatch(/^dangling commit [0-9a-f]{40}$/);
    expect((await repo.readState()).state.projects.get('shop')!.flags.get('a')!.environments.prod.enabled).toBe(false);

    fail = false;
    const { commit } = await repo.update(enableA);
    expect(git(gitdir, 'rev-list', '--count', 'main')).toBe('2');
    expect(git(gitdir, 'rev-parse', 'main~1')).toBe(seeded);
    expect(commit).toBe(await repo.head());
    expect(readdirSync(join(gitdir, 'refs/heads'))).toEqual(['main']);
  });

  it('leaves the same when the process is killed there (SIGKILL, no cleanup)', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const seeded = await seedShop(track(await FlagRepository.open({ gitdir, create: true })));
    const child = spawnSync(
      resolve('node_modules/.bin/vite-node'),
      ['--config', resolve('vitest.config.ts'), resolve('test/storage/fixtures/crash-during-update.ts'), gitdir],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(child.signal).toBe('SIGKILL');
    expect(child.stdout).not.toContain('survived');
    expect(git(gitdir, 'rev-parse', 'main')).toBe(seeded);
    expect(danglingObjects(gitdir)).toMatch(/^dangling commit [0-9a-f]{40}$/);
    // Nothing half-written: no temp object files either.
    for (const dir of readdirSync(join(gitdir, 'objects')).filter((d) => d.length === 2)) {
      expect(readdirSync(join(gitdir, 'objects', dir)).filter((f) => f.startsWith('tmp_obj_'))).toEqual([]);
    }
    expect(readdirSync(join(gitdir, 'objects', 'pack')).filter((f) => f.startsWith('tmp_'))).toEqual([]);
    const next = await track(await FlagRepository.open({ gitdir })).update(enableA);
    expect(next.parent).toBe(seeded);
    // What the killed write left in refs/ is main's next value as a lock file, which git never reads as a ref,
    // and which goes with the other leftover locks when the service starts.
    expect(readdirSync(join(gitdir, 'refs')).filter((name) => name.endsWith('.lock'))).toEqual([
      expect.stringMatching(/^next-[0-9a-f]+\.lock$/),
    ]);
    expect(readdirSync(join(gitdir, 'refs/heads'))).toEqual(['main']);
    expect(git(gitdir, 'for-each-ref', '--format=%(refname)')).toBe('refs/heads/main');
    await removeLeftoverRefLocks(gitdir, 0);
    expect(readdirSync(join(gitdir, 'refs')).filter((name) => name.endsWith('.lock'))).toEqual([]);
  }, 90_000);
});

describe('a lock on main held by someone else', () => {
  it('is waited for, then reported as a write conflict naming no path, without touching main', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true, lockTimeoutMs: 200 }));
    const seeded = await seedShop(repo);
    writeFileSync(join(gitdir, 'refs/heads/main.lock'), '');
    const attempt = repo.update(enableA);
    await expect(attempt).rejects.toBeInstanceOf(WriteConflictError);
    await expect(attempt).rejects.not.toThrow(gitdir);
    await expect(attempt).rejects.not.toThrow('/');
    expect(git(gitdir, 'rev-parse', 'main')).toBe(seeded);
    expect(existsSync(join(gitdir, 'refs/heads/main.lock'))).toBe(true);
  });

  it('is never taken from its holder, however old: git never does, and a slow writer would lose its lock', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true, lockTimeoutMs: 200 }));
    const seeded = await seedShop(repo);
    const lock = join(gitdir, 'refs/heads/main.lock');
    writeFileSync(lock, '');
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(lock, anHourAgo, anHourAgo);
    await expect(repo.update(enableA)).rejects.toBeInstanceOf(WriteConflictError);
    expect(existsSync(lock)).toBe(true);
    expect(git(gitdir, 'rev-parse', 'main')).toBe(seeded);
  });

  it('does not fail a kill (waitForLock): the kill waits until the lock is released, then commits', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true, lockTimeoutMs: 200 }));
    const seeded = await seedShop(repo);
    const lock = join(gitdir, 'refs/heads/main.lock');
    writeFileSync(lock, '');
    const kill = repo.update(
      () => ({
        changes: [
          { path: layout.killsFile('shop', 'prod'), content: 'kills:\n  a:\n    killedAt: 2026-01-01T00:00:00.000Z\n    killedBy: ops\n' },
        ],
        meta: meta('kill', { project: 'shop', flag: 'a', environment: 'prod' }),
        result: undefined,
      }),
      { waitForLock: true },
    );
    let settled = false;
    void kill.finally(() => {
      settled = true;
    });
    // Other writes give up after their bound: one queued behind the waiting kill, one of another instance.
    await expect(repo.update(enableA)).rejects.toThrow(
      new WriteConflictError('another write to this repository holds the lock on main; try again'),
    );
    const other = track(await FlagRepository.open({ gitdir, lockTimeoutMs: 200 }));
    await expect(other.update(enableA)).rejects.toBeInstanceOf(WriteConflictError);
    expect(settled).toBe(false);
    rmSync(lock);
    const { parent, committed } = await kill;
    expect({ parent, committed }).toEqual({ parent: seeded, committed: true });
    expect((await repo.readState()).state.projects.get('shop')!.kills.prod.kills).toHaveProperty('a');
    // The queued update that gave up never ran: main holds the kill only.
    expect(git(gitdir, 'rev-list', '--count', 'main')).toBe('2');
  });
});

describe('a long queue of updates, with no lock held by anyone else', () => {
  it('is waited for past lockTimeoutMs: only a lock held elsewhere makes a write give up', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true, lockTimeoutMs: 20 }));
    await seedShop(repo);
    const slow = (version: number) => async () => {
      await new Promise((resolve) => setTimeout(resolve, 15));
      return {
        changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: version % 2 === 0, version }) }],
        meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
        result: version,
      };
    };
    const results = await Promise.all([2, 3, 4, 5, 6, 7].map((v) => repo.update(slow(v))));
    expect(results.map((r) => r.committed)).toEqual([true, true, true, true, true, true]);
  });
});

describe('ref locks left by a crash (removeLeftoverRefLocks, at the start of the process that owns the repository)', () => {
  it('removes a lock that stays, and names it relative to the repository', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true, lockTimeoutMs: 200 }));
    const seeded = await seedShop(repo);
    writeFileSync(join(gitdir, 'refs/heads/main.lock'), '');
    writeFileSync(join(gitdir, 'packed-refs.lock'), '');
    expect(await removeLeftoverRefLocks(gitdir, 100)).toEqual([{ file: 'packed-refs.lock' }, { file: 'refs/heads/main.lock' }]);
    expect(existsSync(join(gitdir, 'refs/heads/main.lock'))).toBe(false);
    const { parent } = await repo.update(enableA);
    expect(parent).toBe(seeded);
  });

  it('leaves alone a lock its writer releases within the grace period', async () => {
    const gitdir = join(tempDir(), 'r.git');
    track(await FlagRepository.open({ gitdir, create: true }));
    const lock = join(gitdir, 'refs/heads/main.lock');
    writeFileSync(lock, '');
    const removing = removeLeftoverRefLocks(gitdir, 5_000);
    rmSync(lock);
    writeFileSync(lock, 'a new writer');
    expect(await removing).toEqual([]);
    expect(existsSync(lock)).toBe(true);
  });

  it('finds nothing to do in a clean repository', async () => {
    const gitdir = join(tempDir(), 'r.git');
    await seedShop(track(await FlagRepository.open({ gitdir, create: true })));
    expect(await removeLeftoverRefLocks(gitdir)).toEqual([]);
  });
});
