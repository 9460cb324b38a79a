// Every scheduled job keyed once per period in job_runs (design.md: several workers, or a restart,
// run one period once), swept as a class: each runs once per period whoever asks, records its end
// with what it processed, and an unfinished run left by a dead process is taken over after an hour.
// The shipping-rate purge never recorded its end, so its runs all looked like ones still going.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { runDaily } from '../src/billing/jobs.js';
import { runDailyDeadlines } from '../src/gdpr/gdpr.jobs.js';
import { runScheduledRetention } from '../src/webhooks/retention.js';
import { runHourlyRatePurge } from '../src/checkout/rate-cache.js';
import { dayPeriod, hourPeriod, STALE_RUN_MS } from '../src/jobs/period-runs.js';

// These jobs act on every store: on PostgreSQL the file has a database of its own.
let h: Harness;
beforeAll(async () => {
  h = await createWebhookHarness();
});
afterAll(() => h?.close());

const scheduled: { job: string; period: (now: Date) => string; run: () => Promise<boolean> }[] = [
  { job: 'billing-charges', period: dayPeriod, run: () => runDaily(h.deps, 'billing-charges') },
  { job: 'payout-sweep', period: dayPeriod, run: () => runDaily(h.deps, 'payout-sweep') },
  { job: 'gdpr-deadlines', period: dayPeriod, run: () => runDailyDeadlines(h.deps) },
  { job: 'webhook-retention', period: hourPeriod, run: () => runScheduledRetention(h.deps) },
  { job: 'shipping-rate-cache', period: hourPeriod, run: () => runHourlyRatePurge(h.deps) },
];

async function runRow(job: string, period: string) {
  const { rows } = await h.db.query<{ finished_at: unknown; processed: number | null }>(
    'SELECT finished_at, processed FROM job_runs WHERE job = $1 AND period_key = $2', [job, period],
  );
  return rows;
}

describe('scheduled jobs keyed per period in job_runs', () => {
  it.each(scheduled)('$job: once per period, its end recorded with what it processed', async ({ job, period, run }) => {
    await h.advance(2 * 86_400);
    const key = period(h.clock.now());
    expect(await Promise.all([run(), run()])).toEqual(expect.arrayContaining([true, false]));
    expect(await run()).toBe(false);
    const rows = await runRow(job, key);
    expect(rows).toHaveLength(1);
    expect(rows[0].finished_at).not.toBeNull();
    expect(typeof rows[0].processed).toBe('number');
  });

  it.each(scheduled)('$job: a run its dead process left unfinished is taken over after an hour, not before', async ({ job, period, run }) => {
    await h.advance(2 * 86_400);
    const key = period(h.clock.now());
    const now = h.clock.nowMs();
    // Claimed by a process that died at once, 59 minutes ago: still possibly running.
    await h.db.query('INSERT INTO job_runs (job, period_key, started_at) VALUES ($1, $2, $3)', [job, key, new Date(now - STALE_RUN_MS + 60_000)]);
    expect(await run()).toBe(false);
    expect((await runRow(job, key))[0].finished_at).toBeNull();
    // The same claim, now older than an hour: its process is taken for dead.
    await h.db.query('UPDATE job_runs SET started_at = $3 WHERE job = $1 AND period_key = $2', [job, key, new Date(now - STALE_RUN_MS - 1)]);
    expect(await run()).toBe(true);
    expect((await runRow(job, key))[0].finished_at).not.toBeNull();
  });
});
