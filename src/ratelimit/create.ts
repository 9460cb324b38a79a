// Picks the rate-limit stores from configuration: memory for one process, Redis when a URL is set
// (needed as soon as several processes serve the API, or each would enforce its own limit). The
// App API limiter and the attempt counters (failed logins) share one Redis connection.
//
// A Redis outage must answer fast and heal by itself (docs/decisions.md "Hardening: observability"):
// while the connection is down a hit fails at once (no offline queue), a connected Redis that stops
// answering fails it after COMMAND_TIMEOUT_MS, the App API gate turns either into a 503, /readyz
// says 503, and the client reconnects for ever, at most RECONNECT_MAX_MS apart.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RateLimiter } from './limiter.js';
import { MemoryRateLimiter } from './memory.js';
import { RedisRateLimiter } from './redis.js';
import { MemoryAttemptStore, type AttemptStore } from './attempts.js';
import { RedisAttemptStore } from './attempts-redis.js';
import { silentLogger } from '../platform/logger.js';

export const COMMAND_TIMEOUT_MS = 1000;
export const RECONNECT_MAX_MS = 1000;

export interface RateLimiterHandle {
  limiter: RateLimiter;
  /** Failed-attempt counters (login throttling), in the same store as the limiter. */
  attempts: AttemptStore;
  /** Resolves once the store can be used, or after `timeoutMs` (start-up waits a moment for Redis). */
  connected(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export function createRateLimiter(redisUrl: string | null, options: { log?: Logger } = {}): RateLimiterHandle {
  if (redisUrl === null) {
    const limiter = new MemoryRateLimiter();
    const attempts = new MemoryAttemptStore();
    return {
      limiter,
      attempts,
      connected: async () => {},
      async close() {
        await limiter.close();
        await attempts.close();
      },
    };
  }
  const log = options.log ?? silentLogger();
  const client = new Redis(redisUrl, {
    lazyConnect: false,
    // While disconnected, a hit fails at once instead of waiting in a queue for a reconnect.
    enableOfflineQueue: false,
    // A hit is never re-sent on a new connection: it could count twice, and a caller is waiting.
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: COMMAND_TIMEOUT_MS,
    // Never give up (ioredis stops reconnecting when this returns null): 100 ms, 200 ms, ... 1 s.
    retryStrategy: (times: number) => Math.min(times * 100, RECONNECT_MAX_MS),
    // Concurrent hits share one round trip (a pipeline per event-loop tick).
    enableAutoPipelining: true,
  });

  // One log line when Redis goes away and one when it is back, not one per refused request. (The
  // 'error' listener is also what keeps ioredis from printing every failed reconnect.) The URL is
  // never logged: it may hold a password.
  let state: 'starting' | 'up' | 'down' = 'starting';
  let closing = false;
  const wentDown = (err?: unknown) => {
    if (state === 'down' || closing) return;
    state = 'down';
    log.warn({ err }, 'rate-limit store (Redis) unavailable: App API calls answer 503 until it is back');
  };
  client.on('error', wentDown);
  client.on('close', () => state === 'up' && wentDown());
  client.on('ready', () => {
    if (state === 'down') log.info('rate-limit store (Redis) is back');
    state = 'up';
  });

  const limiter = new RedisRateLimiter(client);
  const attempts = new RedisAttemptStore(client);
  return {
    limiter,
    attempts,
    connected(timeoutMs) {
      if (client.status === 'ready') return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          client.off('ready', done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        client.once('ready', done);
      });
    },
    async close() {
      closing = true;
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
