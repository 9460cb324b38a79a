// Everything a process needs, opened in order and closed in reverse: database (migrated), clock,
// secrets, rate limiter, caches, the job registry, the root logger and the metrics registry.
// main.ts, the tests and the benchmark share it.
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
import { followClockOffset, loadClockOffset } from './platform/clock-store.js';
import { registerJobs } from './jobs/register-all.js';
import { flushMail } from './mail/mail.js';
import { WebhookEngine } from './webhooks/engine.js';
import { WebhookHttp } from './webhooks/http-client.js';
import { RATE_CONNECTIONS_PER_ORIGIN, RATE_REQUEST_TIMEOUT_MS, RateRequests } from './checkout/rate-requests.js';
import { RateMemo } from './checkout/rate-memo.js';
import { StoreConfigCache } from './checkout/store-config-cache.js';
import { RateCacheWriter } from './checkout/rate-cache-writer.js';
import { createLogger, type Logger } from './platform/logger.js';
import { Metrics } from './platform/metrics.js';
import { lazyFunctionRunner } from './functions/function-runner.js';
import { developerFunctionRunner } from './functions/developer-runs.js';
import { RunRecorder } from './functions/run-recorder.js';
import { checkSecret } from './platform/secret-check.js';

export interface RuntimeOptions {
  db?: Db;
  clock?: Clock;
  /** The root logger (main.ts makes it before anything else); default: one at config.logLevel. */
  log?: Logger;
  /**
   * The functions' run limit (C11.4: 50 ms, the default). The test harness gives the checkout's
   * functions more, so a test machine's load cannot fail a run the test did not mean to time out;
   * the limit itself is tested on the runtime directly (test/function-runtime.test.ts).
   */
  functionTimeoutMs?: number;
}

/** How long a start waits for Redis before going on (not ready until it connects; see /readyz). */
const REDIS_START_WAIT_MS = 1000;

export interface Runtime {
  deps: Deps;
  close(): Promise<void>;
}

export async function startRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = options.log ?? createLogger({ level: config.logLevel });
  const db = options.db ?? (await openDatabase(config));
  let clockSync: { stop(): Promise<void> } | null = null;
  try {
    await migrate(db);
    // One key derivation (HKDF) for the process: the check, the services and the webhook engine share it.
    const secrets = new SecretBox(config.secret);
    // C1.2: refused (a ConfigError naming SVC_SECRET) when this secret did not seal the database's data.
    await checkSecret(db, secrets, config);
    const clock = options.clock ?? (config.testClock ? new TestClock() : new SystemClock());
    if (clock instanceof TestClock) await loadClockOffset(db, clock);
    // A process's own test clock follows the offset the deployment's processes share; a clock the
    // caller brings (a test harness, which advances it itself) is the caller's to drive, and a
    // read every second would land among the statements its tests count.
    if (clock instanceof TestClock && !options.clock) clockSync = followClockOffset(db, clock);
    // Only processes that serve the App API use the shared rate-limit store; a worker neither
    // connects to Redis nor waits for it to be ready.
    const rateLimiter = createRateLimiter(config.role === 'worker' ? null : config.redisUrl, { log });
    const metrics = new Metrics();
    metrics.watchDatabase(db, clock, { dueDeliveries: config.role !== 'api' });
    const tokens = new AccessTokenCache(db, clock);
    await tokens.start();
    const deps: Deps = {
      config,
      db,
      clock,
      secrets,
      jwt: new PlatformJwt(config.secret, config.siteUrl, clock),
      limiter: rateLimiter.limiter,
      attempts: rateLimiter.attempts,
      tiers: new TierCache(db, clock),
      tokens,
      jobs: new JobRegistry(log, metrics),
      webhooks: new WebhookEngine({ db, clock, config, secrets, log, metrics }),
      rateHttp: new WebhookHttp(config.allowPrivateWebhooks, RATE_REQUEST_TIMEOUT_MS, RATE_CONNECTIONS_PER_ORIGIN),
      rateRequests: new RateRequests({ allowPrivate: config.allowPrivateWebhooks }, log),
      rateMemo: new RateMemo(),
      storeConfigs: new StoreConfigCache(),
      rateCacheWriter: new RateCacheWriter(db, log),
      functions: lazyFunctionRunner(options.functionTimeoutMs ? { timeoutMs: options.functionTimeoutMs } : {}),
      // Trying and replaying (C11.7) never run in the checkouts' pool above.
      developerFunctions: developerFunctionRunner(options.functionTimeoutMs ? { timeoutMs: options.functionTimeoutMs } : {}),
      runRecorder: new RunRecorder(db, log),
      log,
      metrics,
    };
    registerJobs(deps);
    metrics.watchFunctionPool(() => deps.functions.stats());
    metrics.watchFunctionPool(() => deps.developerFunctions.stats(), 'developer');
    await rateLimiter.connected(REDIS_START_WAIT_MS);
    return {
      deps,
      async close() {
        await deps.jobs.drain();
        await clockSync?.stop();
        await flushMail();
        await deps.webhooks.close();
        await deps.rateHttp.close();
        await deps.rateRequests.close();
        await deps.functions.close();
        await deps.developerFunctions.close();
        await deps.runRecorder.close();
        await deps.rateCacheWriter.close();
        await tokens.stop().catch(() => {});
        await rateLimiter.close().catch(() => {});
        await db.close();
      },
    };
  } catch (err) {
    await clockSync?.stop();
    await db.close().catch(() => {});
    throw err;
  }
}
