// The webhook area's jobs: `webhook-deliveries` (C12.2: fan out and attempt every due delivery) and
// `webhook-retention` (C8.10), and what a worker process runs on its own.
import type { Deps } from '../deps.js';
import type { Scheduler } from '../jobs/scheduler.js';
import { applyRetention, runScheduledRetention } from './retention.js';

/** How often a worker looks for work without being woken (missed NOTIFY, retries coming due). */
export const DELIVERY_POLL_MS = 1000;

export function registerWebhookJobs(deps: Deps): void {
  deps.jobs.register('webhook-deliveries', async () => ({ processed: await deps.webhooks.runDue() }));
  deps.jobs.register('webhook-retention', async () => ({ processed: await applyRetention(deps) }));
}

export function scheduleWebhookWorkers(deps: Deps, scheduler: Scheduler): void {
  scheduler.every('webhook-deliveries', DELIVERY_POLL_MS, async () => {
    await deps.webhooks.start();
    deps.webhooks.poll();
  });
  scheduler.every('webhook-retention', 60_000, () => runScheduledRetention(deps));
}
