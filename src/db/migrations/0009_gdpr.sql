-- GDPR compliance workflows (issue 6; app-api.md GDPR request, C9) and merchant notifications (C9.5).

-- One privacy request of a store. `payload` is the exact webhook body (JSON text): the same bytes go
-- out on the first dispatch, the final notice and the reminders.
CREATE TABLE gdpr_requests (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  request_type text NOT NULL CHECK (request_type IN ('data_request', 'customer_redact', 'shop_redact')),
  status text NOT NULL CHECK (status IN ('pending', 'dispatched', 'acknowledged', 'completed', 'failed')),
  -- not a foreign key: the customer may be deleted, the request (a compliance record) stays
  customer_id uuid,
  customer_email text,
  customer_phone text,
  metadata jsonb NOT NULL DEFAULT '{}',
  -- customers/redact: the customer's orders when the request was made (`orders_to_redact`)
  order_ids jsonb NOT NULL DEFAULT '[]',
  topic text NOT NULL,
  payload text NOT NULL,
  requested_by uuid REFERENCES users (id),
  -- the latest `dataExportUrl` an app gave on complete
  data_export_url text,
  requested_at timestamptz NOT NULL,
  acknowledge_deadline timestamptz NOT NULL,
  completion_deadline timestamptz NOT NULL,
  dispatched_at timestamptz,
  completed_at timestamptz,
  failed_at timestamptz,
  -- customers/redact: when the platform erased its own copy of the customer's personal data
  redacted_at timestamptz,
  updated_at timestamptz NOT NULL
);
CREATE INDEX gdpr_requests_store_idx ON gdpr_requests (store_id, requested_at DESC, id DESC);
-- the dispatch recovery looks for requests whose dispatch never finished
CREATE INDEX gdpr_requests_pending_idx ON gdpr_requests (requested_at) WHERE status = 'pending';

-- Per-app state of a request: one row per app actively installed when the request was made.
CREATE TABLE gdpr_request_apps (
  request_id uuid NOT NULL REFERENCES gdpr_requests (id),
  app_id uuid NOT NULL REFERENCES apps (id),
  installation_id uuid NOT NULL REFERENCES installations (id),
  status text NOT NULL CHECK (status IN ('pending', 'acknowledged', 'completed', 'failed')),
  acknowledged_at timestamptz,
  completed_at timestamptz,
  failed_at timestamptz,
  error_message text,
  data_export_url text,
  final_notice_at timestamptz,
  -- UTC day (YYYY-MM-DD) of the latest reminder: at most one per request, app and day (C14.11)
  last_reminder_day text,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (request_id, app_id)
);
-- the deadline job reads only the apps that still owe something
CREATE INDEX gdpr_request_apps_open_idx ON gdpr_request_apps (request_id) WHERE status IN ('pending', 'acknowledged');

-- Which webhook deliveries a request caused, and why (first dispatch, final notice, reminder).
CREATE TABLE gdpr_request_deliveries (
  delivery_id uuid PRIMARY KEY,
  request_id uuid NOT NULL REFERENCES gdpr_requests (id),
  app_id uuid NOT NULL REFERENCES apps (id),
  kind text NOT NULL CHECK (kind IN ('initial', 'final_notice', 'reminder')),
  created_at timestamptz NOT NULL
);
CREATE INDEX gdpr_request_deliveries_request_idx ON gdpr_request_deliveries (request_id, created_at);

-- Merchant notifications (C9.5, `GET /notifications`).
CREATE TABLE notifications (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  type text NOT NULL,
  title text NOT NULL,
  message text NOT NULL,
  data jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL
);
CREATE INDEX notifications_store_idx ON notifications (store_id, created_at DESC, id DESC);
