// One service per test file, driven through `app.inject` (real routing, hooks and serialisation,
// no socket). Tests isolate themselves by creating their own stores, not databases.
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import { startRuntime, type Runtime } from '../../src/runtime.js';
import { buildApp } from '../../src/app.js';
import { openPGlite } from '../../src/db/pglite.js';
import { openPostgres } from '../../src/db/postgres.js';
import type { Db } from '../../src/db/db.js';
import type { Deps } from '../../src/deps.js';
import { TestClock } from '../../src/clock.js';
import { advanceClock } from '../../src/platform/clock-store.js';
import { WINDOW_MS, type RateLimiter } from '../../src/ratelimit/limiter.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { removeTempDir, tempDir } from './temp-dirs.js';
import { silentLogger, type Logger } from '../../src/platform/logger.js';

export const TEST_SECRET = 'test-secret-0123456789abcdefghijklmnop';

export interface Harness {
  app: FastifyInstance;
  deps: Deps;
  db: Db;
  clock: TestClock;
  config: Config;
  /** JSON request helper: `h.req('POST', '/x', { token, body })`. */
  req(method: string, url: string, opts?: { token?: string; body?: unknown; headers?: Record<string, string>; payload?: string }): Promise<LightMyRequestResponse & { json(): any }>;
  advance(seconds: number): Promise<void>;
  close(): Promise<void>;
}

export async function openTestDb(): Promise<Db> {
  const url = inject('testDatabaseUrl');
  if (url) return openPostgres(url, { max: 5 });
  const template = inject('pgliteTemplate');
  if (!template) throw new Error('global setup did not provide a database');
  return openPGlite({ loadDataDir: new Blob([readFileSync(template)]) });
}

export interface HarnessOptions {
  /**
   * Replaces the configured rate limiter (e.g. a MemoryRateLimiter on a hand-driven clock, so
   * rate-limit tests do not depend on how fast a loaded machine serves requests). Closed with the harness.
   */
  limiter?: RateLimiter;
  /** A database of the test's own instead of the run's shared one; closed with the harness. */
  db?: Db;
  /** Runs after the harness is closed (e.g. dropping the test's own database). */
  afterClose?: () => Promise<unknown>;
  /** The root logger (default: silent); a test that reads the logs passes one on a capture stream. */
  log?: Logger;
}

export async function createHarness(env: Record<string, string> = {}, options: HarnessOptions = {}): Promise<Harness> {
  // The data dir holds uploaded files only (the database is in memory); the harness removes its own.
  const ownDataDir = env.SVC_DATA_DIR ? null : tempDir('svc-test-data-');
  const config = loadConfig(
    {
      NODE_ENV: 'test',
      SVC_SECRET: TEST_SECRET,
      SVC_SEED: 'none',
      SVC_TEST_CLOCK: '1',
      ...(ownDataDir ? { SVC_DATA_DIR: ownDataDir } : {}),
      SVC_BASE_URL: 'http://svc.test',
      ...env,
    },
    { persistSecret: false },
  );
  const db = options.db ?? (await openTestDb());
  // Test files share one PostgreSQL database: each service keeps its own clock offset.
  const clock = new TestClock(`test_clock_${randomUUID()}`);
  // Functions get 1 s rather than C11.4's 50 ms: a loaded test machine must not time out a run a
  // test did not mean to (the limit itself: test/function-runtime.test.ts).
  const runtime: Runtime = await startRuntime(config, { db, clock, log: options.log ?? silentLogger(), functionTimeoutMs: 1000 });
  if (options.limiter) runtime.deps.limiter = options.limiter;
  const app = await buildApp(runtime.deps, { docsUi: false, checkResponses: true });
  await app.ready();
  return {
    app,
    deps: runtime.deps,
    db,
    clock,
    config,
    async req(method, url, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let payload: string | undefined = opts.payload;
      if (opts.body !== undefined) {
        payload = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await app.inject({ method: method as any, url, headers, payload });
      return res as any;
    },
    advance: (seconds) => advanceClock(db, clock, seconds),
    async close() {
      await app.close();
      await runtime.close();
      await options.limiter?.close();
      await options.afterClose?.();
      if (ownDataDir) removeTempDir(ownDataDir);
    },
  };
}

/**
 * A rate limiter whose clock moves one window on at every request, so no test using it is ever limited
 * however many calls it makes (the limit itself is tested in app-api.test.ts); the headers still come.
 */
export function unlimitedLimiter(): MemoryRateLimiter {
  let t = Date.now();
  return new MemoryRateLimiter({ now: () => (t += WINDOW_MS) });
}

/** The harness's app on a loopback port, for clients that speak real HTTP (the app SDK); its base URL. */
export async function listenOnLoopback(h: Harness): Promise<string> {
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(h.app.server.address() as import('node:net').AddressInfo).port}`;
}
