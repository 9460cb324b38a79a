// Redis store for the App API rate limit, shared by every process of a deployment. Same sliding
// one-second log as memory.ts, kept as a sorted set per key (score = admission time in integer
// microseconds). One Lua script per request makes evict + count + admit atomic: a GET-then-SET
// round trip would let concurrent processes all see "room left" and over-admit.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { WINDOW_MS, type RateDecision, type RateLimiter } from './limiter.js';

export interface RedisRateLimiterOptions {
  /** Test clock in ms since the epoch. When unset the script reads Redis's own clock (TIME), so
   *  every process agrees on "now" no matter how their clocks drift. */
  now?: () => number;
  /** Prefix of every rate-limit key (default 'svc:rl:'). */
  keyPrefix?: string;
}

/** A decision plus the clock it was made on (Redis TIME unless `options.now`), in ms. */
export interface RedisRateDecision extends RateDecision {
  nowMs: number;
}

const WINDOW_US = WINDOW_MS * 1000;
/** Key TTL: one window after the last admission the log is empty anyway. The extra window of slack
 *  only matters for an injected test clock running behind real time; eviction is by score. */
const KEY_TTL_MS = 2 * WINDOW_MS;
const COMMAND = 'svcRateLimitHit';

// KEYS[1] log key. ARGV: limit, window (us), now (us, or '' for Redis TIME), unique member, ttl (ms).
// Returns {allowed 0/1, count after, oldest score or -1, now}: integers, which survive the
// Lua -> RESP conversion (it truncates numbers), hence microseconds rather than fractional ms.
const LUA = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now
if ARGV[3] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[3])
end
-- an entry at t counts while now - t < window
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count > limit then
  -- the tier went down: keep the newest 'limit' entries (same decisions, bounded size)
  redis.call('ZREMRANGEBYRANK', key, 0, count - limit - 1)
  count = limit
end
local allowed = 0
if count < limit then
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, ARGV[5])
  count = count + 1
  allowed = 1
end
local oldest = -1
if count > 0 then
  oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
end
return {allowed, count, oldest, now}
`;

type ScriptReply = [allowed: number, count: number, oldestUs: number, nowUs: number];
type WithCommand = Redis & {
  [COMMAND](key: string, limit: number, windowUs: number, nowUs: string, member: string, ttlMs: number): Promise<ScriptReply>;
};

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: WithCommand;
  private readonly now: (() => number) | undefined;
  private readonly keyPrefix: string;
  // Members must be unique per admission or two admissions in the same microsecond would collapse
  // into one entry: a random per-instance id plus a counter is unique across processes.
  private readonly instanceId = randomBytes(8).toString('base64url');
  private seq = 0;

  /** `redis` is shared and owned by the caller: close() leaves it open (see createRateLimiter). */
  constructor(redis: Redis, options: RedisRateLimiterOptions = {}) {
    // defineCommand sends EVALSHA and falls back to EVAL (loading the script) on NOSCRIPT.
    redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: LUA });
    this.redis = redis as WithCommand;
    this.now = options.now;
    this.keyPrefix = options.keyPrefix ?? 'svc:rl:';
  }

  /** Rejects if Redis can't be reached; the caller decides whether to fail open or closed. */
  async hit(key: string, limit: number): Promise<RateDecision> {
    return decide(await this.run(key, limit), limit);
  }

  /** hit() plus the time the decision was made on (for tests across processes). */
  async hitWithTime(key: string, limit: number): Promise<RedisRateDecision> {
    const reply = await this.run(key, limit);
    return { ...decide(reply, limit), nowMs: reply[3] / 1000 };
  }

  private run(key: string, limit: number): Promise<ScriptReply> {
    const nowUs = this.now === undefined ? '' : String(Math.round(this.now() * 1000));
    const member = `${this.instanceId}:${++this.seq}`;
    return this.redis[COMMAND](this.keyPrefix + key, limit, WINDOW_US, nowUs, member, KEY_TTL_MS);
  }

  /** Readiness: Redis answers a PING (bounded by the client's command timeout). */
  async check(): Promise<void> {
    await this.redis.ping();
  }

  /** Does NOT quit the Redis client: it is shared and its owner closes it. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Same arithmetic as the memory store: the window resets when its oldest entry leaves it. */
function decide([allowed, count, oldestUs, nowUs]: ScriptReply, limit: number): RateDecision {
  return {
    allowed: allowed === 1,
    limit,
    remaining: Math.max(0, limit - count),
    resetAt: Math.ceil(((count > 0 ? oldestUs : nowUs) + WINDOW_US) / 1_000_000),
  };
}
