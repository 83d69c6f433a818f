import { describe, expect, it } from 'vitest';
import { PatchedMap } from '../../src/foundations/storage/served/patched-map.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('PatchedMap', () => {
  it('reads as the map it stands for, in the base order, through many patches of patches', () => {
    const random = rng(3);
    const base = new Map(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
    // The model: a real Map patched in place (a replaced key keeps its place, as in a tree).
    const model = new Map(base);
    let map: ReadonlyMap<string, number> = base;
    for (let step = 0; step < 200; step++) {
      const keys = [...model.keys()];
      const replaced = new Map<string, number>();
      const removed: string[] = [];
      for (let i = 1 + Math.floor(random() * 3); i > 0; i--) {
        const key = keys[Math.floor(random() * keys.length)];
        if (random() < 0.3) removed.push(key);
        else replaced.set(key, 10_000 + step * 10 + i);
      }
      for (const key of removed) replaced.delete(key);
      const before = [...map];
      const next = PatchedMap.of(map, replaced, removed);
      // The map patched is left as it was.
      expect([...map]).toEqual(before);
      for (const [key, value] of replaced) model.set(key, value);
      for (const key of removed) model.delete(key);
      map = next;
      expect(map.size, `step ${step}`).toBe(model.size);
      expect([...map], `step ${step}`).toEqual([...model]);
      expect([...map.keys()]).toEqual([...model.keys()]);
      expect([...map.values()]).toEqual([...model.values()]);
      for (const key of removed) {
        expect(map.has(key)).toBe(false);
        expect(map.get(key)).toBeUndefined();
      }
      for (const [key, value] of replaced) expect(map.get(key)).toBe(value);
      expect(map.get('k-none')).toBeUndefined();
    }
  });

  it('refuses to add a key, which would break the base order', () => {
    expect(() => PatchedMap.of(new Map([['a', 1]]), new Map([['b', 2]]), [])).toThrow('cannot add');
  });
});
