-- Catalog beyond products: manual collections, product listings on apps' sales channels (C6.2) and
-- metafields (C6.6). Ids are UUID v7 made by the service (C5.3).

-- Product handles are looked up per store, by equality and by prefix (a default handle takes the
-- first free `slug-N`); text_pattern_ops serves LIKE 'slug-%' under any collation.
CREATE INDEX products_store_handle_idx ON products (store_id, handle text_pattern_ops);

-- Only manual (custom) collections exist (app-api.md Collection).
CREATE TABLE collections (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  title text NOT NULL,
  handle text NOT NULL,
  body_html text NOT NULL DEFAULT '',
  image_src text,
  image_alt text,
  seo_title text,
  seo_description text,
  published_scope text NOT NULL DEFAULT 'web',
  sort_order text NOT NULL DEFAULT 'manual',
  template_suffix text,
  published_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX collections_store_idx ON collections (store_id, created_at DESC, id DESC);

CREATE TABLE collection_products (
  collection_id uuid NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
  product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
  position integer NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (collection_id, product_id)
);
-- Deleting a product removes its memberships through this index, not a scan.
CREATE INDEX collection_products_product_idx ON collection_products (product_id);

-- A product listed on an app's sales channel. The channel is the app on the store, and exists only
-- while the app's manifest declares `extensions.salesChannel: true` (C6.2); one listing per product
-- and channel.
CREATE TABLE product_listings (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  app_id uuid NOT NULL REFERENCES apps (id),
  product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
  external_id text,
  status text NOT NULL DEFAULT 'active',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (app_id, product_id)
);
CREATE INDEX product_listings_product_idx ON product_listings (product_id);

-- One value per (store, owner type, owner, namespace, key) (app-api.md Metafield). `owner_id` is the
-- owner's UUID as text (the store's id for `shop`); `value` is the raw string of C14.6.
CREATE TABLE metafields (
  id uuid PRIMARY KEY,
  store_id uuid NOT NULL REFERENCES stores (id),
  owner_type text NOT NULL CHECK (owner_type IN ('shop', 'product', 'variant', 'collection', 'customer', 'order', 'page')),
  owner_id text NOT NULL,
  namespace text NOT NULL,
  key text NOT NULL,
  type text NOT NULL,
  value text NOT NULL,
  app_id uuid,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CONSTRAINT metafields_owner_key UNIQUE (store_id, owner_type, owner_id, namespace, key)
);
-- Lists are newest first per store; filters by owner use the unique index, by namespace/key this one.
CREATE INDEX metafields_store_list_idx ON metafields (store_id, created_at DESC, id DESC);
CREATE INDEX metafields_store_namespace_idx ON metafields (store_id, namespace, key);
