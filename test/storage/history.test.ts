import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/foundations/errors/kinds.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { commitHistory, configYaml, type Files, git, meta, newFlagFiles, SIGNING_KEY, seedShop, tempDir, track } from './helpers.js';

/** shop seeded (a, b), then: a's prod config changed; c created and b deleted in one commit. */
async function history() {
  const repo = track(await FlagRepository.open({ gitdir: join(tempDir(), 'org.git'), create: true, signingKey: SIGNING_KEY }));
  const first = await seedShop(repo);
  const second = (
    await repo.update(() => ({
      changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: true, version: 2 }) }],
      meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
      result: undefined,
    }))
  ).commit!;
  const third = (
    await repo.update(() => ({
      changes: [...newFlagFiles('shop', 'c'), ...newFlagFiles('shop', 'b').map((c) => ({ path: c.path, content: null }))],
      meta: meta('change'),
      result: undefined,
    }))
  ).commit!;
  return { repo, first, second, third };
}

describe('history reads for the audit trail', () => {
  it('changedPaths lists what a commit changed against its first parent, with the change type', async () => {
    const { repo, first, second, third } = await history();
    expect(await repo.changedPaths(second)).toEqual([
      { path: 'projects/shop/environments/prod/a.yaml', change: 'modified', oldOid: expect.any(String), newOid: expect.any(String) },
    ]);
    const changes = await repo.changedPaths(third);
    expect(changes.map(({ path, change }) => `${change} ${path}`)).toEqual([
      'deleted projects/shop/environments/dev/b.yaml',
      'added projects/shop/environments/dev/c.yaml',
      'deleted projects/shop/environments/prod/b.yaml',
      'added projects/shop/environments/prod/c.yaml',
      'deleted projects/shop/environments/staging/b.yaml',
      'added projects/shop/environments/staging/c.yaml',
      'deleted projects/shop/flags/b.yaml',
      'added projects/shop/flags/c.yaml',
    ]);
    // The versions changedPaths names can be read, as the audit trail does to describe a push.
    const [modified] = await repo.changedPaths(second);
    expect(await repo.readBlob(modified.newOid!)).toBe(configYaml({ enabled: true, version: 2 }));
    expect(await repo.readBlob(modified.oldOid!)).toBe(configYaml());
    // A root commit: everything is added.
    expect((await repo.changedPaths(first)).every((c) => c.change === 'added')).toBe(true);
    expect(await repo.changedPaths(first)).toHaveLength(9);
    // The same as git's own diff.
    const byGit = git(repo.gitdir, 'diff', '--no-renames', '--name-status', `${third}~1`, third).split('\n');
    const letter = { added: 'A', modified: 'M', deleted: 'D' } as const;
    expect(changes.map((c) => `${letter[c.change]}\t${c.path}`)).toEqual(byGit);
  });

  it('changedPaths agrees with git diff-tree over random histories of a big directory, nested ones, and files turning into directories', async () => {
    let state = 11;
    const next = () => {
      state = (state * 1664525 + 1013904223) >>> 0;
      return state / 2 ** 32;
    };
    const big = 'projects/shop/environments/prod';
    const paths = new Set<string>();
    const initial: Files = {};
    for (let i = 0; i < 600; i++) initial[`${big}/flag-${String(i).padStart(4, '0')}.yaml`] = `version: ${i}\n`;
    for (const path of Object.keys(initial)) paths.add(path);
    const commits: Files[] = [initial];
    const pick = () => [...paths][Math.floor(next() * paths.size)];
    for (let c = 0; c < 60; c++) {
      const files: Files = {};
      const edits = 1 + Math.floor(next() * 4);
      for (let k = 0; k < edits; k++) {
        const what = next();
        const path = pick();
        if (path === undefined || files[path] !== undefined) continue;
        if (what < 0.45) files[path] = `changed in ${c}.${k}\n`;
        else if (what < 0.65) {
          files[path] = null;
          paths.delete(path);
        } else if (what < 0.8) {
          const added = `${next() < 0.5 ? big : `projects/p${c % 3}/flags/sub-${k}`}/new-${c}-${k}.yaml`;
          files[added] = `new ${c}.${k}\n`;
          paths.add(added);
        } else if (what < 0.9 && !path.includes('/was-file/')) {
          // The file becomes a directory of the same name (fast-import replaces it).
          const inside = `${path}/was-file/x.yaml`;
          files[inside] = `inside ${c}\n`;
          paths.delete(path);
          paths.add(inside);
        } else {
          // A whole directory goes.
          const dir = path.slice(0, path.lastIndexOf('/'));
          if (dir === big) continue;
          for (const p of [...paths]) if (p.startsWith(`${dir}/`)) paths.delete(p);
          files[dir] = null;
        }
      }
      commits.push(files);
    }
    const { gitdir, oids } = await commitHistory(commits);
    const repo = track(await FlagRepository.open({ gitdir }));
    const letter = { added: 'A', modified: 'M', deleted: 'D' } as const;
    for (const [i, oid] of oids.entries()) {
      const byGit = git(gitdir, 'diff-tree', '-r', '--root', '--no-renames', '--no-commit-id', '--name-status', '-z', oid)
        .split('\0')
        .filter(Boolean);
      const expected: string[] = [];
      for (let j = 0; j < byGit.length; j += 2) expected.push(`${byGit[j]} ${byGit[j + 1]}`);
      const found = (await repo.changedPaths(oid)).map((c) => `${letter[c.change]} ${c.path}`);
      expect(found.sort(), `commit ${i}`).toEqual(expected.sort());
    }
  });

  it('firstParentLog walks newest first, stops before `until` and after `limit`', async () => {
    const { repo, first, second, third } = await history();
    expect((await repo.firstParentLog({ from: third })).map((c) => c.oid)).toEqual([third, second, first]);
    expect((await repo.firstParentLog({ from: third, until: first })).map((c) => c.oid)).toEqual([third, second]);
    expect((await repo.firstParentLog({ from: third, limit: 1 })).map((c) => c.oid)).toEqual([third]);
    expect(await repo.firstParentLog({ from: null })).toEqual([]);
    const [newest] = await repo.firstParentLog({ from: second, limit: 1 });
    expect(newest.flagops).toMatchObject({ action: 'config_update', project: 'shop', flag: 'a', environment: 'prod' });
  });

  it('height counts the first-parent chain, a merge pushed from outside included', async () => {
    const { repo, first, third } = await history();
    expect(await repo.height(first)).toBe(1);
    expect(await repo.height(third)).toBe(3);
    const checkout = join(tempDir(), 'clone');
    git(tempDir(), 'clone', '--quiet', repo.gitdir, checkout);
    git(checkout, 'checkout', '--quiet', '-b', 'topic');
    writeFileSync(join(checkout, 'README.md'), 'topic\n');
    git(checkout, 'add', '-A');
    git(checkout, 'commit', '--quiet', '-m', 'on topic');
    git(checkout, 'checkout', '--quiet', 'main');
    git(checkout, 'merge', '--quiet', '--no-ff', '-m', 'merge topic', 'topic');
    git(checkout, 'push', '--quiet', 'origin', 'main');
    const merge = git(repo.gitdir, 'rev-parse', 'main');
    expect(await repo.height(merge)).toBe(Number(git(repo.gitdir, 'rev-list', '--first-parent', '--count', 'main')));
    expect(await repo.height(merge)).toBe(4);
    expect((await repo.readCommit(merge)).parents).toHaveLength(2);
  });

  it('treeOid gives the tree or blob at a path, as git rev-parse <commit>:<path> does', async () => {
    const { repo, second } = await history();
    for (const path of ['projects/shop/environments/prod', 'projects/shop/environments/prod/a.yaml', 'projects']) {
      expect(await repo.treeOid(second, path)).toBe(git(repo.gitdir, 'rev-parse', `${second}:${path}`));
    }
    expect(await repo.treeOid(second, '')).toBe(git(repo.gitdir, 'rev-parse', `${second}^{tree}`));
    expect(await repo.treeOid(second, 'projects/nope')).toBeNull();
    expect(await repo.treeOid(second, 'projects/shop/project.yaml/x')).toBeNull();
  });

  it('resolveRevision understands what git rev-parse does: branch, HEAD~n, ^, full and short ids, tags', async () => {
    const { repo, first, second, third } = await history();
    const checkout = join(tempDir(), 'clone');
    git(tempDir(), 'clone', '--quiet', repo.gitdir, checkout);
    git(checkout, 'tag', 'light', second);
    git(checkout, 'tag', '-a', 'v1', '-m', 'release 1', first);
    git(checkout, 'push', '--quiet', 'origin', '--tags');
    const cases: Array<[string, string]> = [
      ['main', third],
      ['HEAD', third],
      ['refs/heads/main', third],
      ['HEAD~2', first],
      ['main^', second],
      ['main~1^', first],
      [third, third],
      [third.slice(0, 7), third],
      ['light', second],
      ['v1', first],
      ['tags/v1~0', first],
    ];
    for (const [rev, expected] of cases) {
      expect(await repo.resolveRevision(rev), rev).toBe(expected);
      expect(git(repo.gitdir, 'rev-parse', `${rev}^{commit}`), rev).toBe(expected);
    }
    for (const rev of ['nope', 'HEAD~9', 'main^2', 'deadbeef', '0'.repeat(40)]) {
      await expect(repo.resolveRevision(rev), rev).rejects.toBeInstanceOf(NotFoundError);
    }
  });
});
