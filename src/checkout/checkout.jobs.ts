// Abandoned checkouts are purged 30 days after their last change (issue 12): they hold a buyer's
// email and address, and nothing can be done with them after their 24-hour lifetime. Completed
// checkouts stay, as the record of which checkout made which order. The job runs hourly on a
// worker and on demand through C12.2 (`checkout-purge`); it is idempotent, so two workers may both run it.
import type { Deps } from '../deps.js';
import type { Scheduler } from '../jobs/scheduler.js';
import { purgeAbandonedCheckouts } from './checkouts.repo.js';

export const CHECKOUT_PURGE_JOB = 'checkout-purge';
export const ABANDONED_CHECKOUT_RETENTION_MS = 30 * 24 * 3600_000;

export async function purgeCheckouts(deps: Pick<Deps, 'db' | 'clock'>): Promise<{ processed: number }> {
  const before = new Date(deps.clock.now().getTime() - ABANDONED_CHECKOUT_RETENTION_MS);
  return { processed: await purgeAbandonedCheckouts(deps.db, before) };
}

export function registerCheckoutJobs(deps: Deps): void {
  deps.jobs.register(CHECKOUT_PURGE_JOB, () => purgeCheckouts(deps));
}

export function scheduleCheckoutWorkers(deps: Deps, scheduler: Scheduler): void {
  scheduler.every(CHECKOUT_PURGE_JOB, 3600_000, () => deps.jobs.run(CHECKOUT_PURGE_JOB));
}
