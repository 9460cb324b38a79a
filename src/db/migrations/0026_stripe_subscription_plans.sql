-- C14.15: a subscription's plan (price nickname or product name, billing interval and count, trial end) as its
-- own Stripe events (customer.subscription.created, .updated, .deleted) last said it. Invoices of
-- Stripe API 2025-03-31.basil and later name their price by id only, so the subscription topics
-- emitted from an invoice take these facts from here (src/payments/stripe.service.ts). Kept apart
-- from payment_subscriptions, whose row means that subscriptions/create was emitted.
CREATE TABLE stripe_subscription_plans (
  subscription_id text PRIMARY KEY,
  plan_name text,
  billing_interval text,
  billing_interval_count integer,
  -- app-api.md Subscription payload `trialEnd` (Unix seconds; null: no trial), which no invoice
  -- carries: subscriptions/create, emitted from the first invoice, takes it from here.
  trial_end bigint,
  -- Stripe's `created` (Unix seconds) of the event that said it: an older event never overwrites.
  event_created bigint,
  updated_at timestamptz NOT NULL
);
