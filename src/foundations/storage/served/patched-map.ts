const REMOVED = Symbol('removed');

/**
 * A read-only map made from another by replacing and removing a few keys, without copying it: a commit that
 * changes one file of a 10,000-file directory makes the directory's new file map in the time of that change
 * (copying a 10,000-entry Map took milliseconds). Keys keep the base's order, so nothing can be added.
 * Patches of patches share one base and merge their changes; once the changes grow past a sixteenth of the base
 * (and 64), the map is copied, which keeps reads to two lookups and the copies rare.
 */
export class PatchedMap<K, V> implements ReadonlyMap<K, V> {
  readonly size: number;

  private constructor(
    private readonly base: ReadonlyMap<K, V>,
    private readonly changes: ReadonlyMap<K, V | typeof REMOVED>,
    size: number,
  ) {
    this.size = size;
  }

  /** `base` with `replaced` set (each key must be in `base`) and `removed` deleted. */
  static of<K, V>(base: ReadonlyMap<K, V>, replaced: ReadonlyMap<K, V>, removed: Iterable<K>): ReadonlyMap<K, V> {
    const root = base instanceof PatchedMap ? (base.base as ReadonlyMap<K, V>) : base;
    const changes = new Map<K, V | typeof REMOVED>(base instanceof PatchedMap ? base.changes : []);
    let size = base.size;
    for (const key of removed) {
      if (!base.has(key)) continue;
      changes.set(key, REMOVED);
      size--;
    }
    for (const [key, value] of replaced) {
      if (!base.has(key)) throw new Error('a patched map cannot add keys');
      changes.set(key, value);
    }
    if (changes.size > 64 && changes.size * 16 > root.size) return new Map(new PatchedMap(root, changes, size));
    return new PatchedMap(root, changes, size);
  }

  get(key: K): V | undefined {
    const changed = this.changes.get(key);
    if (changed === undefined) return this.base.get(key);
    return changed === REMOVED ? undefined : changed;
  }

  has(key: K): boolean {
    const changed = this.changes.get(key);
    return changed === undefined ? this.base.has(key) : changed !== REMOVED;
  }

  *entries(): MapIterator<[K, V]> {
    for (const [key, value] of this.base) {
      const changed = this.changes.get(key);
      if (changed === undefined) yield [key, value];
      else if (changed !== REMOVED) yield [key, changed];
    }
  }

  *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) fn.call(thisArg, value, key, this);
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }
}
