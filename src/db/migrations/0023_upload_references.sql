-- Whether a store still uses one of its uploaded images (src/catalog/upload-references.ts) is asked
-- when a product is deleted or an image replaced. Variants and product images have no store index,
-- and pages none at all, so without these each question read the whole table, every store's rows.
-- Hash indexes: only equality is asked, and a URL (up to 2048 characters, of any script) can be
-- longer than a B-tree entry may be.
CREATE INDEX variants_main_image_url_idx ON variants USING hash (main_image_url);
CREATE INDEX product_images_src_idx ON product_images USING hash (src);
CREATE INDEX pages_store_idx ON pages (store_id);
