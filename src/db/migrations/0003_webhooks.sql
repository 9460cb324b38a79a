-- Webhooks (C6.4, C6.5, C8) and payment-processor events (C13). The delivery row is the queue
-- (design.md): workers claim due rows with FOR UPDATE SKIP LOCKED and a lease, send outside any
-- transaction, and record the attempt afterwards only while they still hold the lease.

-- App subscriptions made through POST /api/v1/webhooks.json. The secret signs deliveries, so it is
-- sealed (readable again), like app client secrets.
CREATE TABLE webhook_subscriptions (
  id uuid PRIMARY KEY,
  installation_id uuid NOT NULL REFERENCES installations (id),
  app_id uuid NOT NULL REFERENCES apps (id),
  store_id uuid NOT NULL REFERENCES stores (id),
  topic text NOT NULL,
  address text NOT NULL,
  secret_enc text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  api_version text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (installation_id, topic, address)
);
CREATE INDEX webhook_subscriptions_fanout_idx ON webhook_subscriptions (store_id, topic) WHERE enabled;

-- Store-level webhooks made by the merchant (C6.5); the secret is shown in the admin, so sealed too.
CREATE TABLE store_webhooks (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  topic text NOT NULL,
  address text NOT NULL,
  secret_enc text NOT NULL,
  created_by uuid REFERENCES users (id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (store_id, topic, address)
);
CREATE INDEX store_webhooks_fanout_idx ON store_webhooks (store_id, topic);

CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  -- X-SVC-Webhook-Id: the same on every attempt and redelivery (C8.2, C14.10)
  webhook_id uuid NOT NULL UNIQUE,
  source text NOT NULL CHECK (source IN ('subscription', 'manifest', 'gdpr', 'store')),
  event_id uuid REFERENCES events (id),
  app_id uuid REFERENCES apps (id),
  store_id uuid NOT NULL REFERENCES stores (id),
  subscription_id uuid,
  store_webhook_id uuid,
  topic text NOT NULL,
  address text NOT NULL,
  -- host:port of the address: claims spread work across hosts (one slow endpoint cannot starve others)
  target_host text NOT NULL,
  -- fixed at creation: the exact bytes sent and every header but X-SVC-Delivery-Attempt (C8.2)
  request_headers jsonb NOT NULL,
  request_body text,
  status text NOT NULL CHECK (status IN ('pending', 'retrying', 'success', 'failed')),
  attempt_count integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL,
  -- on the service clock (C12.1), so the test clock moves retries
  next_attempt_at timestamptz,
  -- on the database's own clock: advancing the test clock never makes an in-flight lease look expired
  lease_until timestamptz,
  lease_token uuid,
  response_status integer,
  response_body text,
  last_error text,
  bodies_pruned_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) INCLUDE (target_host) WHERE status IN ('pending', 'retrying');
CREATE INDEX webhook_deliveries_app_idx ON webhook_deliveries (app_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_retention_idx ON webhook_deliveries (created_at) WHERE bodies_pruned_at IS NULL;

-- Attempt history; the primary key makes "one attempt is made once" (C1.3) a constraint.
CREATE TABLE webhook_attempts (
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id),
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  response_status integer,
  error text,
  PRIMARY KEY (delivery_id, attempt)
);

-- Payment-processor events already handled (C13.3: a repeated event id emits nothing again).
CREATE TABLE stripe_events (
  id text PRIMARY KEY,
  type text NOT NULL,
  subscription_id text,
  topic text,
  received_at timestamptz NOT NULL
);

-- What we know of each processor subscription: a subscription ends with subscriptions/cancelled
-- and nothing is emitted for it afterwards (C13.3); later events may lack fields earlier ones had.
CREATE TABLE payment_subscriptions (
  id text PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  order_id text,
  customer_email text,
  invoice_number text,
  trial_end bigint,
  cancelled_at timestamptz,
  updated_at timestamptz NOT NULL
);
