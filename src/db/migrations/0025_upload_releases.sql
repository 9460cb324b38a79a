-- A store's upload that a change stopped referencing (src/catalog/upload-references.ts). The change
-- records the file here, in its own transaction, instead of deleting it; the `upload-purge` job
-- deletes it once the grace period has passed and nothing of the store names it any more. A write
-- that copied the URL while the reference was being dropped has long committed by then, and is seen.
CREATE TABLE upload_releases (
  store_id uuid NOT NULL,
  -- the file's own name, `{uuid}.{ext}`, under uploads/variants/{store_id}
  name text NOT NULL,
  -- the service clock (C12.1) at the last release: the grace runs from there
  released_at timestamptz NOT NULL,
  PRIMARY KEY (store_id, name)
);
CREATE INDEX upload_releases_released_idx ON upload_releases (released_at);

-- The reference check now looks for the file's name anywhere in the store's fields (any host, query,
-- case or encoding), by store, not by the URL's exact text: these equality-only indexes no longer
-- serve it, and every write of a variant or product image kept them up to date.
DROP INDEX variants_main_image_url_idx;
DROP INDEX product_images_src_idx;
