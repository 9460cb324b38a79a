-- C15.1 checkouts: the buyer's side of a sale, on the storefront. The token is the checkout's only
-- key and a bearer secret: only its SHA-256 is stored. Lines are kept as the buyer asked for them
-- (product, variant, quantity) and priced from the catalog whenever the checkout is read, so the
-- checkout always shows what completing it would charge.
ALTER TABLE products ADD COLUMN requires_shipping boolean NOT NULL DEFAULT true;

CREATE TABLE checkouts (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  token_hash text NOT NULL UNIQUE,
  email text,
  currency text NOT NULL,
  -- [{ id, product_id, variant_id, quantity }]
  line_items jsonb NOT NULL DEFAULT '[]',
  shipping_address jsonb,
  -- The rate the buyer chose, as it was offered: { handle, title, code, source, price }.
  shipping_rate jsonb,
  discount_code text,
  note text,
  payment_method text,
  order_id uuid REFERENCES orders (id),
  completed_at timestamptz,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
-- The purge job finds abandoned checkouts by age; erasure (C9) finds a customer's by email.
CREATE INDEX checkouts_abandoned_idx ON checkouts (updated_at) WHERE completed_at IS NULL;
CREATE INDEX checkouts_store_email_idx ON checkouts (store_id, lower(email));
