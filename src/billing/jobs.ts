// Billing and payout jobs: registered by name for C12.2 (on demand) and scheduled on workers.
// Scheduled runs of the daily jobs are keyed (job, UTC day) in job_runs, so however many worker
// processes tick, a day's run starts once; a run left unfinished by a dead process is taken over
// after an hour. Correctness never rests on that key: charges are keyed per installation and
// period, sweeps per developer and instant, payout claims are row locks.
import type { Deps } from '../deps.js';
import type { Scheduler } from '../jobs/scheduler.js';
import { runBillingCharges } from './charges.js';
import { dispatchPayouts, runPayoutSweep } from '../payouts/payouts.js';
import { dayPeriod, runOncePerPeriod } from '../jobs/period-runs.js';

const TICK_MS = 60_000;

export function registerBillingJobs(deps: Deps): void {
  deps.jobs.register('billing-charges', () => runBillingCharges(deps));
  deps.jobs.register('payout-sweep', async () => ({ processed: (await runPayoutSweep(deps)).created }));
  deps.jobs.register('payout-dispatch', async () => {
    const { dispatched, failed } = await dispatchPayouts(deps);
    return { processed: dispatched + failed };
  });
}

/** Run `job` once for the current UTC day (service clock), whichever process gets there first. */
export function runDaily(deps: Deps, job: string): Promise<boolean> {
  return runOncePerPeriod(deps, job, dayPeriod(deps.clock.now()), async () => (await deps.jobs.run(job)).processed);
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
