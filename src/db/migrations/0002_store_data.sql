-- Store data: catalog, customers, orders, discounts, content and shipping. Money is integer minor
-- units; the edges turn it into two-decimal strings (C5.2).

CREATE SEQUENCE products_num_seq;
CREATE TABLE products (
  id uuid PRIMARY KEY,
  num_id bigint NOT NULL UNIQUE DEFAULT nextval('products_num_seq'),
  store_id uuid NOT NULL REFERENCES stores (id),
  title text NOT NULL,
  handle text NOT NULL,
  body_html text NOT NULL DEFAULT '',
  category text,
  vendor text NOT NULL DEFAULT '',
  product_type text NOT NULL DEFAULT '',
  published_scope text NOT NULL DEFAULT 'web',
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'draft', 'archived')),
  tags jsonb NOT NULL DEFAULT '[]',
  price_minor bigint,
  compare_at_price_minor bigint,
  inventory_quantity integer NOT NULL DEFAULT 0,
  sku text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
-- Lists are newest first per store, optionally by status; the id breaks ties in UUID v7 order.
CREATE INDEX products_store_list_idx ON products (store_id, created_at DESC, id DESC);
CREATE INDEX products_store_status_idx ON products (store_id, status, created_at DESC, id DESC);

CREATE SEQUENCE variants_num_seq;
CREATE TABLE variants (
  id uuid PRIMARY KEY,
  num_id bigint NOT NULL UNIQUE DEFAULT nextval('variants_num_seq'),
  product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
  store_id uuid NOT NULL REFERENCES stores (id),
  name text NOT NULL DEFAULT '',
  value text NOT NULL DEFAULT '',
  price_minor bigint NOT NULL DEFAULT 0,
  discount_price_minor bigint,
  stock integer NOT NULL DEFAULT 0,
  stock_status text NOT NULL DEFAULT 'IN_STOCK',
  sku text,
  weight numeric,
  weight_unit text CHECK (weight_unit IN ('g', 'kg', 'lb', 'oz')),
  main_image_url text,
  position integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX variants_product_idx ON variants (product_id, position);

CREATE SEQUENCE product_images_num_seq;
CREATE TABLE product_images (
  num_id bigint PRIMARY KEY DEFAULT nextval('product_images_num_seq'),
  product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
  src text NOT NULL,
  position integer NOT NULL
);
CREATE INDEX product_images_product_idx ON product_images (product_id, position);

CREATE TABLE customers (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  email text NOT NULL,
  name text NOT NULL DEFAULT '',
  phone text,
  accepts_marketing boolean NOT NULL DEFAULT false,
  note text,
  address jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX customers_store_email_key ON customers (store_id, lower(email));

CREATE TABLE orders (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  order_number integer NOT NULL,
  customer_id uuid REFERENCES customers (id),
  email text,
  phone text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN
    ('pending', 'confirmed', 'paid', 'partial', 'shipped', 'delivered', 'canceled', 'returned', 'exchange')),
  financial_status text NOT NULL DEFAULT 'pending',
  fulfillment_status text NOT NULL DEFAULT 'unfulfilled',
  cancelled_at timestamptz,
  cancel_reason text,
  currency text NOT NULL DEFAULT 'USD',
  subtotal_minor bigint NOT NULL DEFAULT 0,
  tax_minor bigint NOT NULL DEFAULT 0,
  tax_rate numeric,
  shipping_minor bigint NOT NULL DEFAULT 0,
  discount_minor bigint NOT NULL DEFAULT 0,
  total_minor bigint NOT NULL DEFAULT 0,
  refunded_minor bigint NOT NULL DEFAULT 0,
  payment_method text,
  discount_code text,
  shipping_address jsonb,
  billing_address jsonb,
  shipping_line jsonb,
  note text,
  tags jsonb NOT NULL DEFAULT '[]',
  courier_name text,
  tracking_number text,
  tracking_url text,
  digital_data text,
  delivery_date timestamptz,
  shipped_date timestamptz,
  staff_id text,
  confirmation_number text NOT NULL,
  processed_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (store_id, order_number)
);
CREATE INDEX orders_store_list_idx ON orders (store_id, created_at DESC, id DESC);
CREATE INDEX orders_customer_idx ON orders (customer_id);

CREATE TABLE order_line_items (
  id uuid PRIMARY KEY,
  order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  product_id uuid REFERENCES products (id) ON DELETE SET NULL,
  variant_id uuid REFERENCES variants (id) ON DELETE SET NULL,
  title text NOT NULL,
  variant_title text,
  sku text,
  quantity integer NOT NULL CHECK (quantity > 0),
  price_minor bigint NOT NULL,
  total_discount_minor bigint NOT NULL DEFAULT 0,
  properties jsonb NOT NULL DEFAULT '[]',
  requires_shipping boolean NOT NULL DEFAULT true,
  taxable boolean NOT NULL DEFAULT true,
  -- C7.2: whether stock was deducted, so that a restock returns it once only
  stock_deducted boolean NOT NULL DEFAULT false,
  position integer NOT NULL
);
CREATE INDEX order_line_items_order_idx ON order_line_items (order_id, position);

CREATE TABLE discounts (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  code text NOT NULL,
  type text NOT NULL CHECK (type IN ('Percentage', 'Flat', 'FreeShipping', 'BuyXGetY', 'Freebie')),
  status text NOT NULL DEFAULT 'Active' CHECK (status IN ('Active', 'Inactive')),
  discount_percentage numeric,
  discount_amount numeric,
  min_order_total numeric NOT NULL DEFAULT 0,
  total_coupons integer NOT NULL DEFAULT 0,
  used_count integer NOT NULL DEFAULT 0,
  uses_per_customer integer,
  apply_on_products jsonb NOT NULL DEFAULT '[]',
  start_date timestamptz NOT NULL,
  end_date timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX discounts_store_code_key ON discounts (store_id, lower(code));

CREATE TABLE pages (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  title text NOT NULL,
  handle text,
  template_suffix text,
  link text,
  content text NOT NULL DEFAULT '',
  seo_title text,
  seo_desc text,
  seo_image text,
  show_title boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE menus (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  parent_id uuid REFERENCES menus (id) ON DELETE CASCADE,
  name text NOT NULL,
  handle text NOT NULL DEFAULT '',
  menu_type text,
  menu_item_type text,
  url text,
  sort_order integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX menus_store_idx ON menus (store_id, parent_id, sort_order);

CREATE TABLE shipping_zones (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  name text NOT NULL,
  countries jsonb NOT NULL DEFAULT '[]',
  description text NOT NULL DEFAULT '',
  price_minor bigint NOT NULL DEFAULT 0,
  type text NOT NULL DEFAULT 'Simple' CHECK (type IN ('Simple', 'Weight', 'Price')),
  digital_prod boolean NOT NULL DEFAULT true,
  min_weight numeric,
  max_weight numeric,
  min_price numeric,
  max_price numeric,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX shipping_zones_store_idx ON shipping_zones (store_id, created_at DESC);
