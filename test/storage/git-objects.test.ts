import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareTreeEntries, hashObject, parseTree, serializeTree, type TreeEntry } from '../../src/foundations/storage/git/git-objects.js';
import { gitWith, tempDir } from './helpers.js';

describe('tree objects', () => {
  it('are written in git’s order (directories sort as name/), so git mktree gives the same id', () => {
    const gitdir = join(tempDir(), 'o.git');
    gitWith(tempDir(), {}, 'init', '--quiet', '--bare', gitdir);
    const blob = gitWith(gitdir, { input: 'x\n' }, 'hash-object', '-w', '--stdin');
    const tree = gitWith(gitdir, { input: '' }, 'mktree');
    // `b-c` < `b.yaml` < `b/` (the directory b) < `b0` in bytes; é and astral characters sort by UTF-8.
    const files = ['a', 'a-b', 'a0', 'b-c', 'b.yaml', 'b0', 'B', 'é', 'z😀', 'z\uE000'];
    const dirs = ['a.b', 'b', 'ab'];
    const names: Array<[string, boolean]> = [
      ...files.map((n): [string, boolean] => [n, false]),
      ...dirs.map((n): [string, boolean] => [n, true]),
    ];
    const entries: TreeEntry[] = names.map(([name, dir]) => ({ mode: dir ? '40000' : '100644', name, oid: dir ? tree : blob }));
    const sorted = [...entries].sort(compareTreeEntries);
    const input = entries.map((e) => `${e.mode === '40000' ? '040000 tree' : '100644 blob'} ${e.oid}\t${e.name}`).join('\n') + '\n';
    const byGit = gitWith(gitdir, { input }, 'mktree');
    expect(hashObject('tree', serializeTree(sorted))).toBe(byGit);
    expect(parseTree(serializeTree(sorted))).toEqual(sorted);
  });
});
