// The cache of shipping rate requests (C15.3): the same body bytes to the same app are answered
// from here for 15 minutes after a 2xx and 30 seconds after a failure, on the service clock (so
// the test clock moves it). In the database, shared by every api process; written behind the
// quote in batches (rate-cache-writer.ts); expired rows are removed by the `shipping-rate-cache` job.
import type { Db } from '../db/db.js';
import type { Deps } from '../deps.js';
import type { Scheduler } from '../jobs/scheduler.js';
import { hourPeriod, runOncePerPeriod } from '../jobs/period-runs.js';
import type { AppRate } from './rate-reply.js';
import type { MemoAnswer } from './rate-memo.js';

export const CACHE_AFTER_SUCCESS_MS = 15 * 60_000;
export const CACHE_AFTER_FAILURE_MS = 30_000;
const PURGE_BATCH = 5000;

/**
 * Exported for the test of its plan (test/checkout-quote.test.ts): by the key's leading hash, whatever
 * the plan. Its only conditions are the key's: expiry is checked by the caller (`liveAnswers`), because
 * with an expiry condition a generic plan made on stale statistics ANDed the key's index with the
 * expiry index, whose range is every live answer.
 */
export const CACHED_ANSWERS_SQL = `SELECT app_id, rates_url, rates, expires_at FROM shipping_rate_cache
      WHERE body_sha256 = $2 AND app_id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid)`;

/** A row of the table as read: by `cachedAnswers`, or with a checkout (checkouts.repo.ts `findCheckoutForQuote`). */
export interface StoredAnswerRow {
  app_id: string;
  rates_url: string;
  rates: AppRate[];
  /** A Date from the drivers, ISO text from JSON. */
  expires_at: Date | string;
}

/**
 * The shared cache's answers to one body, read with the checkout: the body its last change would
 * send (`checkouts.rate_body_sha256`). They stand for a quote whose body hashes the same, in place
 * of `cachedAnswers`: a quote of an unchanged checkout asks the database once.
 */
export interface AnswersReadWithCheckout {
  bodySha256: string;
  rows: StoredAnswerRow[];
}

/** The rows' answers still live at `nowMs` (service clock), by app. */
export function liveAnswers(rows: readonly StoredAnswerRow[], nowMs: number): Map<string, MemoAnswer> {
  const live = new Map<string, MemoAnswer>();
  for (const r of rows) {
    const expiresMs = new Date(r.expires_at).getTime();
    if (expiresMs > nowMs) live.set(r.app_id, { ratesUrl: r.rates_url, rates: r.rates, expiresMs });
  }
  return live;
}

/**
 * The live cached answers to this body, by app: one query for every app of a quote. An answer
 * from another ratesUrl than the app's current one does not count (the caller checks `ratesUrl`).
 */
export async function cachedAnswers(deps: Pick<Deps, 'db' | 'clock'>, appIds: string[], bodySha256: string): Promise<Map<string, MemoAnswer>> {
  const { rows } = await deps.db.query<StoredAnswerRow>(
    CACHED_ANSWERS_SQL,
    // A list travels as JSON text: the one form both drivers' named statements take.
    [JSON.stringify(appIds), bodySha256],
    { name: 'shipping_rate_cache_lookup' },
  );
  return liveAnswers(rows, deps.clock.nowMs());
}

/** When an answer given now expires: `ok` (the app answered 2xx) 15 minutes, otherwise 30 seconds. */
export const answerExpiresMs = (nowMs: number, ok: boolean) => nowMs + (ok ? CACHE_AFTER_SUCCESS_MS : CACHE_AFTER_FAILURE_MS);

/** One app's answer to a body, to be cached until `expiresMs` (service clock; `answerExpiresMs`). */
export interface FreshAnswer {
  appId: string;
  ratesUrl: string;
  /** The app answered 2xx (its rates, none when malformed); otherwise a failure, with no rates. */
  ok: boolean;
  rates: AppRate[];
  expiresMs: number;
}

/** A fresh answer with its body's hash: one row of the table. */
export interface CachedAnswerRow extends FreshAnswer {
  bodySha256: string;
}

/**
 * Answers of any number of quotes, in one statement (rate-cache-writer.ts gathers them). The rows
 * must have distinct (body, app) keys: ON CONFLICT cannot touch one row twice in a statement.
 */
export async function cacheAnswers(db: Db, rows: readonly CachedAnswerRow[]): Promise<void> {
  if (!rows.length) return;
  await db.query(
    `INSERT INTO shipping_rate_cache (app_id, body_sha256, rates_url, ok, rates, expires_at)
     SELECT x.app_id, x.body_sha256, x.rates_url, x.ok, x.rates, x.expires_at
       FROM jsonb_to_recordset($1::jsonb) AS x(app_id uuid, body_sha256 text, rates_url text, ok boolean, rates jsonb, expires_at timestamptz)
     ON CONFLICT (app_id, body_sha256) DO UPDATE SET rates_url = EXCLUDED.rates_url, ok = EXCLUDED.ok, rates = EXCLUDED.rates, expires_at = EXCLUDED.expires_at`,
    // A list travels as JSON text: the one form both drivers' named statements take.
    [JSON.stringify(rows.map((a) => ({ app_id: a.appId, body_sha256: a.bodySha256, rates_url: a.ratesUrl, ok: a.ok, rates: a.rates, expires_at: new Date(a.expiresMs).toISOString() })))],
    { name: 'shipping_rate_cache_put_many' },
  );
}

/** Delete expired answers in short batches (PGlite runs one transaction at a time); how many. */
export async function purgeExpiredRates(deps: Pick<Deps, 'db' | 'clock'>): Promise<number> {
  const now = deps.clock.now();
  let purged = 0;
  for (;;) {
    const { rowCount } = await deps.db.query(
      `DELETE FROM shipping_rate_cache WHERE (app_id, body_sha256) IN
         (SELECT app_id, body_sha256 FROM shipping_rate_cache WHERE expires_at <= $1 LIMIT $2::int)`,
      [now, PURGE_BATCH],
    );
    purged += rowCount;
    if (rowCount < PURGE_BATCH) return purged;
  }
}

export function registerShippingRateJobs(deps: Deps): void {
  deps.jobs.register('shipping-rate-cache', async () => ({ processed: await purgeExpiredRates(deps) }));
}

/**
 * Once per UTC hour of the service clock, recorded in job_runs so several workers, or a restart,
 * purge one hour once (design.md). Expired rows are never read, so an hour's delay costs only space.
 */
export function runHourlyRatePurge(deps: Deps): Promise<boolean> {
  return runOncePerPeriod(deps, 'shipping-rate-cache', hourPeriod(deps.clock.now()), async () => (await deps.jobs.run('shipping-rate-cache')).processed);
}

export function scheduleShippingRateWorkers(deps: Deps, scheduler: Scheduler): void {
  scheduler.every('shipping-rate-cache', 60_000, () => runHourlyRatePurge(deps));
}
