import { describe, expect, it } from 'vitest';
import { compareTreeEntries, parseTree, serializeTree, type TreeEntry } from '../../src/foundations/storage/git/git-objects.js';
import { changedTreeEntries, TreeBytes } from '../../src/foundations/storage/git/tree-bytes.js';

/** A deterministic random source, so a failing case can be run again. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const oid = (random: () => number) => Array.from({ length: 40 }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');

/** Names that sort in all of git's ways (a directory as `name/`, UTF-8 above ASCII), and enough to be spliced (over 16 KB). */
const NAMES = ['a', 'a-b', 'a.b', 'a0', 'b', 'b.yaml', 'é', 'z😀', 'z\uE000', ...Array.from({ length: 600 }, (_, i) => `flag-${i}.yaml`)];

/** What the tree writer does to a directory's entries: the unchanged ones stay the same objects. */
function edit(random: () => number, base: readonly TreeEntry[], count: number): TreeEntry[] {
  const entries = [...base];
  for (let n = 0; n < count; n++) {
    const at = Math.floor(random() * (entries.length + 1));
    const roll = random();
    if (roll < 0.5 && at < entries.length) entries[at] = { ...entries[at], oid: oid(random) };
    else if (roll < 0.7 && at < entries.length) entries.splice(at, 1);
    else {
      const name = NAMES[Math.floor(random() * NAMES.length)];
      if (entries.some((e) => e.name === name)) continue;
      entries.push({ mode: random() < 0.2 ? '40000' : '100644', name, oid: oid(random) });
      entries.sort(compareTreeEntries);
    }
  }
  return entries;
}

function fullDiff(before: readonly TreeEntry[], after: readonly TreeEntry[]): string[] {
  const key = (e?: TreeEntry) => (e ? `${e.mode} ${e.oid}` : '-');
  const old = new Map(before.map((e) => [e.name, e]));
  const now = new Map(after.map((e) => [e.name, e]));
  const out: string[] = [];
  for (const name of new Set([...old.keys(), ...now.keys()]))
    if (key(old.get(name)) !== key(now.get(name))) out.push(`${name}: ${key(old.get(name))} → ${key(now.get(name))}`);
  return out.sort();
}

describe('a tree spliced into the bytes of an earlier version', () => {
  it('is byte for byte what serializing its entries gives, for any mix of replaced, added and removed entries', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const random = rng(seed);
      const base = NAMES.filter(() => random() < 0.8)
        .map((name): TreeEntry => ({ mode: random() < 0.2 ? '40000' : '100644', name, oid: oid(random) }))
        .sort(compareTreeEntries);
      const entries = edit(random, base, 1 + Math.floor(random() * 4));
      const spliced = TreeBytes.of(serializeTree(base), base).splice(entries);
      const expected = serializeTree(entries);
      // Buffer.equals, not toEqual: a byte-by-byte deep comparison would take most of the test time.
      expect(spliced.flat().equals(expected), `seed ${seed}`).toBe(true);
      expect(Buffer.concat(spliced.pieces()).equals(expected), `seed ${seed}`).toBe(true);
      expect(spliced.length, `seed ${seed}`).toBe(expected.length);
    }
  });

  it('compares with any other version of the tree as parsing both whole does, across a long series of changes', () => {
    for (let seed = 1; seed <= 8; seed++) {
      const random = rng(seed);
      let entries = NAMES.map((name): TreeEntry => ({ mode: '100644', name, oid: oid(random) })).sort(compareTreeEntries);
      // Read from disk once, then each version written from the one before, as a series of commits does.
      const versions = [{ entries, bytes: TreeBytes.of(serializeTree(entries), entries) }];
      for (let step = 0; step < 80; step++) {
        entries = edit(random, entries, 1 + Math.floor(random() * 3));
        versions.push({ entries, bytes: versions[versions.length - 1].bytes.splice(entries) });
        const last = versions[versions.length - 1];
        expect(last.bytes.flat().equals(serializeTree(last.entries)), `seed ${seed} step ${step}`).toBe(true);
      }
      for (let pair = 0; pair < 200; pair++) {
        const a = versions[Math.floor(random() * versions.length)];
        const b =
          pair % 4 === 0
            ? versions[versions.indexOf(a) + (versions.indexOf(a) < versions.length - 1 ? 1 : 0)]
            : versions[Math.floor(random() * versions.length)];
        const found = changedTreeEntries(a.bytes, b.bytes).map(
          (c) => `${c.name}: ${c.before ? `${c.before.mode} ${c.before.oid}` : '-'} → ${c.after ? `${c.after.mode} ${c.after.oid}` : '-'}`,
        );
        expect(found.sort(), `seed ${seed} pair ${pair}`).toEqual(fullDiff(parseTree(a.bytes.flat()), parseTree(b.bytes.flat())));
      }
    }
  });

  it('keeps one copy of a 10,000-entry directory while one entry of it changes again and again, as kills do', () => {
    const random = rng(3);
    const base = Array.from(
      { length: 10_000 },
      (_, i): TreeEntry => ({ mode: '100644', name: `flag-${String(i).padStart(5, '0')}.yaml`, oid: oid(random) }),
    );
    base.push({ mode: '100644', name: 'kills.yaml', oid: oid(random) });
    base.sort(compareTreeEntries);
    const root = TreeBytes.of(serializeTree(base), base);
    const rootBuffer = root.flat().buffer;
    let tree = root;
    let entries = base;
    const killsAt = base.findIndex((e) => e.name === 'kills.yaml');
    for (let kill = 0; kill < 100; kill++) {
      const before = tree;
      entries = entries.map((e, i) => (i === killsAt ? { ...e, oid: oid(random) } : e));
      tree = tree.splice(entries);
      // Every piece but the changed entry is a slice of the directory as it was read.
      const copied = tree.pieces().filter((piece) => piece.buffer !== rootBuffer);
      expect(copied.reduce((sum, piece) => sum + piece.length, 0)).toBeLessThan(100);
      expect(changedTreeEntries(before, tree).map((c) => c.name)).toEqual(['kills.yaml']);
    }
    expect(tree.flat().equals(serializeTree(entries))).toBe(true);
  });
});
