// Picks the rate-limit store from configuration: memory for one process, Redis when a URL is set
// (needed as soon as several processes serve the API, or each would enforce its own limit).
import { Redis } from 'ioredis';
import type { RateLimiter } from './limiter.js';
import { MemoryRateLimiter } from './memory.js';
import { RedisRateLimiter } from './redis.js';

export function createRateLimiter(redisUrl: string | null): { limiter: RateLimiter; close(): Promise<void> } {
  if (redisUrl === null) {
    const limiter = new MemoryRateLimiter();
    return { limiter, close: () => limiter.close() };
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
  return {
    limiter,
    async close() {
      await limiter.close();
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
