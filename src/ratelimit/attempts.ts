// Counters of attempts that may fail (failed logins, issue 10 item 16): per key, how many attempts
// were counted in the current window and until when that window (or lock) lasts. A key that
// reached its limit is locked until its `until`; the window restarts when `until` has passed.
//
// An attempt is counted when it starts, before its outcome is known, and given back if it turns
// out well (`reset` or `refund`): checking and counting in one atomic step is what keeps a burst of
// concurrent attempts from all passing the check before any of them is counted.
//
// Times are milliseconds on the service clock, passed in by the caller, so the test clock drives
// windows in both stores. Two stores: in memory (one process) and Redis (attempts-redis.ts).

export interface AttemptRule {
  key: string;
  /** Attempts a window holds; the one that reaches it still passes, and locks the key. */
  limit: number;
  /** Length of a window, and of the lock that starts at the attempt that reached the limit. */
  windowMs: number;
}

export type AttemptDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

export interface AttemptStore {
  /** Refuses when any rule's key is locked (counting nothing); otherwise counts one attempt on every key. */
  take(rules: AttemptRule[], nowMs: number): Promise<AttemptDecision>;
  /** Forgets a key (a success clears the account's failures). */
  reset(key: string): Promise<void>;
  /** Gives one attempt back (a success is no failure of the client's). */
  refund(key: string): Promise<void>;
  close(): Promise<void>;
}

interface Entry {
  n: number;
  until: number;
}

const SWEEP_INTERVAL_MS = 60_000;

export class MemoryAttemptStore implements AttemptStore {
  private readonly entries = new Map<string, Entry>();
  private lastNow = 0;
  private readonly timer: NodeJS.Timeout;

  /** At most `maxKeys` keys: past it, expired keys go first, then the oldest (failing open beats unbounded memory). */
  constructor(private readonly maxKeys = 100_000) {
    this.timer = setInterval(() => this.sweep(this.lastNow), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  get size(): number {
    return this.entries.size;
  }

  async take(rules: AttemptRule[], nowMs: number): Promise<AttemptDecision> {
    this.lastNow = Math.max(this.lastNow, nowMs);
    let retryAfterMs = 0;
    for (const { key, limit } of rules) {
      const e = this.live(key, nowMs);
      if (e && e.n >= limit) retryAfterMs = Math.max(retryAfterMs, e.until - nowMs);
    }
    if (retryAfterMs > 0) return { allowed: false, retryAfterMs };
    for (const { key, limit, windowMs } of rules) {
      let e = this.live(key, nowMs);
      if (!e) {
        if (this.entries.size >= this.maxKeys) this.makeRoom(nowMs);
        e = { n: 0, until: nowMs + windowMs };
        this.entries.set(key, e);
      }
      e.n++;
      if (e.n >= limit) e.until = nowMs + windowMs;
    }
    return { allowed: true };
  }

  async reset(key: string): Promise<void> {
    this.entries.delete(key);
  }

  async refund(key: string): Promise<void> {
    const e = this.entries.get(key);
    if (e && e.n > 0) e.n--;
  }

  /** The key's entry while its window lasts. */
  private live(key: string, nowMs: number): Entry | undefined {
    const e = this.entries.get(key);
    if (e && e.until <= nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  sweep(nowMs: number): void {
    for (const [key, e] of this.entries) if (e.until <= nowMs) this.entries.delete(key);
  }

  private makeRoom(nowMs: number): void {
    this.sweep(nowMs);
    const target = this.maxKeys - Math.ceil(this.maxKeys / 10);
    for (const key of this.entries.keys()) {
      if (this.entries.size <= target) break;
      this.entries.delete(key);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.entries.clear();
  }
}
