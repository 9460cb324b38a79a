interface Kept<V> {
  value: V;
  /** The operation count when the entry was last moved to the recent end of the map. */
  movedAt: number;
}

/**
 * A small least-recently-used map: a Map keeps insertion order, so the first key is the oldest,
 * and at most `capacity` entries are kept.
 *
 * A hit moves its entry to the recent end (a delete and a set) only when the entry has not moved
 * within the last half capacity of operations. Moving on every hit made every read two hash-table
 * writes and a table that kept filling with deleted slots and being rebuilt: a quote answered from
 * memory reads two of these per request (the store's set, the checkout's last quote), and that
 * cost more than a microsecond of each (bench, BENCH_PROFILE=1). The order stays close enough:
 * an entry used within the last half capacity of operations is never the one dropped.
 */
export class Lru<K, V> {
  readonly #map = new Map<K, Kept<V>>();
  readonly #stale: number;
  #ops = 0;

  constructor(readonly capacity: number) {
    this.#stale = Math.max(1, Math.floor(capacity / 2));
  }

  get(key: K): V | undefined {
    const kept = this.#map.get(key);
    if (kept === undefined) return undefined;
    const now = ++this.#ops;
    if (now - kept.movedAt >= this.#stale) {
      this.#map.delete(key);
      this.#map.set(key, kept);
      kept.movedAt = now;
    }
    return kept.value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, { value, movedAt: ++this.#ops });
    if (this.#map.size > this.capacity) this.#map.delete(this.#map.keys().next().value as K);
  }

  /** Whether the key is kept, without counting as a use. */
  has(key: K): boolean {
    return this.#map.has(key);
  }

  get size(): number {
    return this.#map.size;
  }
}
