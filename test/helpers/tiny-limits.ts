// The platform's rate limiter with some apps held to a tiny limit, whatever their tier: to see an
// SDK or app stay within a budget without sending hundreds of requests. Refusals are recorded.
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import type { RateLimiter } from '../../src/ratelimit/limiter.js';

export function tinyLimiter(tiny: number) {
  /** Apps held to `tiny` requests per second (by app id). */
  const tinyApps = new Set<string>();
  /** The (app:store) keys refused with a 429, one entry per refusal. */
  const refusals: string[] = [];
  const memory = new MemoryRateLimiter();
  const limiter: RateLimiter = {
    hit(key, limit) {
      const decision = memory.hitSync(key, tinyApps.has(key.slice(0, key.indexOf(':'))) ? tiny : limit);
      if (!decision.allowed) refusals.push(key);
      return decision;
    },
    close: () => memory.close(),
  };
  return { limiter, tinyApps, refusals };
}
