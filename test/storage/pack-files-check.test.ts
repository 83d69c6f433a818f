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
  }, 120_000);

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

/** Overwrites `bytes.length` bytes of `file` at `at`, in place. */
function overwrite(file: string, at: number, bytes: Buffer): void {
  const damaged = readFileSync(file);
  bytes.copy(damaged, at);
  rmSync(file);
  writeFileSync(file, damaged);
}

describe('a pack file the storage check finds, not one the service wrote', () => {
  it('damaged before the check first saw it (while the service was stopped) is a fault at the first look', async () => {
    const { gitdir, base } = repositoryWithPack(4096);
    // The pack's version, in its header: git can read nothing of it.
    overwrite(`${base}.pack`, 6, Buffer.from([0xff, 0xff, 0xff, 0xff]));
    const check = new PackFilesCheck(gitdir);
    const fault = await check.check();
    expect(fault?.message).toContain(
      `pack file objects/pack/${base.split('/').pop()}.pack is damaged (its checksum does not match its bytes)`,
    );
    // And at every look after, while it stays so.
    expect((await check.check())?.message).toBe(fault?.message);
  });

  it('written by others (a push, a repack) and damaged in its middle is a fault at the first look after', async () => {
    const gitdir = join(tempDir(), 'r.git');
    execFileSync('git', ['init', '--bare', '-q', gitdir]);
    const check = new PackFilesCheck(gitdir);
    expect(await check.check()).toBeUndefined();
    const { base } = addPack(gitdir, 64 * 1024);
    overwrite(`${base}.pack`, 32 * 1024, Buffer.from('an old tree, damaged'));
    expect((await check.check())?.message).toContain(
      `pack file objects/pack/${base.split('/').pop()}.pack is damaged (its checksum does not match its bytes)`,
    );
  });

  it('with a truncated index is a fault at the first look', async () => {
    const { gitdir, base } = repositoryWithPack(4096);
    const idx = readFileSync(`${base}.idx`);
    rmSync(`${base}.idx`);
    writeFileSync(`${base}.idx`, idx.subarray(0, 600));
    const fault = await new PackFilesCheck(gitdir).check();
    expect(fault?.message).toContain(
      `pack file objects/pack/${base.split('/').pop()}.idx is damaged (its checksum does not match its bytes)`,
    );
  });

  it('whole is no fault, at the first look or after', async () => {
    const { gitdir } = repositoryWithPack(512 * 1024);
    const check = new PackFilesCheck(gitdir);
    expect(await check.check()).toBeUndefined();
    addPack(gitdir, 4096);
    expect(await check.check()).toBeUndefined();
    expect(await check.check()).toBeUndefined();
  });

  it('removed by a repack while its first verification reads it is no fault, wherever in the verification it goes', async () => {
    for (let round = 0; round < 20; round++) {
      const { gitdir, base } = repositoryWithPack(512 * 1024);
      const check = new PackFilesCheck(gitdir);
      const checking = check.check();
      await turns(round);
      rmSync(`${base}.pack`);
      rmSync(`${base}.idx`);
      await expect(checking, `removed after ${round} turns`).resolves.toBeUndefined();
    }
  }, 60_000);
});

/** Adds a pack of a new blob of `bytes` random bytes to the repository; its base path. */
function addPack(gitdir: string, bytes: number): { base: string } {
  const oid = git(gitdir, randomBytes(bytes), 'hash-object', '-w', '--stdin');
  const packDir = join(gitdir, 'objects', 'pack');
  const name = git(gitdir, `${oid}\n`, 'pack-objects', '-q', join(packDir, 'pack'));
  git(gitdir, '', 'prune-packed');
  return { base: join(packDir, `pack-${name}`) };
}
