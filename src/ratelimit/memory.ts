// In-process store for the App API rate limit (app-api.md Limits: a sliding one-second log).
// Good for a single process; a deployment with several processes needs the Redis store.
//
// Each key keeps a ring buffer of the timestamps it admitted, oldest first. A hit drops the
// timestamps that left the window from the front, then admits (appends) or refuses. Everything is
// O(1) amortized and allocation-free per hit apart from the returned decision and its promise.
import { WINDOW_MS, type RateDecision, type RateLimiter } from './limiter.js';

export interface MemoryRateLimiterOptions {
  /** Milliseconds since the epoch. Default: monotonic high-resolution time anchored at process start. */
  now?: () => number;
  /** Most keys held at once (default 100 000); see `makeRoom` for what happens past it. */
  maxKeys?: number;
}

/** How often idle keys are dropped. Dropping an idle key loses nothing: its log is all expired. */
const SWEEP_INTERVAL_MS = 10_000;
/** Rings start this small and double up to the key's limit, so a quiet key stays cheap. */
const INITIAL_CAPACITY = 4;

/** One key's log: `count` timestamps in `ts`, oldest at `head`, in a ring of `ts.length` slots. */
class KeyLog {
  ts: Float64Array;
  head = 0;
  count = 0;
  constructor(capacity: number) {
    this.ts = new Float64Array(capacity);
  }
  /** Newest recorded timestamp (only meaningful when count > 0). */
  newest(): number {
    return this.ts[(this.head + this.count - 1) % this.ts.length];
  }
  /** Copy the newest `min(count, capacity)` entries into a ring of `capacity` slots, oldest first. */
  resize(capacity: number): void {
    const keep = Math.min(this.count, capacity);
    const next = new Float64Array(capacity);
    const cap = this.ts.length;
    for (let i = 0; i < keep; i++) next[i] = this.ts[(this.head + this.count - keep + i) % cap];
    this.ts = next;
    this.head = 0;
    this.count = keep;
  }
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, KeyLog>();
  private readonly now: () => number;
  private readonly maxKeys: number;
  private readonly timer: NodeJS.Timeout;

  constructor(options: MemoryRateLimiterOptions = {}) {
    // performance.now() is monotonic, so a wall-clock step (NTP) can't reorder a key's log.
    this.now = options.now ?? (() => performance.timeOrigin + performance.now());
    this.maxKeys = Math.max(1, options.maxKeys ?? 100_000);
    this.timer = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.timer.unref(); // the limiter alone must never keep the process alive
  }

  /** Number of keys currently held (for tests and metrics). */
  get size(): number {
    return this.logs.size;
  }

  hit(key: string, limit: number): RateDecision {
    return this.hitSync(key, limit);
  }

  /** The decision itself; synchronous because nothing here waits. `limit` is a whole number >= 0. */
  hitSync(key: string, limit: number): RateDecision {
    const now = this.now();
    if (limit < 1) return { allowed: false, limit, remaining: 0, resetAt: Math.ceil((now + WINDOW_MS) / 1000) };

    let log = this.logs.get(key);
    if (log === undefined) {
      if (this.logs.size >= this.maxKeys) this.makeRoom(now);
      log = new KeyLog(Math.min(limit, INITIAL_CAPACITY));
      this.logs.set(key, log);
    } else if (log.ts.length > limit) {
      // The key's tier went down: keep only the newest `limit` entries. That changes no decision
      // (the limit-th newest entry alone decides whether the window is full) and keeps the bound.
      log.resize(limit);
    }

    // Evict what left the window: an entry at t counts while now - t < WINDOW_MS.
    const ts = log.ts;
    let cap = ts.length;
    while (log.count > 0 && now - ts[log.head] >= WINDOW_MS) {
      log.head = log.head + 1 === cap ? 0 : log.head + 1;
      log.count--;
    }

    let allowed = false;
    if (log.count < limit) {
      if (log.count === cap) {
        log.resize(Math.min(limit, cap * 2)); // grows only while below the limit, so never past it
        cap = log.ts.length;
      }
      log.ts[(log.head + log.count) % cap] = now;
      log.count++;
      allowed = true;
    }
    // After the admit above count >= 1; a refusal implies count >= limit >= 1. So head is valid.
    const oldest = log.ts[log.head];
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - log.count),
      resetAt: Math.ceil((oldest + WINDOW_MS) / 1000),
    };
  }

  /** Drop every key whose newest entry has left the window; returns how many were dropped. */
  sweep(now: number = this.now()): number {
    let dropped = 0;
    for (const [key, log] of this.logs) {
      if (log.count === 0 || now - log.newest() >= WINDOW_MS) {
        this.logs.delete(key); // deleting the current entry while iterating a Map is safe
        dropped++;
      }
    }
    return dropped;
  }

  /**
   * Called when a new key would exceed maxKeys. Idle keys go first (lossless). If more than
   * maxKeys keys are active within one second, the oldest-created ones are forgotten, which lets
   * them start a fresh window: failing open under key pressure beats unbounded memory. We free
   * ~10 % below the cap so the O(n) sweep runs at most once per maxKeys/10 new keys (amortized O(1)).
   */
  private makeRoom(now: number): void {
    this.sweep(now);
    const target = this.maxKeys - Math.ceil(this.maxKeys / 10);
    if (this.logs.size <= target) return;
    for (const key of this.logs.keys()) {
      this.logs.delete(key);
      if (this.logs.size <= target) break;
    }
  }

  close(): Promise<void> {
    clearInterval(this.timer);
    this.logs.clear();
    return Promise.resolve();
  }
}
