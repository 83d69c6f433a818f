import { describe, expect, it } from 'vitest';
import { Lru } from '../../src/foundations/storage/git/lru.js';

describe('the caches behind readState (Lru)', () => {
  it('forget the least recently used entries once their total weight exceeds the capacity', () => {
    const cache = new Lru<string, number[]>(10, (value) => value.length);
    cache.set('a', [1, 2, 3, 4]);
    cache.set('b', [1, 2, 3, 4]);
    expect(cache.get('a')).toEqual([1, 2, 3, 4]);
    cache.set('c', [1, 2, 3, 4]);
    // b was used least recently: it goes, a (just read) stays.
    expect(cache.peek('b')).toBeUndefined();
    expect(cache.peek('a')).toBeDefined();
    expect(cache.peek('c')).toBeDefined();
  });

  it('keep an entry heavier than the whole capacity until the next one arrives', () => {
    const cache = new Lru<string, number[]>(2, (value) => value.length);
    cache.set('big', [1, 2, 3]);
    expect(cache.peek('big')).toBeDefined();
    cache.set('small', [1]);
    expect(cache.peek('big')).toBeUndefined();
    expect(cache.size).toBe(1);
  });
});
