// Everything a process needs, opened in order and closed in reverse: database (migrated), clock,
// secrets, rate limiter, caches and the job registry. main.ts, the tests and the benchmark share it.
import type { Config } from './config.js';
import type { Deps } from './deps.js';
import type { Db } from './db/db.js';
import { openDatabase } from './db/open.js';
import { migrate } from './db/migrate.js';
import { SystemClock, TestClock, type Clock } from './clock.js';
import { SecretBox } from './crypto.js';
import { PlatformJwt } from './accounts/jwt.js';
import { createRateLimiter } from './ratelimit/create.js';
import { TierCache } from './ratelimit/tier-cache.js';
import { AccessTokenCache } from './oauth/token-cache.js';
import { JobRegistry } from './jobs/registry.js';
import { loadClockOffset } from './platform/clock-store.js';
import { registerJobs } from './jobs/register-all.js';
import { flushMail } from './mail/mail.js';
import { WebhookEngine } from './webhooks/engine.js';

export interface Runtime {
  deps: Deps;
  close(): Promise<void>;
}

export async function startRuntime(config: Config, options: { db?: Db; clock?: Clock } = {}): Promise<Runtime> {
  const db = options.db ?? (await openDatabase(config));
  try {
    await migrate(db);
    const clock = options.clock ?? (config.testClock ? new TestClock() : new SystemClock());
    if (clock instanceof TestClock) await loadClockOffset(db, clock);
    const rateLimiter = createRateLimiter(config.redisUrl);
    const tokens = new AccessTokenCache(db, clock);
    await tokens.start();
    const deps: Deps = {
      config,
      db,
      clock,
      secrets: new SecretBox(config.secret),
      jwt: new PlatformJwt(config.secret, config.siteUrl, clock),
      limiter: rateLimiter.limiter,
      attempts: rateLimiter.attempts,
      tiers: new TierCache(db, clock),
      tokens,
      jobs: new JobRegistry(),
      webhooks: new WebhookEngine({ db, clock, config, secrets: new SecretBox(config.secret) }),
    };
    registerJobs(deps);
    return {
      deps,
      async close() {
        await deps.jobs.drain();
        await flushMail();
        await deps.webhooks.close();
        await tokens.stop().catch(() => {});
        await rateLimiter.close().catch(() => {});
        await db.close();
      },
    };
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}
