// Webhook ids this app has handled, remembered only while the platform may still send the same
// delivery again on its own, and never more than a fixed number of them: a long-running app must not
// grow a set of every id it was ever sent.
//
// How long is enough (contract C8.2, C8.3; app-api.md "Retries"): every attempt of a delivery carries
// the same X-SVC-Webhook-Id; a failed attempt is retried 60 s, 300 s and 900 s later, each +/-10 %,
// and an attempt counts as failed when it has no answer after 10 s. The last retry therefore starts
// at most 10 + 66 + 10 + 330 + 10 + 990 = 1416 s (under 24 minutes) after the first attempt, which
// is before this app handled it. Thirty minutes leaves room for a busy delivery worker.
// Later than that only a developer's manual redeliver (C8.5) sends the id again.

/** Longer than the platform's automatic redeliveries of one webhook (see above). */
export const REDELIVERY_WINDOW_MS = 30 * 60_000;
/** At 10 000 ids a busy app (over 5 webhooks a second for 30 minutes) forgets early, never grows. */
export const MAX_SEEN_WEBHOOKS = 10_000;

export interface SeenWebhooksOptions {
  /** How long an id is remembered after it was handled (default REDELIVERY_WINDOW_MS). */
  windowMs?: number;
  /** How many ids at most; beyond it the least recently handled is forgotten first (default MAX_SEEN_WEBHOOKS). */
  max?: number;
  /** Milliseconds now; tests pass a clock of their own. */
  now?: () => number;
}

export class SeenWebhooks {
  /** Id -> when it was handled. A Map keeps insertion order, so the oldest entry is always first. */
  private readonly handledAt = new Map<string, number>();
  private readonly windowMs: number;
  private readonly max: number;
  private readonly now: () => number;

  constructor(options: SeenWebhooksOptions = {}) {
    this.windowMs = options.windowMs ?? REDELIVERY_WINDOW_MS;
    this.max = options.max ?? MAX_SEEN_WEBHOOKS;
    this.now = options.now ?? Date.now;
    if (!(this.windowMs > 0) || !Number.isInteger(this.max) || this.max < 1) throw new RangeError('windowMs must be positive and max a whole number from 1');
  }

  /** Whether this id was handled within the window. Asking does not extend the window: retries are timed from the first attempt. */
  has(id: string): boolean {
    const at = this.handledAt.get(id);
    if (at === undefined) return false;
    if (this.now() - at < this.windowMs) return true;
    this.handledAt.delete(id);
    return false;
  }

  /** Remember an id as handled now. */
  add(id: string): void {
    const now = this.now();
    this.handledAt.delete(id); // re-inserted at the end: the most recent
    this.handledAt.set(id, now);
    for (const [oldest, at] of this.handledAt) {
      if (this.handledAt.size <= this.max && now - at < this.windowMs) break;
      this.handledAt.delete(oldest);
    }
  }

  /** How many ids are remembered now (expired ones still count until the next `add` sweeps them). */
  get size(): number {
    return this.handledAt.size;
  }
}
