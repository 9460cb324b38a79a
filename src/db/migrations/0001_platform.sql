-- Platform core: accounts, stores, apps, installations, OAuth grants and tokens, the event outbox,
-- scheduled job runs and small platform settings. Ids are UUID v7 made by the service (C5.3).

CREATE TABLE users (
  id uuid PRIMARY KEY,
  email text NOT NULL,
  name text NOT NULL,
  role text NOT NULL CHECK (role IN ('MERCHANT', 'PARTNER', 'STAFF_ADMIN', 'MANAGER', 'SUPER_ADMIN')),
  password_hash text NOT NULL,
  store_id uuid,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE stores (
  id uuid PRIMARY KEY,
  business text NOT NULL,
  slug text NOT NULL UNIQUE,
  email text NOT NULL,
  owner_id uuid NOT NULL REFERENCES users (id),
  currency text NOT NULL DEFAULT 'USD',
  next_order_number integer NOT NULL DEFAULT 1001,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
ALTER TABLE users ADD CONSTRAINT users_store_fk FOREIGN KEY (store_id) REFERENCES stores (id);

CREATE TABLE apps (
  id uuid PRIMARY KEY,
  developer_id uuid NOT NULL REFERENCES users (id),
  name text NOT NULL,
  handle text NOT NULL UNIQUE,
  client_id text NOT NULL UNIQUE,
  -- AES-256-GCM with a key derived from SVC_SECRET: the secret must be readable to sign webhooks
  -- and session tokens, so it is encrypted rather than hashed.
  client_secret_enc text NOT NULL,
  app_url text NOT NULL,
  redirect_urls jsonb NOT NULL DEFAULT '[]',
  scopes jsonb NOT NULL,
  tier text NOT NULL DEFAULT 'free' CHECK (tier IN ('free', 'basic', 'pro', 'enterprise')),
  gdpr_urls jsonb,
  extensions jsonb NOT NULL DEFAULT '{}',
  pricing jsonb NOT NULL DEFAULT '{"type":"free"}',
  version text NOT NULL DEFAULT '1.0.0',
  rating numeric(3, 2) NOT NULL DEFAULT 0,
  review_count integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX apps_developer_idx ON apps (developer_id, created_at DESC);

CREATE TABLE installations (
  id uuid PRIMARY KEY,
  app_id uuid NOT NULL REFERENCES apps (id),
  store_id uuid NOT NULL REFERENCES stores (id),
  -- pending: authorised, code not yet exchanged; active; pending_uninstall (C10.1); uninstalled
  status text NOT NULL CHECK (status IN ('pending', 'active', 'pending_uninstall', 'uninstalled')),
  scopes jsonb NOT NULL,
  billing_status text NOT NULL DEFAULT 'none',
  installed_version text NOT NULL,
  auto_update boolean NOT NULL DEFAULT true,
  pinned_version text,
  billing_start_date timestamptz,
  trial_ends_at timestamptz,
  uninstalled_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (app_id, store_id)
);
CREATE INDEX installations_store_idx ON installations (store_id);

-- One authorisation of an app by a merchant. Refresh tokens die with the grant 30 days after it
-- (C4.5); revoking the grant revokes every token issued under it.
CREATE TABLE oauth_grants (
  id uuid PRIMARY KEY,
  installation_id uuid NOT NULL REFERENCES installations (id),
  scopes jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX oauth_grants_installation_idx ON oauth_grants (installation_id);

CREATE TABLE oauth_codes (
  code_hash text PRIMARY KEY,
  installation_id uuid NOT NULL REFERENCES installations (id),
  state text NOT NULL,
  scopes jsonb NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  grant_id uuid REFERENCES oauth_grants (id),
  created_at timestamptz NOT NULL
);

CREATE TABLE access_tokens (
  token_hash text PRIMARY KEY,
  grant_id uuid NOT NULL REFERENCES oauth_grants (id),
  installation_id uuid NOT NULL REFERENCES installations (id),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX access_tokens_grant_idx ON access_tokens (grant_id);

CREATE TABLE refresh_tokens (
  token_hash text PRIMARY KEY,
  grant_id uuid NOT NULL REFERENCES oauth_grants (id),
  installation_id uuid NOT NULL REFERENCES installations (id),
  expires_at timestamptz NOT NULL,
  rotated_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX refresh_tokens_grant_idx ON refresh_tokens (grant_id);

-- Transactional outbox (C8.1): written in the transaction of the change that causes the event.
CREATE TABLE events (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  topic text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  -- set once the webhook fan-out has turned the event into deliveries
  fanned_out_at timestamptz
);
CREATE INDEX events_pending_idx ON events (created_at) WHERE fanned_out_at IS NULL;
CREATE INDEX events_store_idx ON events (store_id, created_at);

-- A scheduled job records each period it ran under a unique key, so that two worker processes or
-- a restart never run one period twice (design.md).
CREATE TABLE job_runs (
  job text NOT NULL,
  period_key text NOT NULL,
  started_at timestamptz NOT NULL,
  finished_at timestamptz,
  processed integer,
  PRIMARY KEY (job, period_key)
);

CREATE TABLE platform_settings (
  key text PRIMARY KEY,
  value jsonb NOT NULL
);
