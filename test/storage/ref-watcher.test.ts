import { linkSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RefWatcher, watchMainRef } from '../../src/foundations/storage/git/ref-watcher.js';
import { FlagRepository, type MainMoved } from '../../src/foundations/storage/index.js';
import { git, tempDir, track, waitFor } from './helpers.js';

const OID_A = 'a'.repeat(40);
const OID_B = 'b'.repeat(40);

/** A bare-repository layout with main at OID_A, and a watcher counting its calls (events only: no periodic look). */
async function watched(checkEveryMs = 3_600_000) {
  const gitdir = tempDir();
  mkdirSync(join(gitdir, 'refs', 'heads'), { recursive: true });
  writeFileSync(join(gitdir, 'refs', 'heads', 'main'), `${OID_A}\n`);
  let calls = 0;
  const errors: unknown[] = [];
  const watcher = await watchMainRef(gitdir, () => calls++, { debounceMs: 5, checkEveryMs, onError: (err) => errors.push(err) });
  closeAfter.push(watcher);
  return { gitdir, calls: () => calls, errors };
}

const closeAfter: RefWatcher[] = [];
afterEach(() => closeAll());

/** As git moves a ref: the new value in `<file>.lock`, renamed over the file. */
function renameOver(file: string, value: string) {
  writeFileSync(`${file}.lock`, value);
  renameSync(`${file}.lock`, file);
}

const calledAtLeast = (count: () => number, n: number) => waitFor(() => (count() >= n ? true : undefined));

describe('watchMainRef', () => {
  it('reports main renamed over (as git push moves it)', async () => {
    const w = await watched();
    renameOver(join(w.gitdir, 'refs', 'heads', 'main'), `${OID_B}\n`);
    await calledAtLeast(w.calls, 1);
  });

  it('reports packed-refs renamed over (as git pack-refs rewrites it)', async () => {
    const w = await watched();
    renameOver(join(w.gitdir, 'packed-refs'), `${OID_B} refs/heads/main\n`);
    await calledAtLeast(w.calls, 1);
  });

  it('keeps reporting moves of main after refs/heads was removed and created again', async () => {
    const w = await watched();
    const heads = join(w.gitdir, 'refs', 'heads');
    rmSync(heads, { recursive: true });
    await calledAtLeast(w.calls, 1);
    const removed = w.calls();
    mkdirSync(heads);
    await calledAtLeast(w.calls, removed + 1);
    const recreated = w.calls();
    // The new directory is watched: a move of main in it is reported, not only the directory's creation.
    renameOver(join(heads, 'main'), `${OID_B}\n`);
    await calledAtLeast(w.calls, recreated + 1);
    expect(w.errors).toEqual([]);
  });

  it('keeps reporting after refs itself was removed and created again', async () => {
    const w = await watched();
    rmSync(join(w.gitdir, 'refs'), { recursive: true });
    await calledAtLeast(w.calls, 1);
    mkdirSync(join(w.gitdir, 'refs', 'heads'), { recursive: true });
    // Let the recreation's own events settle, then move main in the new directories.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = w.calls();
    renameOver(join(w.gitdir, 'refs', 'heads', 'main'), `${OID_B}\n`);
    await calledAtLeast(w.calls, before + 1);
  });

  it('finds a change no event reports by looking at the ref files now and then', async () => {
    const w = await watched(20);
    // Written through another link to the same file, outside the watched directories: inotify reports the
    // write only to watchers of the directory it went through, as a lost event would go unreported.
    const elsewhere = join(tempDir(), 'main-link');
    linkSync(join(w.gitdir, 'refs', 'heads', 'main'), elsewhere);
    writeFileSync(elsewhere, `${OID_B}\n`);
    await calledAtLeast(w.calls, 1);
  });

  it('stops calling once closed', async () => {
    const w = await watched(10);
    await closeAll();
    renameOver(join(w.gitdir, 'refs', 'heads', 'main'), `${OID_B}\n`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(w.calls()).toBe(0);
  });
});

describe('FlagRepository.watch', () => {
  it('announces a move of main made after refs/heads was pruned and recreated by git', async () => {
    const gitdir = join(tempDir(), 'org.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true, watchDebounceMs: 10 }));
    const checkout = tempDir();
    git(checkout, 'init', '-q', '-b', 'main');
    writeFileSync(join(checkout, 'README'), 'one\n');
    git(checkout, 'add', '.');
    git(checkout, 'commit', '-q', '-m', 'one');
    git(checkout, 'push', '-q', gitdir, 'main');
    await repo.watch();
    const events: MainMoved[] = [];
    repo.onMainMoved((e) => events.push(e));
    // main only in packed-refs, and no refs/heads directory at all; then a push writes a loose main again.
    git(gitdir, 'pack-refs', '--all', '--prune');
    rmSync(join(gitdir, 'refs', 'heads'), { recursive: true, force: true });
    writeFileSync(join(checkout, 'README'), 'two\n');
    git(checkout, 'commit', '-q', '-am', 'two');
    git(checkout, 'push', '-q', gitdir, 'main');
    const pushed = git(checkout, 'rev-parse', 'HEAD');
    await waitFor(() => (events.at(-1)?.to === pushed ? true : undefined));
    expect(events.at(-1)?.origin).toBe('external');
  });
});

async function closeAll() {
  await Promise.all(closeAfter.splice(0).map((w) => w.close()));
}
