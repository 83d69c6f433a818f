import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { configYaml, git, meta, newFlagFiles, seedShop, tempDir, track } from './helpers.js';

/** A second repository holding what `source` holds up to `commit`, as another control plane's clone would. */
function cloneAt(source: string, commit: string): string {
  const gitdir = join(tempDir(), 'other.git');
  git(tempDir(), 'clone', '--quiet', '--bare', source, gitdir);
  git(gitdir, 'update-ref', 'refs/heads/main', commit);
  // Nothing past `commit` may be left in it: prune what the clone brought of later commits.
  git(gitdir, 'reflog', 'expire', '--expire=now', '--all');
  git(gitdir, 'gc', '--quiet', '--prune=now');
  return gitdir;
}

describe('a commit handed from one clone to another without fetching', () => {
  it('is complete in the other clone once it has taken the objects the commit added to its parent', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true }));
    const parent = await seedShop(repo);
    const other = cloneAt(gitdir, parent);
    const { commit } = await repo.update(() => ({
      changes: [
        { path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: true, rolloutPct: 40, version: 2 }) },
        ...newFlagFiles('shop', 'c'),
      ],
      meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
      result: undefined,
    }));
    expect(() => git(other, 'cat-file', '-e', commit!)).toThrow();

    const added = await repo.objectsAddedBy(commit!, 64 * 1024);
    expect(added?.parent).toBe(parent);
    const taker = track(await FlagRepository.open({ gitdir: other }));
    expect(await taker.writeAddedObjects(added!.framed, commit!, parent)).toBe(true);
    git(other, 'update-ref', 'refs/heads/main', commit!, parent);
    // git itself finds every object of the commit, and the state read from it is the source's.
    expect(git(other, 'fsck', '--full', '--strict', '--no-progress')).toBe('');
    expect(git(other, 'ls-tree', '-r', 'main')).toBe(git(gitdir, 'ls-tree', '-r', 'main'));
    const read = (await taker.readState()).state.projects.get('shop')!;
    expect(read.flags.get('a')!.environments.prod.rolloutPct).toBe(40);
    expect([...read.flags.keys()].sort()).toEqual(['a', 'b', 'c']);
  });

  it('is refused, writing nothing the commit would need, when objects are missing or the parent is not the one named', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true }));
    const parent = await seedShop(repo);
    const other = cloneAt(gitdir, parent);
    const { commit } = await repo.update(() => ({
      changes: newFlagFiles('shop', 'c'),
      meta: meta('flag_create', { project: 'shop', flag: 'c' }),
      result: undefined,
    }));
    const added = (await repo.objectsAddedBy(commit!, 64 * 1024))!;
    const taker = track(await FlagRepository.open({ gitdir: other }));
    // The last object (a blob of the new flag) left out: a tree would name an object the clone lacks.
    const lastHeader = added.framed.lastIndexOf(Buffer.from('blob '));
    expect(await taker.writeAddedObjects(added.framed.subarray(0, lastHeader), commit!, parent)).toBe(false);
    expect(await taker.writeAddedObjects(added.framed, commit!, commit!)).toBe(false);
    expect(await taker.writeAddedObjects(Buffer.from('garbage'), commit!, parent)).toBe(false);
    expect(() => git(other, 'cat-file', '-e', commit!)).toThrow();
    expect(await repo.objectsAddedBy(commit!, 100)).toBeNull();
  });
});
