// This process's copy of shipping rate answers (C15.3), in front of the shared cache table
// (rate-cache.ts): an answer this process wrote or read is kept here until the same expiry, on the
// service clock, so a quote answered from the cache costs no database round trip of its own. The
// table stays the cache every process shares; this only remembers what it said. Bounded: the
// entries least recently used go first.
import type { AppRate } from './rate-reply.js';

export interface MemoAnswer {
  /** The URL asked: an answer from another ratesUrl than the app's current one does not count. */
  ratesUrl: string;
  rates: AppRate[];
  /** Service-clock milliseconds; the answer is not used from then on. */
  expiresMs: number;
}

export const RATE_MEMO_ENTRIES = 10_000;

export class RateMemo {
  private readonly entries = new Map<string, MemoAnswer>();

  constructor(readonly maxEntries = RATE_MEMO_ENTRIES) {}

  /** The live answer of this app to this body at `nowMs`, if this process knows one. */
  get(appId: string, bodySha256: string, nowMs: number): MemoAnswer | null {
    const key = `${appId}:${bodySha256}`;
    const hit = this.entries.get(key);
    if (!hit) return null;
    if (hit.expiresMs <= nowMs) {
      this.entries.delete(key);
      return null;
    }
    // Most recently used last: eviction takes the first.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  set(appId: string, bodySha256: string, answer: MemoAnswer): void {
    const key = `${appId}:${bodySha256}`;
    this.entries.delete(key);
    this.entries.set(key, answer);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}
