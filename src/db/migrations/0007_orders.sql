-- Orders (issue 4): what the order lifecycle adds to the orders of 0002: the applied discount, paid
-- amount and attributes on the order; product and variant numeric ids and fulfilled quantities on
-- line items; transactions, refunds, fulfillments and an audit trail; storefront events (C7.4) for
-- the analytics of C6.8; and the outgoing email log (C12.3). Money is integer minor units.

-- The discount applied at checkout, as a snapshot (code, type, value, products it applied to), so
-- that a later change of products can recompute totals without the discount record.
ALTER TABLE orders ADD COLUMN discount jsonb;
-- Sum of successful sale transactions: what a full refund can give back.
ALTER TABLE orders ADD COLUMN paid_minor bigint NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN attributes jsonb NOT NULL DEFAULT '[]';

-- App API lists (C5.4, C7.2): newest first per store, by merchant status; since_id compares ids
-- (UUID v7, C5.3). Returning customers (C6.8) look up a customer's earlier orders.
CREATE INDEX orders_store_status_idx ON orders (store_id, status, created_at DESC, id DESC);
CREATE INDEX orders_store_id_idx ON orders (store_id, id);
CREATE INDEX orders_customer_created_idx ON orders (customer_id, created_at) WHERE customer_id IS NOT NULL;
-- Sales analytics (C6.8) read a range of a store's orders from this covering index alone (an
-- index-only scan once vacuum has marked the pages visible); the region of saleByTopRegion (shipping
-- province, else country) is kept as a generated column so that it can be in the index.
ALTER TABLE orders ADD COLUMN sales_region text GENERATED ALWAYS AS (
  COALESCE(NULLIF(btrim(shipping_address->>'province'), ''), NULLIF(btrim(shipping_address->>'country'), ''), 'Unknown')) STORED;
CREATE INDEX orders_store_sales_idx ON orders (store_id, created_at)
  INCLUDE (total_minor, tax_minor, customer_id, status, cancelled_at, sales_region);

-- The App API's integer ids of the product and variant (the product object's `id` and
-- `variants[].id`), kept on the line item so that it reads without joins and survives the
-- product's deletion. Filled from the rows when not given (any insert path: service, seed, bench).
ALTER TABLE order_line_items ADD COLUMN product_num_id bigint;
ALTER TABLE order_line_items ADD COLUMN variant_num_id bigint;
-- Quantity covered by fulfillments in a shipped state (C14.3), kept up to date by fulfillments.
ALTER TABLE order_line_items ADD COLUMN fulfilled_quantity integer NOT NULL DEFAULT 0;

CREATE FUNCTION order_line_item_num_ids() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.product_num_id IS NULL AND NEW.product_id IS NOT NULL THEN
    SELECT num_id INTO NEW.product_num_id FROM products WHERE id = NEW.product_id;
  END IF;
  IF NEW.variant_num_id IS NULL AND NEW.variant_id IS NOT NULL THEN
    SELECT num_id INTO NEW.variant_num_id FROM variants WHERE id = NEW.variant_id;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER order_line_items_num_ids BEFORE INSERT ON order_line_items
  FOR EACH ROW EXECUTE FUNCTION order_line_item_num_ids();
UPDATE order_line_items li SET product_num_id = p.num_id FROM products p WHERE p.id = li.product_id AND li.product_num_id IS NULL;
UPDATE order_line_items li SET variant_num_id = v.num_id FROM variants v WHERE v.id = li.variant_id AND li.variant_num_id IS NULL;

-- Money movements of an order (app-api.md Order `transactions[]`): sales and refunds.
CREATE TABLE order_transactions (
  id uuid PRIMARY KEY,
  order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  store_id uuid NOT NULL REFERENCES stores (id),
  kind text NOT NULL CHECK (kind IN ('sale', 'refund')),
  status text NOT NULL CHECK (status IN ('pending', 'success', 'failure')),
  gateway text,
  amount_minor bigint NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX order_transactions_order_idx ON order_transactions (order_id, created_at, id);

-- Refunds (C7.1 `POST /orders/{id}/refund`): full, or point-of-sale (`pos`).
CREATE TABLE refunds (
  id uuid PRIMARY KEY,
  order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  store_id uuid NOT NULL REFERENCES stores (id),
  reason text,
  pos boolean NOT NULL DEFAULT false,
  restock boolean NOT NULL DEFAULT false,
  amount_minor bigint NOT NULL,
  transaction_id uuid REFERENCES order_transactions (id),
  -- [{ id, line_item_id, quantity, restock_type, subtotal_minor }]
  refund_line_items jsonb NOT NULL DEFAULT '[]',
  staff_id text,
  created_at timestamptz NOT NULL
);
CREATE INDEX refunds_order_idx ON refunds (order_id, created_at);

-- Fulfillments (app-api.md Fulfillment). `line_items` is what the request named ([] for the whole
-- order); `covered` is what it resolves to ([{ id, quantity }] over the order's line items).
CREATE TABLE fulfillments (
  id uuid PRIMARY KEY,
  order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  store_id uuid NOT NULL REFERENCES stores (id),
  status text NOT NULL CHECK (status IN ('pending', 'open', 'success', 'shipped', 'delivered', 'cancelled', 'error', 'failure')),
  service_id text,
  tracking_number text,
  tracking_url text,
  tracking_company text,
  line_items jsonb NOT NULL DEFAULT '[]',
  covered jsonb NOT NULL DEFAULT '[]',
  notify_customer boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX fulfillments_order_idx ON fulfillments (order_id, created_at, id);

-- Who changed an order and how (merchant updates keep `staffId` for audit).
CREATE TABLE order_changes (
  id uuid PRIMARY KEY,
  order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  store_id uuid NOT NULL REFERENCES stores (id),
  action text NOT NULL,
  user_id uuid,
  staff_id text,
  changes jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL
);
CREATE INDEX order_changes_order_idx ON order_changes (order_id, created_at);

-- Storefront events (C7.4): sessions and page views, the traffic side of C6.8.
CREATE TABLE storefront_events (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  type text NOT NULL CHECK (type IN ('session', 'page_view')),
  session_id text NOT NULL,
  source text,
  path text,
  occurred_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX storefront_events_store_idx ON storefront_events (store_id, type, occurred_at);

-- Outgoing email log (C12.3): every email, whether or not SMTP is configured.
CREATE TABLE email_log (
  id uuid PRIMARY KEY,
  store_id uuid REFERENCES stores (id) ON DELETE SET NULL,
  to_address text NOT NULL,
  subject text NOT NULL,
  template text NOT NULL,
  body text NOT NULL DEFAULT '',
  -- queued (SMTP send under way), sent (SMTP accepted), logged (no SMTP configured), failed
  status text NOT NULL CHECK (status IN ('queued', 'sent', 'logged', 'failed')),
  error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX email_log_to_idx ON email_log (lower(to_address), created_at DESC, id DESC);
CREATE INDEX email_log_created_idx ON email_log (created_at DESC, id DESC);
