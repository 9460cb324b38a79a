-- App billing, the developer ledger and payouts (C10), and app reviews (C10.8). Money is integer
-- minor units (bigint); the ledger is in USD cents. The ledger is append-only and every journal
-- entry balances, checked by the database itself (deferred constraint triggers below).

-- A developer's payout settings. The row is also the per-developer lock that every ledger write
-- of that developer takes first (SELECT ... FOR UPDATE), so a sweep sees a consistent balance.
CREATE TABLE developer_accounts (
  developer_id uuid PRIMARY KEY REFERENCES users (id),
  payout_schedule text NOT NULL DEFAULT 'monthly' CHECK (payout_schedule IN ('monthly', 'fortnightly', 'weekly')),
  minimum_payout_cents bigint NOT NULL DEFAULT 2500 CHECK (minimum_payout_cents >= 0),
  -- null: the platform rate (SVC_COMMISSION_RATE)
  commission_rate numeric CHECK (commission_rate >= 0 AND commission_rate <= 1),
  -- { type: "paypal", email } or { type: "bank", accountHolder, routingNumber, accountNumberEnc, accountLast4 }
  payout_method jsonb,
  payout_method_updated_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX developer_accounts_with_method_idx ON developer_accounts (developer_id) WHERE payout_method IS NOT NULL;

CREATE TABLE payouts (
  id uuid PRIMARY KEY,
  developer_id uuid NOT NULL REFERENCES users (id),
  amount_cents bigint NOT NULL CHECK (amount_cents > 0),
  currency text NOT NULL DEFAULT 'USD',
  status text NOT NULL CHECK (status IN ('pending', 'processing', 'in_transit', 'paid', 'failed')),
  payout_method_type text NOT NULL CHECK (payout_method_type IN ('bank', 'paypal')),
  -- snapshot of the method at sweep time (bank account number encrypted, as in developer_accounts)
  payout_method jsonb NOT NULL,
  external_reference text,
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL,
  failure_reason text,
  paid_at timestamptz,
  -- the sweep instant it was created for, or null for an out-of-cycle (forced) sweep
  sweep_instant timestamptz,
  -- dispatcher lease: set when claimed; `attempts` fences a stale claim's late write
  claimed_at timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX payouts_developer_idx ON payouts (developer_id, created_at DESC, id DESC);
CREATE INDEX payouts_dispatch_idx ON payouts (created_at, id) WHERE status IN ('pending', 'processing');

-- One charge of one installation for one billing period (C10.2). The unique key is what makes the
-- billing job idempotent per installation and period: the row is inserted (status pending) before
-- the provider is called, and only the inserting run calls it.
CREATE TABLE app_transactions (
  id uuid PRIMARY KEY,
  installation_id uuid NOT NULL REFERENCES installations (id),
  app_id uuid NOT NULL REFERENCES apps (id),
  store_id uuid NOT NULL REFERENCES stores (id),
  developer_id uuid NOT NULL REFERENCES users (id),
  amount_cents bigint NOT NULL CHECK (amount_cents > 0),
  currency text NOT NULL,
  commission_rate numeric NOT NULL CHECK (commission_rate >= 0 AND commission_rate <= 1),
  commission_cents bigint NOT NULL CHECK (commission_cents >= 0),
  developer_amount_cents bigint NOT NULL CHECK (developer_amount_cents >= 0),
  -- USD per unit of `currency`, as used for this transaction (C10.3)
  fx_rate numeric NOT NULL CHECK (fx_rate > 0),
  usd_amount_cents bigint NOT NULL CHECK (usd_amount_cents >= 0),
  usd_developer_amount_cents bigint NOT NULL CHECK (usd_developer_amount_cents >= 0 AND usd_developer_amount_cents <= usd_amount_cents),
  status text NOT NULL CHECK (status IN ('pending', 'paid', 'failed')),
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL,
  provider_reference text,
  failure_reason text,
  claimed_at timestamptz NOT NULL,
  -- the live (not failed) payout that carries this transaction's developer amount
  payout_id uuid REFERENCES payouts (id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (installation_id, period_start),
  CHECK (commission_cents + developer_amount_cents = amount_cents),
  CHECK (payout_id IS NULL OR status = 'paid')
);
CREATE INDEX app_transactions_developer_idx ON app_transactions (developer_id, status, created_at);
CREATE INDEX app_transactions_unswept_idx ON app_transactions (developer_id) WHERE status = 'paid' AND payout_id IS NULL;
CREATE INDEX app_transactions_pending_idx ON app_transactions (claimed_at) WHERE status = 'pending';
CREATE INDEX app_transactions_payout_idx ON app_transactions (payout_id) WHERE payout_id IS NOT NULL;

-- Every transaction a payout ever covered (kept when the payout fails: `transactionIds`).
CREATE TABLE payout_transactions (
  payout_id uuid NOT NULL REFERENCES payouts (id),
  transaction_id uuid NOT NULL REFERENCES app_transactions (id),
  PRIMARY KEY (payout_id, transaction_id)
);

-- Audit trail of payout moves (the payout status table): who moved what, once.
CREATE TABLE payout_status_changes (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  payout_id uuid NOT NULL REFERENCES payouts (id),
  from_status text,
  to_status text NOT NULL,
  reason text,
  created_at timestamptz NOT NULL
);
CREATE INDEX payout_status_changes_payout_idx ON payout_status_changes (payout_id, id);

-- Double-entry ledger (C10.3), USD cents. Accounts: platform:cash, platform:commission,
-- developer:available and developer:in_flight (per developer).
CREATE TABLE journal_entries (
  id uuid PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('charge', 'payout_created', 'payout_failed', 'payout_paid')),
  developer_id uuid NOT NULL REFERENCES users (id),
  transaction_id uuid REFERENCES app_transactions (id),
  payout_id uuid REFERENCES payouts (id),
  currency text NOT NULL DEFAULT 'USD' CHECK (currency = 'USD'),
  created_at timestamptz NOT NULL,
  CHECK ((kind = 'charge') = (transaction_id IS NOT NULL)),
  CHECK ((kind = 'charge') = (payout_id IS NULL))
);
-- A transaction is posted once; each payout move is posted once.
CREATE UNIQUE INDEX journal_entries_transaction_key ON journal_entries (transaction_id) WHERE transaction_id IS NOT NULL;
CREATE UNIQUE INDEX journal_entries_payout_key ON journal_entries (payout_id, kind) WHERE payout_id IS NOT NULL;

CREATE TABLE journal_lines (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  entry_id uuid NOT NULL REFERENCES journal_entries (id),
  account text NOT NULL CHECK (account IN ('platform:cash', 'platform:commission', 'developer:available', 'developer:in_flight')),
  developer_id uuid REFERENCES users (id),
  debit_cents bigint NOT NULL DEFAULT 0 CHECK (debit_cents >= 0),
  credit_cents bigint NOT NULL DEFAULT 0 CHECK (credit_cents >= 0),
  CHECK ((debit_cents = 0) <> (credit_cents = 0)),
  CHECK ((account LIKE 'developer:%') = (developer_id IS NOT NULL))
);
CREATE INDEX journal_lines_entry_idx ON journal_lines (entry_id);
CREATE INDEX journal_lines_developer_idx ON journal_lines (developer_id, account) WHERE developer_id IS NOT NULL;

-- Every entry balances: checked at commit (deferred), once the entry and all its lines are written,
-- for the entry and for every line added to it. Plain PL/pgSQL: the same on PGlite and PostgreSQL.
CREATE FUNCTION journal_entry_must_balance() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  entry uuid;
  debits numeric;
  credits numeric;
  lines integer;
BEGIN
  IF TG_TABLE_NAME = 'journal_entries' THEN entry := NEW.id; ELSE entry := NEW.entry_id; END IF;
  SELECT coalesce(sum(debit_cents), 0), coalesce(sum(credit_cents), 0), count(*) INTO debits, credits, lines
    FROM journal_lines WHERE entry_id = entry;
  IF lines < 2 OR debits <> credits THEN
    RAISE EXCEPTION 'journal entry % does not balance: debits %, credits %, lines %', entry, debits, credits, lines
      USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER journal_entries_balanced AFTER INSERT ON journal_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION journal_entry_must_balance();
CREATE CONSTRAINT TRIGGER journal_lines_balanced AFTER INSERT ON journal_lines
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION journal_entry_must_balance();

-- The ledger is append-only: a correction is a new entry, never an edit.
CREATE FUNCTION journal_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the ledger is append-only (% on %)', TG_OP, TG_TABLE_NAME USING ERRCODE = '23514';
END $$;
CREATE TRIGGER journal_entries_append_only BEFORE UPDATE OR DELETE ON journal_entries
  FOR EACH ROW EXECUTE FUNCTION journal_is_append_only();
CREATE TRIGGER journal_lines_append_only BEFORE UPDATE OR DELETE ON journal_lines
  FOR EACH ROW EXECUTE FUNCTION journal_is_append_only();

-- C10.8: one review per (app, store); a second replaces the first.
CREATE TABLE app_reviews (
  id uuid PRIMARY KEY,
  app_id uuid NOT NULL REFERENCES apps (id),
  store_id uuid NOT NULL REFERENCES stores (id),
  author_id uuid REFERENCES users (id),
  rating smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
  body text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (app_id, store_id)
);
