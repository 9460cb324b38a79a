// Stripe events held for a create that never came (stripe.service.ts holds an event about a
// subscription whose first `invoice.paid` has not arrived) are purged 30 days after they arrived:
// Stripe stops retrying an event after three days, so a create that has not landed in 30 never will
// (the subscription never started), and the held rows keep a customer's email. Hourly on a worker
// and on demand through C12.2 (`stripe-held-purge`); idempotent, so two workers may both run it.
import type { Deps } from '../deps.js';
import type { Scheduler } from '../jobs/scheduler.js';

export const STRIPE_HELD_PURGE_JOB = 'stripe-held-purge';
export const HELD_EVENT_RETENTION_MS = 30 * 24 * 3600_000;

export async function purgeHeldStripeEvents(deps: Pick<Deps, 'db' | 'clock'>): Promise<{ processed: number }> {
  const before = new Date(deps.clock.now().getTime() - HELD_EVENT_RETENTION_MS);
  const { rowCount } = await deps.db.query('DELETE FROM stripe_held_events WHERE received_at < $1', [before]);
  return { processed: rowCount ?? 0 };
}

export function registerStripeJobs(deps: Deps): void {
  deps.jobs.register(STRIPE_HELD_PURGE_JOB, () => purgeHeldStripeEvents(deps));
}

export function scheduleStripeWorkers(deps: Deps, scheduler: Scheduler): void {
  scheduler.every(STRIPE_HELD_PURGE_JOB, 3600_000, () => deps.jobs.run(STRIPE_HELD_PURGE_JOB));
}
