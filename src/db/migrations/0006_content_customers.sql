-- Content, customers, discounts and shipping: indexes for their lists (newest first per store,
-- the id breaking ties in UUID v7 order), so a page is an index range, not a scan and sort.
CREATE INDEX customers_store_list_idx ON customers (store_id, created_at DESC, id DESC);
CREATE INDEX discounts_store_list_idx ON discounts (store_id, created_at DESC, id DESC);
DROP INDEX shipping_zones_store_idx;
CREATE INDEX shipping_zones_store_list_idx ON shipping_zones (store_id, created_at DESC, id DESC);
