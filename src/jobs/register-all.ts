// Every area's background jobs, registered by name for C12.2 and the worker schedule. Later areas
// (webhook delivery, GDPR deadlines, billing, payouts) add theirs here.
import type { Deps } from '../deps.js';
import type { Scheduler } from './scheduler.js';
import { resendStaleMail } from '../mail/mail.js';
import { registerWebhookJobs, scheduleWebhookWorkers } from '../webhooks/jobs.js';
import { registerBillingJobs, scheduleBillingWorkers } from '../billing/jobs.js';
import { registerGdprJobs, scheduleGdprWorkers } from '../gdpr/gdpr.jobs.js';
import { registerCheckoutJobs, scheduleCheckoutWorkers } from '../checkout/checkout.jobs.js';
import { registerShippingRateJobs, scheduleShippingRateWorkers } from '../checkout/rate-cache.js';
import { registerStripeJobs, scheduleStripeWorkers } from '../payments/stripe.jobs.js';
import { registerUploadJobs, scheduleUploadWorkers } from '../catalog/uploads.jobs.js';

export function registerJobs(deps: Deps): void {
  registerWebhookJobs(deps);
  registerBillingJobs(deps);
  registerGdprJobs(deps);
  registerCheckoutJobs(deps);
  registerShippingRateJobs(deps);
  registerStripeJobs(deps);
  registerUploadJobs(deps);
}

/** What a `worker` (or `all`) process runs on its own, on a timer. */
export function scheduleWorkers(deps: Deps, scheduler: Scheduler): void {
  scheduleWebhookWorkers(deps, scheduler);
  scheduler.every('mail-recovery', 60_000, () => resendStaleMail(deps));
  scheduleBillingWorkers(deps, scheduler);
  scheduleGdprWorkers(deps, scheduler);
  scheduleCheckoutWorkers(deps, scheduler);
  scheduleShippingRateWorkers(deps, scheduler);
  scheduleStripeWorkers(deps, scheduler);
  scheduleUploadWorkers(deps, scheduler);
}
