-- Stripe does not deliver events in the order it makes them (C13). An event about a subscription
-- whose subscriptions/create has not arrived yet is held here, acknowledged, and emitted when the
-- create lands (src/payments/stripe.service.ts); the row goes in the same transaction.
CREATE TABLE stripe_held_events (
  event_id text PRIMARY KEY REFERENCES stripe_events (id),
  subscription_id text NOT NULL,
  -- Stripe's `created` (Unix seconds): held events are emitted in the order Stripe made them.
  event_created bigint,
  facts jsonb NOT NULL,
  received_at timestamptz NOT NULL
);
CREATE INDEX stripe_held_events_subscription_idx ON stripe_held_events (subscription_id);

-- Stripe's `created` of the newest event applied to the subscription: an older update or failed
-- charge arriving later is stale and does not take the subscription (or its apps) back.
ALTER TABLE payment_subscriptions ADD COLUMN last_event_created bigint;
