// Redis store for attempt counters (attempts.ts), shared by every process of a deployment: one hash
// per key { n, until }, checked and counted by one Lua script so that concurrent attempts on several
// processes cannot all pass the check before any is counted. `until` is on the service clock (the
// caller's `now`), so the test clock moves windows here too; the key's TTL only lets Redis forget
// it, and as the service clock never runs behind real time it never expires a key early.
import type { Redis } from 'ioredis';
import type { AttemptDecision, AttemptRule, AttemptStore } from './attempts.js';

const TAKE = 'svcAttemptTake';
const REFUND = 'svcAttemptRefund';

// KEYS: one per rule. ARGV[1]: now (ms); then per rule: limit, window (ms).
// Returns {1, 0} when counted, {0, retry after ms} when a key is locked.
const TAKE_LUA = `
local now = tonumber(ARGV[1])
local state = {}
local retry = 0
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i])
  local v = redis.call('HMGET', key, 'n', 'until')
  local n = tonumber(v[1]) or 0
  local untilMs = tonumber(v[2]) or 0
  if untilMs <= now then n = 0 end
  if n >= limit and untilMs - now > retry then retry = untilMs - now end
  state[i] = {n, untilMs}
end
if retry > 0 then return {0, retry} end
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  local n = state[i][1] + 1
  local untilMs = state[i][2]
  if untilMs <= now or n >= limit then untilMs = now + window end
  redis.call('HSET', key, 'n', n, 'until', untilMs)
  redis.call('PEXPIRE', key, untilMs - now)
end
return {1, 0}
`;

const REFUND_LUA = `
local n = tonumber(redis.call('HGET', KEYS[1], 'n'))
if n and n > 0 then redis.call('HINCRBY', KEYS[1], 'n', -1) end
return 0
`;

type WithCommands = Redis & {
  [TAKE](numKeys: number, ...args: (string | number)[]): Promise<[number, number]>;
  [REFUND](key: string): Promise<number>;
};

export class RedisAttemptStore implements AttemptStore {
  private readonly redis: WithCommands;

  /** `redis` is shared and owned by the caller: close() leaves it open (see createRateLimiter). */
  constructor(redis: Redis, private readonly keyPrefix = 'svc:attempts:') {
    redis.defineCommand(TAKE, { lua: TAKE_LUA });
    redis.defineCommand(REFUND, { numberOfKeys: 1, lua: REFUND_LUA });
    this.redis = redis as WithCommands;
  }

  /** Rejects if Redis can't be reached; the caller decides whether to fail open or closed. */
  async take(rules: AttemptRule[], nowMs: number): Promise<AttemptDecision> {
    const keys = rules.map((r) => this.keyPrefix + r.key);
    const args = rules.flatMap((r) => [r.limit, Math.round(r.windowMs)]);
    const [allowed, retryAfterMs] = await this.redis[TAKE](keys.length, ...keys, Math.round(nowMs), ...args);
    return allowed === 1 ? { allowed: true } : { allowed: false, retryAfterMs };
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(this.keyPrefix + key);
  }

  async refund(key: string): Promise<void> {
    await this.redis[REFUND](this.keyPrefix + key);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
