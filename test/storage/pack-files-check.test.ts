import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PackFilesCheck } from '../../src/foundations/storage/git/pack-files-check.js';
import { tempDir } from './helpers.js';

const git = (gitdir: string, input: string | Buffer, ...args: string[]) =>
  execFileSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8', input }).trim();

/** A bare repository holding one pack of a blob of `bytes` random bytes; its pack's base path. */
function repositoryWithPack(bytes: number): { gitdir: string; base: string } {
  const gitdir = join(tempDir(), 'r.git');
  execFileSync('git', ['init', '--bare', '-q', gitdir]);
  const oid = git(gitdir, randomBytes(bytes), 'hash-object', '-w', '--stdin');
  const packDir = join(gitdir, 'objects', 'pack');
  git(gitdir, `${oid}\n`, 'pack-objects', '-q', join(packDir, 'pack'));
  git(gitdir, '', 'prune-packed');
  const [idx] = readdirSync(packDir).filter((name) => name.endsWith('.idx'));
  return { gitdir, base: join(packDir, idx.slice(0, -4)) };
}

/** Resolves after `n` turns of the event loop, each letting file reads on the thread pool finish. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('the storage check while a repack removes the pack it is verifying', () => {
  it('finds no fault and does not fail, wherever in the verification the files go', async () => {
    const { gitdir, base } = repositoryWithPack(512 * 1024);
    const pack = readFileSync(`${base}.pack`);
    const idx = readFileSync(`${base}.idx`);
    // Each round removes a touched pack's files after a different number of loop turns into its verification:
    // before its files are opened, while the pack is hashed, between the pack and its index, after both.
    for (let round = 0; round < 60; round++) {
      writeFileSync(`${base}.pack`, pack);
      writeFileSync(`${base}.idx`, idx);
      const check = new PackFilesCheck(gitdir);
      // Touched (as git freshens a pack it keeps): the check verifies its bytes.
      const later = new Date(Date.now() + 60_000);
      utimesSync(`${base}.pack`, later, later);
      const checking = check.check();
      await turns(round);
      rmSync(`${base}.pack`);
      rmSync(`${base}.idx`);
      await expect(checking, `removed after ${round} turns`).resolves.toBeUndefined();
    }
  });

  it('still finds a touched pack damaged while nothing removes it', async () => {
    const { gitdir, base } = repositoryWithPack(4096);
    const check = new PackFilesCheck(gitdir);
    const bytes = readFileSync(`${base}.pack`);
    bytes[bytes.length - 100] ^= 0xff;
    rmSync(`${base}.pack`);
    writeFileSync(`${base}.pack`, bytes);
    const fault = await check.check();
    expect(fault?.message).toContain(
      `pack file objects/pack/${base.split('/').pop()}.pack is damaged (its checksum does not match its bytes)`,
    );
  });
});
