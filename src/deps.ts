// What every part of the service is handed at start (design.md: nothing reads process.env or the
// wall clock on its own).
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Clock } from './clock.js';
import type { Db } from './db/db.js';
import type { SecretBox } from './crypto.js';
import type { PlatformJwt } from './accounts/jwt.js';
import type { RateLimiter } from './ratelimit/limiter.js';
import type { AttemptStore } from './ratelimit/attempts.js';
import type { AccessTokenCache } from './oauth/token-cache.js';
import type { JobRegistry } from './jobs/registry.js';
import type { TierCache } from './ratelimit/tier-cache.js';
import type { WebhookEngine } from './webhooks/engine.js';
import type { WebhookHttp } from './webhooks/http-client.js';
import type { Metrics } from './platform/metrics.js';
import type { FunctionRunner } from './functions/runtime/index.js';
import type { RateMemo } from './checkout/rate-memo.js';
import type { RateRequests } from './checkout/rate-requests.js';
import type { StoreConfigCache } from './checkout/store-config-cache.js';
import type { RunRecorder } from './functions/run-recorder.js';
import type { DeveloperFunctionRunner } from './functions/developer-runs.js';
import type { RateCacheWriter } from './checkout/rate-cache-writer.js';

export interface Deps {
  config: Config;
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  jwt: PlatformJwt;
  limiter: RateLimiter;
  /** Counters of failed attempts (login throttling), shared through Redis like `limiter`. */
  attempts: AttemptStore;
  tiers: TierCache;
  tokens: AccessTokenCache;
  jobs: JobRegistry;
  /** Webhook fan-out and delivery, with its pooled outbound HTTP client. */
  webhooks: WebhookEngine;
  /**
   * The pooled client for the developer's rate test (C15.3, src/checkout/rate-test.ts): a pool of
   * its own, never behind webhook deliveries to the same host, with C15.3's 5-second deadline.
   */
  rateHttp: WebhookHttp;
  /** Checkouts' rate requests to shipping apps, on a thread of their own with its own such pool (C15.3, src/checkout/rate-requests.ts). */
  rateRequests: RateRequests;
  /** Evaluates functions (C11) in a pool of worker threads, started on first use (src/functions/function-runner.ts). */
  functions: FunctionRunner;
  /**
   * Developers' runs (C11.7: trying, replaying) in a pool of their own, one thread started on first
   * use, bounded per app (src/functions/developer-runs.ts): they never take the checkouts' workers.
   */
  developerFunctions: DeveloperFunctionRunner;
  /** Writes function run records (C11.5) in batches, behind the checkout (src/functions/run-recorder.ts). */
  runRecorder: RunRecorder;
  /** This process's memory of shipping apps' cached rate answers, in front of the shared table (C15.3). */
  rateMemo: RateMemo;
  /** This process's copies of stores' zones, shipping apps, address and functions, as of their version (src/checkout/store-config-cache.ts). */
  storeConfigs: StoreConfigCache;
  /** Writes fresh rate answers to the shared cache table in batches, behind the quote (src/checkout/rate-cache-writer.ts). */
  rateCacheWriter: RateCacheWriter;
  /** The process's root logger (src/platform/logger.ts); silent in tests unless a test listens. */
  log: Logger;
  /** The process's metrics registry, served at /metrics (src/platform/metrics.ts). */
  metrics: Metrics;
}
