// The App API rate limit (app-api.md Limits, Request rate): one suite for both stores, driven by a
// fake clock so window edges are exact. Redis runs only when REDIS_URL is set.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import type { RateDecision, RateLimiter } from '../src/ratelimit/limiter.js';
import { MemoryRateLimiter } from '../src/ratelimit/memory.js';
import { RedisRateLimiter } from '../src/ratelimit/redis.js';
import { createRateLimiter } from '../src/ratelimit/create.js';

const REDIS_URL = process.env.REDIS_URL;
/** A whole second, so resetAt values below are easy to read: t=0 -> resets at S + 1. */
const BASE = 1_700_000_000_000;
const S = BASE / 1000;

/** A clock the test moves by hand; times are ms after BASE. */
function fakeClock() {
  const clock = { t: 0, now: () => BASE + clock.t };
  return clock;
}

interface Store {
  name: string;
  kind: 'memory' | 'redis';
  make(now?: () => number): RateLimiter;
}

// One client and one random prefix per run, so runs never see each other's keys.
const redis = REDIS_URL ? new Redis(REDIS_URL, { maxRetriesPerRequest: 1 }) : null;
const prefix = `test:rl:${randomBytes(6).toString('hex')}:`;
afterAll(async () => {
  if (!redis) return;
  const keys = await redis.keys(`${prefix}*`); // test-only Redis: KEYS is fine here
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const stores: Store[] = [{ name: 'memory store', kind: 'memory', make: (now) => new MemoryRateLimiter({ now }) }];
if (redis) {
  stores.push({ name: 'redis store', kind: 'redis', make: (now) => new RedisRateLimiter(redis, { now, keyPrefix: prefix }) });
}

/** X-RateLimit-Reset of a refusal lies ahead: the client may not retry before it. */
function expectResetAhead(d: RateDecision, atMs: number) {
  expect(d.resetAt * 1000).toBeGreaterThan(atMs);
}

describe.each(stores)('$name', (store) => {
  // Keys are unique per test so the shared Redis prefix needs no cleanup between tests.
  const key = (name: string) => `${name}:${randomBytes(4).toString('hex')}`;

  it('admits exactly `limit` per window, and an entry leaves the window exactly 1000 ms later', async () => {
    const clock = fakeClock();
    const rl = store.make(clock.now);
    const k = key('edge');
    expect(await rl.hit(k, 3)).toEqual({ allowed: true, limit: 3, remaining: 2, resetAt: S + 1 });
    expect(await rl.hit(k, 3)).toEqual({ allowed: true, limit: 3, remaining: 1, resetAt: S + 1 });
    expect(await rl.hit(k, 3)).toEqual({ allowed: true, limit: 3, remaining: 0, resetAt: S + 1 });

    clock.t = 999; // the t=0 entries are still in the window (999 < 1000)
    const refused = await rl.hit(k, 3);
    expect(refused).toEqual({ allowed: false, limit: 3, remaining: 0, resetAt: S + 1 });
    expectResetAhead(refused, clock.now());

    clock.t = 1000; // at resetAt: now - 0 = 1000, all three left; the refused t=999 hit was never recorded
    expect(await rl.hit(k, 3)).toEqual({ allowed: true, limit: 3, remaining: 2, resetAt: S + 2 });
    await rl.close();
  });

  it('admits a retry after Retry-After (1 s, the window): the whole window has drained by then', async () => {
    const clock = fakeClock();
    const rl = store.make(clock.now);
    const k = key('retry');
    expect((await rl.hit(k, 2)).allowed).toBe(true); // t=0
    clock.t = 400;
    expect((await rl.hit(k, 2)).allowed).toBe(true);
    clock.t = 700;
    expect(await rl.hit(k, 2)).toMatchObject({ allowed: false, remaining: 0, resetAt: S + 1 });
    clock.t = 1700; // 700 + Retry-After
    expect(await rl.hit(k, 2)).toEqual({ allowed: true, limit: 2, remaining: 1, resetAt: S + 3 });
    await rl.close();
  });

  it('does not record refused requests, so hammering does not extend the block', async () => {
    const clock = fakeClock();
    const rl = store.make(clock.now);
    const k = key('burst');
    expect((await rl.hit(k, 2)).allowed).toBe(true); // t=0
    clock.t = 500;
    expect((await rl.hit(k, 2)).allowed).toBe(true);
    for (clock.t = 600; clock.t < 1000; clock.t += 8) expect((await rl.hit(k, 2)).allowed).toBe(false);

    clock.t = 1000; // only the t=0 entry left; 50 refusals changed nothing
    expect(await rl.hit(k, 2)).toMatchObject({ allowed: true, remaining: 0, resetAt: S + 2 });
    clock.t = 1001;
    expect(await rl.hit(k, 2)).toMatchObject({ allowed: false, remaining: 0, resetAt: S + 2 });
    clock.t = 1500; // the t=500 entry left
    expect(await rl.hit(k, 2)).toMatchObject({ allowed: true, remaining: 0, resetAt: S + 2 });
    await rl.close();
  });

  it('keeps keys independent: other apps and other stores are unaffected', async () => {
    const clock = fakeClock();
    const rl = store.make(clock.now);
    const app1store1 = key('app1:store1');
    expect((await rl.hit(app1store1, 1)).allowed).toBe(true);
    expect((await rl.hit(app1store1, 1)).allowed).toBe(false);
    expect(await rl.hit(key('app1:store2'), 1)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await rl.hit(key('app2:store1'), 5)).toMatchObject({ allowed: true, remaining: 4 });
    expect((await rl.hit(app1store1, 1)).allowed).toBe(false);
    await rl.close();
  });

  it('applies a lowered limit at once (tier change) and still frees slots on time', async () => {
    const clock = fakeClock();
    const rl = store.make(clock.now);
    const k = key('tier');
    for (clock.t = 0; clock.t <= 300; clock.t += 100) expect((await rl.hit(k, 4)).allowed).toBe(true);
    clock.t = 400;
    expect(await rl.hit(k, 2)).toMatchObject({ allowed: false, limit: 2, remaining: 0 });
    clock.t = 1250; // entries 0..200 left; 300 remains: 1 < 2
    expect(await rl.hit(k, 2)).toMatchObject({ allowed: true, remaining: 0, resetAt: S + 2 });
    clock.t = 1299;
    expect((await rl.hit(k, 2)).allowed).toBe(false);
    await rl.close();
  });

  it(
    'matches a brute-force model and never admits more than the limit in any 1 s interval',
    async () => {
      let run = 0;
      // Steps that often add up to exactly 1000 ms, so window edges come up in most runs.
      const dt = fc.oneof(fc.constant(0), fc.constantFrom(1, 250, 499, 500, 501), fc.integer({ min: 0, max: 600 }));
      const op = fc.record({ k: fc.integer({ min: 0, max: 2 }), dt });
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 3, maxLength: 3 }),
          fc.array(op, { maxLength: 60 }),
          async (limits, ops) => {
            run++;
            const clock = fakeClock();
            const rl = store.make(clock.now);
            const accepted: number[][] = [[], [], []]; // the model: every admitted time, per key
            try {
              for (const { k, dt } of ops) {
                clock.t += dt;
                const t = clock.t;
                const limit = limits[k];
                const inWindow = accepted[k].filter((a) => t - a < 1000);
                const allow = inWindow.length < limit;
                if (allow) {
                  inWindow.push(t);
                  accepted[k].push(t);
                }
                const d = await rl.hit(`prop:${run}:${k}`, limit);
                expect(d).toEqual({
                  allowed: allow,
                  limit,
                  remaining: Math.max(0, limit - inWindow.length),
                  resetAt: Math.ceil((BASE + inWindow[0] + 1000) / 1000),
                });
                if (!allow) expectResetAhead(d, BASE + t);
              }
              // Any limit+1 admissions of one key span at least a full window.
              accepted.forEach((times, k) => {
                for (let i = 0; i + limits[k] < times.length; i++) expect(times[i + limits[k]] - times[i]).toBeGreaterThanOrEqual(1000);
              });
            } finally {
              await rl.close();
            }
          },
        ),
        { numRuns: store.kind === 'redis' ? 50 : 300 },
      );
    },
    20_000,
  );
});

if (!redis) {
  describe.skip('redis store (set REDIS_URL to run)', () => {
    it('runs the shared suite, the Redis clock check and the multi-process test', () => {});
  });
}

describe('memory store only', () => {
  it('evicts the oldest keys past maxKeys when none is idle', async () => {
    const clock = fakeClock();
    const rl = new MemoryRateLimiter({ now: clock.now, maxKeys: 3 });
    for (const k of ['k1', 'k2', 'k3', 'k4']) expect((await rl.hit(k, 1)).allowed).toBe(true);
    expect(rl.size).toBeLessThanOrEqual(3);
    expect((await rl.hit('k4', 1)).allowed).toBe(false); // newest keys are still tracked
    expect((await rl.hit('k3', 1)).allowed).toBe(false);
    expect((await rl.hit('k1', 1)).allowed).toBe(true); // k1 was forgotten: a fresh window
    expect(rl.size).toBeLessThanOrEqual(3);
    await rl.close();
  });

  it('drops idle keys before active ones when maxKeys is reached', async () => {
    const clock = fakeClock();
    const rl = new MemoryRateLimiter({ now: clock.now, maxKeys: 3 });
    await rl.hit('idle', 1);
    clock.t = 1500;
    await rl.hit('a', 1);
    await rl.hit('b', 1);
    await rl.hit('c', 1);
    expect(rl.size).toBe(3);
    for (const k of ['a', 'b', 'c']) expect((await rl.hit(k, 1)).allowed).toBe(false);
    await rl.close();
  });

  it('sweeps idle keys periodically (unref timer) and on demand', async () => {
    vi.useFakeTimers();
    try {
      const clock = fakeClock();
      const rl = new MemoryRateLimiter({ now: clock.now });
      await rl.hit('a', 5);
      clock.t = 600;
      await rl.hit('b', 5);
      clock.t = 1000; // a's only entry (t=0) left the window; b's (t=600) has not
      expect(rl.sweep()).toBe(1);
      expect(rl.size).toBe(1);
      clock.t = 60_000;
      vi.advanceTimersByTime(60_000);
      expect(rl.size).toBe(0);
      await rl.close();
      expect(vi.getTimerCount()).toBe(0); // close() cleared the interval
    } finally {
      vi.useRealTimers();
    }
  });

  it('createRateLimiter(null) gives the memory store', async () => {
    const { limiter, close } = createRateLimiter(null);
    expect(limiter).toBeInstanceOf(MemoryRateLimiter);
    expect((await limiter.hit('x', 1)).allowed).toBe(true);
    await close();
  });
});

describe.skipIf(!redis)('redis store only', () => {
  it("uses Redis's own clock when no `now` is given", async () => {
    const rl = new RedisRateLimiter(redis!, { keyPrefix: prefix });
    const k = `clock:${randomBytes(4).toString('hex')}`;
    const decisions = [await rl.hitWithTime(k, 2), await rl.hitWithTime(k, 2), await rl.hitWithTime(k, 2)];
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
    // Redis TIME is a real Unix time: the reset is when the first hit (at most a moment before the
    // third) leaves the window, rounded up to a whole second.
    const d = decisions[2];
    expect(d.resetAt * 1000).toBeGreaterThan(d.nowMs);
    expect(d.resetAt * 1000).toBeLessThan(decisions[0].nowMs + 2000);
    await rl.close();
    expect(await redis!.ping()).toBe('PONG'); // close() left the shared client open
  });

  it('createRateLimiter(url) owns its client and quits it on close', async () => {
    const { limiter, connected, close } = createRateLimiter(REDIS_URL!);
    expect(limiter).toBeInstanceOf(RedisRateLimiter);
    // No offline queue: a hit before the connection is up fails at once (startRuntime waits too).
    await connected(5000);
    const k = `create:${randomBytes(4).toString('hex')}`;
    expect((await limiter.hit(k, 1)).allowed).toBe(true);
    await redis!.del(`svc:rl:${k}`); // default prefix, outside this run's prefix
    await close();
  });
});
