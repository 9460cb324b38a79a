// Billing and payout jobs: registered by name for C12.2 (on demand) and scheduled on workers.
// Scheduled runs of the daily jobs are keyed (job, UTC day) in job_runs, so however many worker
// processes tick, a day's run starts once; a run left unfinished by a dead process is taken over
// after an hour. Correctness never rests on that key: charges are keyed per installation and
// period, sweeps per developer and instant, payout claims are row locks.
import type { Deps } from '../deps.js';
import type { Scheduler } from '../jobs/scheduler.js';
import { runBillingCharges } from './charges.js';
import { dispatchPayouts, runPayoutSweep } from '../payouts/payouts.js';
import { utcDay } from './schedule.js';

const TICK_MS = 60_000;
const STALE_RUN_MS = 3600_000;

export function registerBillingJobs(deps: Deps): void {
  deps.jobs.register('billing-charges', () => runBillingCharges(deps));
  deps.jobs.register('payout-sweep', async () => ({ processed: (await runPayoutSweep(deps)).created }));
  deps.jobs.register('payout-dispatch', async () => {
    const { dispatched, failed } = await dispatchPayouts(deps);
    return { processed: dispatched + failed };
  });
}

/** Run `job` once for the current UTC day (service clock), whichever process gets there first. */
export async function runDaily(deps: Deps, job: string): Promise<boolean> {
  const now = deps.clock.now();
  const { rows } = await deps.db.query(
    `INSERT INTO job_runs (job, period_key, started_at) VALUES ($1, $2, $3)
     ON CONFLICT (job, period_key) DO UPDATE SET started_at = EXCLUDED.started_at
       WHERE job_runs.finished_at IS NULL AND job_runs.started_at < $4
     RETURNING 1`,
    [job, `day:${utcDay(now)}`, now, new Date(now.getTime() - STALE_RUN_MS)],
  );
  if (!rows.length) return false;
  const result = await deps.jobs.run(job);
  await deps.db.query('UPDATE job_runs SET finished_at = $3, processed = $4 WHERE job = $1 AND period_key = $2', [
    job, `day:${utcDay(now)}`, deps.clock.now(), result.processed,
  ]);
  return true;
}

/**
 * Charges run daily (the first tick of each UTC day); the sweep checks daily too, since every
 * sweep instant is 00:00 UTC of some day; the dispatcher polls every minute.
 */
export function scheduleBillingWorkers(deps: Deps, scheduler: Scheduler): void {
  scheduler.every('billing-charges', TICK_MS, () => runDaily(deps, 'billing-charges'));
  scheduler.every('payout-sweep', TICK_MS, () => runDaily(deps, 'payout-sweep'));
  scheduler.every('payout-dispatch', TICK_MS, () => deps.jobs.run('payout-dispatch'));
}
