-- Test deliveries (issue 14, C8.9): `POST /apps/developer/{appId}/webhooks/test` sends a sample
-- payload of a topic to an address the developer gives, and records it in the delivery log like any
-- delivery, with source `test`. A test delivery concerns no store (its X-SVC-Shop-Domain is a
-- reserved sample domain, docs/decisions.md), so it has no store_id; every other delivery keeps
-- one, and the check says so: store-scoped reads (`store_id = $1`) never see a test delivery, and
-- no store's delivery can lose its store.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_source_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_source_check
  CHECK (source IN ('subscription', 'manifest', 'gdpr', 'store', 'test'));
ALTER TABLE webhook_deliveries ALTER COLUMN store_id DROP NOT NULL;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_store_check CHECK ((store_id IS NULL) = (source = 'test'));
