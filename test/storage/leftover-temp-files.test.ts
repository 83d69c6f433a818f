import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEFTOVER_AGE_MS, removeLeftoverTempFiles } from '../../src/foundations/storage/git/leftover-temp-files.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { git, seedShop, tempDir, track } from './helpers.js';

/** What `git count-objects -v` reports as garbage: files in the object store git reads as nothing. */
function garbage(gitdir: string): number {
  return Number(/^garbage: (\d+)$/m.exec(git(gitdir, 'count-objects', '-v'))?.[1]);
}

/** What `git fsck` prints, warnings included. */
function fsckSays(gitdir: string): string {
  const run = spawnSync('git', ['--git-dir', gitdir, 'fsck', '--no-progress', '--no-dangling'], { encoding: 'utf8' });
  return `${run.stdout}${run.stderr}`.trim();
}

describe('temporary object files left by writers that died', () => {
  it('are removed once untouched for an hour; the packs and objects git reads, and files still being written, are kept', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true }));
    const head = await seedShop(repo);
    const packs = join(gitdir, 'objects', 'pack');
    mkdirSync(packs, { recursive: true });
    const readBefore = readdirSync(packs).filter((name) => name.startsWith('pack-'));
    // What a SIGKILL leaves: git pack-objects' and the service's unfinished packs, a git repack's renamed
    // but not yet installed pack, a loose object half written.
    const old = [
      'objects/pack/tmp_pack_Ab12Cd',
      'objects/pack/tmp_idx_Ab12Cd',
      'objects/pack/.tmp-4242-pack-0123abcd.pack',
      'objects/ab/tmp_obj_x1y2',
    ];
    const fresh = ['objects/pack/tmp_pack_Ef34Gh', 'objects/cd/tmp_obj_z3w4'];
    const now = Date.now();
    for (const rel of [...old, ...fresh]) {
      mkdirSync(join(gitdir, rel, '..'), { recursive: true });
      writeFileSync(join(gitdir, rel), 'unfinished');
    }
    const longAgo = new Date(now - LEFTOVER_AGE_MS - 60_000);
    for (const rel of old) utimesSync(join(gitdir, rel), longAgo, longAgo);
    expect(garbage(gitdir)).toBeGreaterThanOrEqual(3);

    expect(removeLeftoverTempFiles(gitdir, now).sort()).toEqual([...old].sort());
    for (const rel of old) expect(existsSync(join(gitdir, rel))).toBe(false);
    for (const rel of fresh) expect(existsSync(join(gitdir, rel))).toBe(true);
    expect(readdirSync(packs).filter((name) => name.startsWith('pack-'))).toEqual(readBefore);
    expect(git(gitdir, 'rev-parse', 'main')).toBe(head);
    git(gitdir, 'fsck', '--full', '--no-progress');

    // An hour later, the ones that were being written are leftovers too; then nothing is garbage.
    expect(removeLeftoverTempFiles(gitdir, now + LEFTOVER_AGE_MS + 60_000).sort()).toEqual([...fresh].sort());
    expect(garbage(gitdir)).toBe(0);
  });

  it('removes half a pack: an index without its pack at once (what a repack killed while removing packs leaves), a pack without its index once old', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true }));
    const head = await seedShop(repo);
    const packs = join(gitdir, 'objects', 'pack');
    mkdirSync(packs, { recursive: true });
    const whole = readdirSync(packs).filter((name) => name.startsWith('pack-'));
    const orphanIdx = `pack-${'1'.repeat(40)}.idx`;
    const oldPack = `pack-${'2'.repeat(40)}.pack`;
    const freshPack = `pack-${'3'.repeat(40)}.pack`;
    for (const name of [orphanIdx, oldPack, freshPack]) writeFileSync(join(packs, name), 'half');
    const now = Date.now();
    const longAgo = new Date(now - LEFTOVER_AGE_MS - 60_000);
    utimesSync(join(packs, oldPack), longAgo, longAgo);
    // git sees each as garbage: a pack it cannot read, an index of nothing.
    expect(garbage(gitdir)).toBe(3);

    expect(removeLeftoverTempFiles(gitdir, now).sort()).toEqual([`objects/pack/${orphanIdx}`, `objects/pack/${oldPack}`].sort());
    expect(
      readdirSync(packs)
        .filter((name) => name.startsWith('pack-'))
        .sort(),
    ).toEqual([...whole, freshPack].sort());
    // The fresh pack is left until an hour has passed: its index may be on its way.
    expect(garbage(gitdir)).toBe(1);
    expect(fsckSays(gitdir)).toBe('');
    expect(git(gitdir, 'rev-parse', 'main')).toBe(head);
  });

  it('finds nothing in a repository not made yet', () => {
    expect(removeLeftoverTempFiles(join(tempDir(), 'none.git'))).toEqual([]);
  });
});
