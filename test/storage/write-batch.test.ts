import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODE_FILE, serializeTree, type TreeEntry } from '../../src/foundations/storage/git/git-objects.js';
import { ObjectNotFoundError, ObjectStore } from '../../src/foundations/storage/git/object-store.js';
import { tempDir } from './helpers.js';

function bareRepository(): string {
  const gitdir = join(tempDir(), 'r.git');
  execFileSync('git', ['init', '-q', '--bare', gitdir]);
  return gitdir;
}

/** A directory of `count` files, as big as the tree cache weighs a quarter of its room. */
function bigTree(count: number, seed: number): Buffer {
  const entries: TreeEntry[] = [];
  for (let i = 0; i < count; i++) {
    entries.push({
      mode: MODE_FILE,
      name: `flag-${String(i).padStart(6, '0')}.yaml`,
      oid: (seed * 1_000_003 + i).toString(16).padStart(40, '0'),
    });
  }
  return serializeTree(entries);
}

describe("a batch's objects", () => {
  it('read back while they are written, however many big trees the commit has; and from their files after', async () => {
    const store = new ObjectStore(bareRepository());
    const batch = store.batch();
    // Five directories of 50,000 files: more than the tree cache keeps, as an import of 50,000 flags writes them.
    const trees = Array.from({ length: 5 }, (_, i) => bigTree(50_000, i + 1));
    const oids = trees.map((tree) => batch.write('tree', tree));
    const blob = batch.write('blob', Buffer.from('enabled: true\n'));
    for (const oid of oids) expect((await store.readTree(oid)).length).toBe(50_000);
    batch.flush();
    // Their files are being written (renamed into place only after the fsync): read from the batch meanwhile.
    expect((await store.read(blob)).content.toString()).toBe('enabled: true\n');
    expect((await store.read(oids[0])).content.equals(trees[0])).toBe(true);
    await batch.done();
    await batch.settled();
    const fresh = new ObjectStore(store.gitdir);
    expect((await fresh.read(oids[4])).content.equals(trees[4])).toBe(true);
    expect((await store.read(oids[1])).content.equals(trees[1])).toBe(true);
  });

  it('that were never written (the change was refused) are not found once the batch is settled', async () => {
    const store = new ObjectStore(bareRepository());
    const batch = store.batch();
    const blob = batch.write('blob', Buffer.from('refused\n'));
    expect((await store.read(blob)).type).toBe('blob');
    await batch.settled();
    await expect(store.read(blob)).rejects.toBeInstanceOf(ObjectNotFoundError);
  });

  it('written by two batches stay readable until both are settled', async () => {
    const store = new ObjectStore(bareRepository());
    const first = store.batch();
    const second = store.batch();
    const oid = first.write('blob', Buffer.from('shared\n'));
    expect(second.write('blob', Buffer.from('shared\n'))).toBe(oid);
    await first.settled();
    expect((await store.read(oid)).content.toString()).toBe('shared\n');
    await second.done();
    await second.settled();
    expect((await new ObjectStore(store.gitdir).read(oid)).content.toString()).toBe('shared\n');
  });
});
