// This process's copy of shipping rate answers (C15.3), in front of the shared cache table
// (rate-cache.ts): an answer this process wrote or read is kept here until the same expiry, on the
// service clock, so a quote answered from the cache costs no database round trip of its own. The
// table stays the cache every process shares; this only remembers what it said. Bounded: the
// bodies least recently used go first.
import type { AppRate } from './rate-reply.js';

export interface MemoAnswer {
  /** The URL asked: an answer from another ratesUrl than the app's current one does not count. */
  ratesUrl: string;
  rates: AppRate[];
  /** Service-clock milliseconds; the answer is not used from then on. */
  expiresMs: number;
}

/** Request bodies remembered (each with the answers of the apps asked it); about a kilobyte each. */
export const RATE_MEMO_BODIES = 5_000;

/**
 * Keyed by the request body itself rather than its hash: a quote whose every answer is remembered
 * never hashes its body (the hash is the shared table's key, needed only to read or write it).
 */
export class RateMemo {
  private readonly bodies = new Map<string, Map<string, MemoAnswer>>();

  constructor(readonly maxBodies = RATE_MEMO_BODIES) {}

  /** The live answer of this app to this body at `nowMs`, if this process knows one. */
  get(appId: string, body: string, nowMs: number): MemoAnswer | null {
    const answers = this.bodies.get(body);
    const hit = answers?.get(appId);
    if (!answers || !hit) return null;
    if (hit.expiresMs <= nowMs) {
      answers.delete(appId);
      if (!answers.size) this.bodies.delete(body);
      return null;
    }
    // Most recently used last: eviction takes the first.
    this.bodies.delete(body);
    this.bodies.set(body, answers);
    return hit;
  }

  set(appId: string, body: string, answer: MemoAnswer): void {
    let answers = this.bodies.get(body);
    if (answers) this.bodies.delete(body);
    else answers = new Map();
    answers.set(appId, answer);
    this.bodies.set(body, answers);
    while (this.bodies.size > this.maxBodies) this.bodies.delete(this.bodies.keys().next().value!);
  }

  /** Bodies remembered. */
  get size(): number {
    return this.bodies.size;
  }
}
