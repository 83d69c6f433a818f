import { describe, expect, it } from 'vitest';
import { compareTreeEntries, serializeTree, type TreeEntry } from '../../src/foundations/storage/git/git-objects.js';
import { spliceTree } from '../../src/foundations/storage/git/tree-writer.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const oid = (random: () => number) => Array.from({ length: 40 }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');

describe('a changed tree spliced into its base’s bytes', () => {
  it('is byte for byte what serializing its entries gives, for any mix of replaced, added and removed entries', () => {
    const names = [
      'a',
      'a-b',
      'a.b',
      'a0',
      'b',
      'b.yaml',
      'é',
      'z😀',
      'z\uE000',
      ...Array.from({ length: 30 }, (_, i) => `flag-${i}.yaml`),
    ];
    for (let seed = 1; seed <= 200; seed++) {
      const random = rng(seed);
      const entry = (name: string): TreeEntry => ({ mode: random() < 0.2 ? '40000' : '100644', name, oid: oid(random) });
      const base = names
        .filter(() => random() < 0.6)
        .map(entry)
        .sort(compareTreeEntries);
      const entries = [...base];
      for (let edits = Math.floor(random() * 4); edits >= 0; edits--) {
        const at = Math.floor(random() * (entries.length + 1));
        const roll = random();
        if (roll < 0.4 && at < entries.length) entries[at] = { ...entries[at], oid: oid(random) };
        else if (roll < 0.7 && at < entries.length) entries.splice(at, 1);
        else {
          const added = entry(names[Math.floor(random() * names.length)]);
          if (!entries.some((e) => e.name === added.name)) {
            entries.push(added);
            entries.sort(compareTreeEntries);
          }
        }
      }
      // Buffer.equals, not toEqual: a byte-by-byte deep comparison would take most of the test time.
      expect(spliceTree(base, serializeTree(base), entries).equals(serializeTree(entries)), `seed ${seed}`).toBe(true);
    }
  });
});
