// This process's copy of shipping rate answers (C15.3), in front of the shared cache table
// (rate-cache.ts): an answer this process wrote or read is kept here until the same expiry, on the
// service clock, so a quote answered from the cache costs no database round trip of its own. The
// table stays the cache every process shares; this only remembers what it said. Bounded: the
// bodies least recently used go first.
//
// It also keeps each checkout's last quote of the apps (`lastQuote`), once the checkout has been
// quoted from memory: a buyer's page asks the rates again and again with nothing changed, and then
// the request body need not be built, nor looked up, nor its rates turned into offers again. Such a
// quote is reused only while what its body was made of is the same, value by value
// (rate-request.ts `rateRequestInputs`), the apps asked are the same (id, handle, ratesUrl), and
// none of its answers has expired.
import { Lru } from '../functions/runtime/lru.js';
import type { AppRate } from './rate-reply.js';
import type { ShippingRate } from './rate.js';

export interface MemoAnswer {
  /** The URL asked: an answer from another ratesUrl than the app's current one does not count. */
  ratesUrl: string;
  rates: AppRate[];
  /** Service-clock milliseconds; the answer is not used from then on. */
  expiresMs: number;
}

/** Request bodies remembered (each with the answers of the apps asked it); about a kilobyte each. */
export const RATE_MEMO_BODIES = 5_000;

/** A checkout's last quote of the apps in this process (see above); its parts are never changed. */
export interface CheckoutAppQuote {
  /** What the body was made from (`rateRequestInputs`). */
  inputs: readonly unknown[];
  /** The apps asked, in order. */
  apps: readonly Readonly<{ id: string; handle: string; ratesUrl: string }>[];
  body: string;
  /** The apps' rates as offered, frozen: every quote that reuses them shares these objects. */
  offered: readonly ShippingRate[];
  /** The earliest expiry of its answers (service clock). */
  expiresMs: number;
}

/**
 * Keyed by the request body itself rather than its hash: a quote whose every answer is remembered
 * never hashes its body (the hash is the shared table's key, needed only to read or write it).
 */
export class RateMemo {
  private readonly bodies = new Map<string, Map<string, MemoAnswer>>();
  /** Checkouts' last quotes, as many as bodies, the least recently used dropped first. */
  private readonly quotes: Lru<string, CheckoutAppQuote>;

  constructor(readonly maxBodies = RATE_MEMO_BODIES) {
    this.quotes = new Lru(maxBodies);
  }

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

  /** This checkout's last quote of the apps, live or not (the caller checks it; see above). `checkoutKey`: its token hash. */
  lastQuote(checkoutKey: string): CheckoutAppQuote | undefined {
    return this.quotes.get(checkoutKey);
  }

  rememberQuote(checkoutKey: string, quote: CheckoutAppQuote): void {
    this.quotes.set(checkoutKey, quote);
  }

  /** Bodies remembered. */
  get size(): number {
    return this.bodies.size;
  }
}
