import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { frameObject, hashFramed, type ObjectType } from '../../src/foundations/storage/git/git-objects.js';
import { buildPack, storedZlib } from '../../src/foundations/storage/git/pack-writer.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { configYaml, git, meta, newFlagFiles, seedShop, tempDir, track } from './helpers.js';

const packDir = (gitdir: string) => join(gitdir, 'objects', 'pack');
const packNames = (gitdir: string) =>
  readdirSync(packDir(gitdir))
    .filter((name) => name.endsWith('.pack'))
    .map((name) => name.slice(0, -5));
const looseObjects = (gitdir: string) => Number(/^count: (\d+)$/m.exec(git(gitdir, 'count-objects', '-v'))![1]);

/** What `git index-pack` makes of a copy of the pack: the index git itself would have written for it. */
function indexByGit(gitdir: string, name: string): Buffer {
  const copy = join(tempDir(), 'copy.pack');
  copyFileSync(join(packDir(gitdir), `${name}.pack`), copy);
  execFileSync('git', ['index-pack', copy], { stdio: 'pipe' });
  return readFileSync(copy.replace(/\.pack$/, '.idx'));
}

const enable = (flag: string, version: number) => () => ({
  changes: [{ path: layout.configFile('shop', 'prod', flag), content: configYaml({ enabled: true, version }) }],
  meta: meta('config_update', { project: 'shop', flag, environment: 'prod' }),
  result: undefined,
});

describe("a commit's objects, written as one pack", () => {
  it('are two files (pack and index) that git reads, checks and indexes exactly as we did', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true }));
    await seedShop(repo);
    const before = new Set(packNames(gitdir));
    const loose = looseObjects(gitdir);
    const { commit } = await repo.update(enable('a', 2));

    const added = packNames(gitdir).filter((name) => !before.has(name));
    expect(added).toHaveLength(1);
    expect(looseObjects(gitdir)).toBe(loose);
    const [name] = added;
    // The commit, its root tree, the trees down to the environment, and the new file.
    const listed = execFileSync('git', ['show-index'], { input: readFileSync(join(packDir(gitdir), `${name}.idx`)), encoding: 'utf8' });
    expect(listed).toContain(commit);
    expect(listed).toContain(git(gitdir, 'rev-parse', 'main:projects/shop/environments/prod'));
    expect(readFileSync(join(packDir(gitdir), `${name}.idx`)).equals(indexByGit(gitdir, name))).toBe(true);
    expect(git(gitdir, 'verify-pack', join(packDir(gitdir), `${name}.idx`))).toBe('');
    expect(git(gitdir, 'fsck', '--full', '--strict')).toBe('');
    expect(git(gitdir, 'rev-parse', 'main')).toBe(commit);
    expect(git(gitdir, 'cat-file', '-p', `main:${layout.configFile('shop', 'prod', 'a')}`)).toBe(
      configYaml({ enabled: true, version: 2 }).trimEnd(),
    );
    // And a clone sees the same history.
    const clone = tempDir();
    git(clone, 'clone', '-q', gitdir, 'c');
    expect(git(join(clone, 'c'), 'log', '--format=%H', '-1')).toBe(commit);
  });

  it('are found by another instance of the repository that opened it before the pack existed', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const reader = track(await FlagRepository.open({ gitdir, create: true }));
    await seedShop(reader);
    await reader.readState();
    const writer = track(await FlagRepository.open({ gitdir }));
    const { commit } = await writer.update(enable('b', 3));
    const { state } = await reader.readState(commit);
    expect(state.projects.get('shop')!.flags.get('b')!.environments.prod).toMatchObject({ enabled: true, version: 3 });
  });

  it('leave objects already in the repository out: a change undone writes its commit alone', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true }));
    await seedShop(repo);
    await repo.update(enable('a', 2));
    const before = new Set(packNames(gitdir));
    const loose = looseObjects(gitdir);
    // Back to the seed's content for a: its blob and the environment's tree exist already, the commit does not.
    await repo.update(() => ({
      changes: [
        {
          path: layout.configFile('shop', 'prod', 'a'),
          content: git(gitdir, 'cat-file', '-p', `main~1:${layout.configFile('shop', 'prod', 'a')}`) + '\n',
        },
      ],
      meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
      result: undefined,
    }));
    const tree = git(gitdir, 'rev-parse', 'main:projects/shop/environments/prod');
    expect(tree).toBe(git(gitdir, 'rev-parse', 'main~2:projects/shop/environments/prod'));
    // Only the commit is new, and one object is written loose: no pack at all.
    expect(packNames(gitdir).filter((n) => !before.has(n))).toEqual([]);
    expect(looseObjects(gitdir)).toBe(loose + 1);
    const commit = git(gitdir, 'rev-parse', 'main');
    expect(git(gitdir, 'cat-file', '-t', commit)).toBe('commit');
    expect(git(gitdir, 'fsck', '--full', '--strict')).toBe('');
  });
});

describe('the packs commits leave', () => {
  it('hold no file open: a repository of many small packs costs no descriptors', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true }));
    await seedShop(repo);
    for (let version = 2; version < 12; version++) await repo.update(enable('a', version));
    expect(packNames(gitdir).length).toBeGreaterThanOrEqual(10);
    const { state } = await track(await FlagRepository.open({ gitdir })).readState();
    expect(state.projects.get('shop')!.flags.get('a')!.environments.prod.version).toBe(11);
    const packsOpen = readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).startsWith(packDir(gitdir));
      } catch {
        return false; // closed meanwhile
      }
    });
    expect(packsOpen).toEqual([]);
  });
});

describe('buildPack', () => {
  it('writes packs git reads, big objects stored and small ones deflated, with the index git would write', () => {
    const gitdir = tempDir();
    git(gitdir, 'init', '-q', '--bare', '.');
    const objects: Array<{ oid: string; type: ObjectType; content: Buffer }> = [];
    const add = (type: ObjectType, content: Buffer) => {
      objects.push({ oid: hashFramed(frameObject(type, content)), type, content });
    };
    add('blob', Buffer.alloc(0));
    add('blob', Buffer.from('enabled: true\n'));
    add('blob', randomBytes(200_000)); // over 64 KiB: stored
    for (let i = 0; i < 300; i++) add('blob', Buffer.from(`flag ${i}\n`)); // ids in every fan-out bucket
    const { checksum, pack, idx } = buildPack(objects);
    const name = `pack-${checksum}`;
    execFileSync('mkdir', ['-p', packDir(gitdir)]);
    writeFileSync(join(packDir(gitdir), `${name}.pack`), pack);
    writeFileSync(join(packDir(gitdir), `${name}.idx`), idx);
    expect(idx.equals(indexByGit(gitdir, name))).toBe(true);
    expect(git(gitdir, 'verify-pack', join(packDir(gitdir), `${name}.idx`))).toBe('');
    for (const object of objects.slice(0, 3)) {
      const shown = execFileSync('git', ['cat-file', object.type, object.oid], { cwd: gitdir });
      expect(shown.equals(object.content)).toBe(true);
    }
  });
});

describe('big objects, written loose', () => {
  it('are read and checked by git: a directory of 4,000 flags, then one file in it changed', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true }));
    await seedShop(repo);
    const keys = Array.from({ length: 4000 }, (_, i) => `flag-${String(i).padStart(4, '0')}`);
    await repo.update(() => ({
      changes: keys.flatMap((key) => newFlagFiles('shop', key)),
      meta: meta('import', { project: 'shop' }),
      result: undefined,
    }));
    const { commit } = await repo.update(enable('flag-1500', 7));
    const dir = git(gitdir, 'rev-parse', `${commit}:projects/shop/environments/prod`);
    expect(Number(git(gitdir, 'cat-file', '-s', dir))).toBeGreaterThan(2 * 0xffff); // several stored blocks
    expect(git(gitdir, 'fsck', '--full', '--strict')).toBe('');
    expect(git(gitdir, 'ls-tree', '--name-only', dir).split('\n')).toHaveLength(4002);
    expect(git(gitdir, 'cat-file', '-p', `${commit}:${layout.configFile('shop', 'prod', 'flag-1500')}`)).toBe(
      configYaml({ enabled: true, version: 7 }).trimEnd(),
    );
  });
});

describe('stored zlib, written from pieces', () => {
  it('inflates to the pieces joined, at and around the stored-block size, however the pieces are cut', () => {
    for (const size of [0, 1, 0xfffe, 0xffff, 0x10000, 3 * 0xffff + 7, 400_000]) {
      const data = randomBytes(size);
      // Cut into pieces of every kind: empty, one byte, across block boundaries.
      const cuts = [0, 0, Math.min(1, size), Math.floor(size / 3), Math.floor(size / 2), size].sort((a, b) => a - b);
      const pieces = cuts.slice(1).map((end, i) => data.subarray(cuts[i], end));
      const stored = Buffer.concat(storedZlib(pieces));
      expect(inflateSync(stored).equals(data), `${size} bytes`).toBe(true);
      expect(stored.length, `${size} bytes`).toBe(2 + 5 * Math.max(1, Math.ceil(size / 0xffff)) + size + 4);
    }
  });
});
