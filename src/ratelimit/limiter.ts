// The App API rate limit (app-api.md Limits): a sliding one-second log per (app, store) pair.
// Two stores implement it: in memory (one process) and Redis (shared by every process).

export interface RateDecision {
  allowed: boolean;
  /** Tier cap per window (X-RateLimit-Limit). */
  limit: number;
  /** Approximate requests left in the window after this one, floored at 0 (X-RateLimit-Remaining). */
  remaining: number;
  /** Unix time in seconds when the window resets (X-RateLimit-Reset). */
  resetAt: number;
}

export interface RateLimiter {
  /**
   * Record one request for `key` if fewer than `limit` requests were recorded in the last second,
   * else refuse it (a refused request is not recorded). An in-process store answers without a
   * promise, which keeps the App API gate free of promise churn on its hot path.
   */
  hit(key: string, limit: number): RateDecision | Promise<RateDecision>;
  /** Readiness: resolves when a shared store answers (a store in this process has nothing to check). */
  check?(): Promise<void>;
  close(): Promise<void>;
}

export const WINDOW_MS = 1000;

export const TIER_LIMITS = { free: 20, basic: 40, pro: 100, enterprise: 500 } as const;
export type Tier = keyof typeof TIER_LIMITS;
