// The least-recently-used map behind the process caches (src/functions/runtime/lru.ts): bounded,
// and never dropping an entry used within the last half of its capacity of operations, against a
// sweep of random workloads and capacities.
import { describe, expect, it } from 'vitest';
import { Lru } from '../src/functions/runtime/lru.js';

/** A small deterministic generator (mulberry32), so a failure names its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('Lru', () => {
  it('is exact for the smallest capacities: a read makes an entry the most recent', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(1);
    expect(lru.get('c')).toBe(3);
    expect(lru.size).toBe(2);
  });

  it('a set replaces the value and keeps one entry per key', () => {
    const lru = new Lru<string, number>(4);
    lru.set('a', 1);
    lru.set('a', 2);
    expect(lru.get('a')).toBe(2);
    expect(lru.size).toBe(1);
  });

  it('over random workloads: never more than its capacity, and what was used lately is kept', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const next = random(seed);
      const capacity = 1 + Math.floor(next() * 40);
      const keys = 1 + Math.floor(next() * capacity * 3);
      const lru = new Lru<number, number>(capacity);
      const values = new Map<number, number>();
      /** Each key's last use, in operations that touched an entry (a hit or a set). */
      const lastUse = new Map<number, number>();
      let ops = 0;
      for (let i = 0; i < 2_000; i++) {
        const key = Math.floor(next() * keys);
        if (next() < 0.5) {
          const value = Math.floor(next() * 1e6);
          lru.set(key, value);
          values.set(key, value);
          lastUse.set(key, ++ops);
        } else {
          const got = lru.get(key);
          if (got !== undefined) {
            expect(got, `seed ${seed}`).toBe(values.get(key));
            lastUse.set(key, ++ops);
          }
        }
        expect(lru.size, `seed ${seed}`).toBeLessThanOrEqual(capacity);
        const recent = Math.max(1, Math.floor(capacity / 2));
        const dropped = [...lastUse].filter(([k, at]) => ops - at < recent && !lru.has(k));
        expect(dropped, `seed ${seed}: keys used within the last ${recent} operations were dropped (capacity ${capacity})`).toEqual([]);
      }
    }
  });
});
