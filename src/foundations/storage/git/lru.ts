/**
 * A Map bounded by total weight (by default, one per entry) that forgets the least recently used entries
 * first. Weigh big values by their size: a 10,000-entry tree must count for more than a 3-entry one.
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();
  private weight = 0;

  constructor(
    private readonly capacity: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      // Re-inserting moves the key to the young end of Map's insertion order.
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  /** Looks without counting as a use. */
  peek(key: K): V | undefined {
    return this.map.get(key);
  }

  delete(key: K): void {
    const value = this.map.get(key);
    if (value === undefined) return;
    this.map.delete(key);
    this.weight -= this.weigh(value);
  }

  set(key: K, value: V): void {
    this.delete(key);
    this.map.set(key, value);
    this.weight += this.weigh(value);
    for (const [oldest, old] of this.map) {
      if (this.weight <= this.capacity || oldest === key) break;
      this.map.delete(oldest);
      this.weight -= this.weigh(old);
    }
  }
}
