-- Declarative functions (C11): what apps declare, what each store runs, and every run.

-- C11.1: the functions of an app's manifest (`extensions.functions`), kept in step with it on every
-- create and update, in declared order (`position`). A function the manifest no longer names is
-- deleted, and with it its activations (C11.1: a change takes effect on every store at once).
CREATE TABLE app_functions (
  id uuid PRIMARY KEY,
  app_id uuid NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  handle text NOT NULL,
  target text NOT NULL,
  title text,
  expression text NOT NULL,
  -- the manifest's configuration: what a store runs with until its merchant sets one
  configuration jsonb NOT NULL DEFAULT '{}',
  position integer NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (app_id, handle)
);

-- C11.2: an app function on one store. Its id is the `functionId` of the merchant routes and of
-- run records. Kept when the app is uninstalled (`active` false) so that it stays listed and a
-- reinstall activates it again; `activated_at` orders the active functions of a target.
CREATE TABLE store_functions (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  app_function_id uuid NOT NULL REFERENCES app_functions (id) ON DELETE CASCADE,
  active boolean NOT NULL,
  -- the merchant's configuration; null: the manifest's
  configuration jsonb,
  activated_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (store_id, app_function_id)
);
CREATE INDEX store_functions_active_idx ON store_functions (store_id, activated_at, id) WHERE active;

-- C11.5: every run at a checkout. Kept as long as webhook delivery bodies
-- (SVC_DELIVERY_RETENTION_DAYS). The checkout's token is a bearer secret: it is stored sealed
-- (`checkout_token_enc`, like a client secret), and the stored input holds everything else.
CREATE TABLE function_runs (
  id uuid PRIMARY KEY,
  app_id uuid NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  store_id uuid NOT NULL REFERENCES stores (id),
  function_id uuid NOT NULL,
  function_handle text NOT NULL,
  target text NOT NULL,
  status text NOT NULL CHECK (status IN ('success', 'failure')),
  error_type text,
  error_message text,
  input jsonb,
  input_bytes integer NOT NULL,
  output jsonb,
  output_bytes integer NOT NULL,
  duration_ms double precision NOT NULL,
  checkout_id uuid,
  checkout_token_enc text,
  created_at timestamptz NOT NULL
);
CREATE INDEX function_runs_app_idx ON function_runs (app_id, created_at DESC, id DESC);
CREATE INDEX function_runs_checkout_idx ON function_runs (checkout_id);
CREATE INDEX function_runs_age_idx ON function_runs (created_at);
