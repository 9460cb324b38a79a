// Picks the rate-limit stores from configuration: memory for one process, Redis when a URL is set
// (needed as soon as several processes serve the API, or each would enforce its own limit). The
// App API limiter and the attempt counters (failed logins) share one Redis connection.
import { Redis } from 'ioredis';
import type { RateLimiter } from './limiter.js';
import { MemoryRateLimiter } from './memory.js';
import { RedisRateLimiter } from './redis.js';
import { MemoryAttemptStore, type AttemptStore } from './attempts.js';
import { RedisAttemptStore } from './attempts-redis.js';

export function createRateLimiter(redisUrl: string | null): { limiter: RateLimiter; attempts: AttemptStore; close(): Promise<void> } {
  if (redisUrl === null) {
    const limiter = new MemoryRateLimiter();
    const attempts = new MemoryAttemptStore();
    return {
      limiter,
      attempts,
      async close() {
        await limiter.close();
        await attempts.close();
      },
    };
  }
  const client = new Redis(redisUrl, {
    lazyConnect: false,
    // Fail a hit fast while Redis is down instead of queueing it through many reconnects; the
    // request path turns the rejection into its own decision.
    maxRetriesPerRequest: 1,
    // Concurrent hits share one round trip (a pipeline per event-loop tick).
    enableAutoPipelining: true,
  });
  // Failures reach callers as rejected hit() calls; without a listener ioredis would also print
  // an "Unhandled error event" for every failed reconnect.
  client.on('error', () => {});
  const limiter = new RedisRateLimiter(client);
  const attempts = new RedisAttemptStore(client);
  return {
    limiter,
    attempts,
    async close() {
      await limiter.close();
      await attempts.close();
      // This function created the client, so it owns it. quit() waits for pending replies; it can
      // reject if Redis is unreachable, and then there is nothing left to wait for.
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}
