import { execFileSync } from 'node:child_process';
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PackReader } from '../../src/foundations/storage/git/pack-reader.js';
import { tempDir } from './helpers.js';

const git = (gitdir: string, input: string, ...args: string[]) =>
  execFileSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8', input }).trim();

describe('packs removed by a repack between listing and opening them', () => {
  it('are passed over, and the object is read from the pack that holds it now', () => {
    const gitdir = join(tempDir(), 'r.git');
    execFileSync('git', ['init', '--bare', '-q', gitdir]);
    const oid = git(gitdir, 'flag: on\n', 'hash-object', '-w', '--stdin');
    const packDir = join(gitdir, 'objects', 'pack');
    git(gitdir, `${oid}\n`, 'pack-objects', '-q', join(packDir, 'pack'));
    git(gitdir, '', 'prune-packed');
    const [idx] = readdirSync(packDir).filter((name) => name.endsWith('.idx'));
    // An index whose pack is gone: what the directory shows a reader while `git repack -d` removes the packs it
    // combined (the index and the pack are two files, removed one after the other).
    copyFileSync(join(packDir, idx), join(packDir, `pack-${'0'.repeat(40)}.idx`));
    const reader = new PackReader(packDir);
    try {
      expect(reader.read(oid)).toMatchObject({ type: 'blob' });
      expect(reader.read(oid)?.content.toString()).toBe('flag: on\n');
    } finally {
      reader.close();
    }
  });
});
