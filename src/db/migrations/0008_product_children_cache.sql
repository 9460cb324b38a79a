-- Each product row carries its variants and images as JSON, kept current by triggers, so a product
-- list page is one index scan instead of two aggregate subqueries per row (planning and running
-- those was most of the App API product list's cost, worst on the embedded database). Triggers
-- keep every writer correct without each remembering to refresh: catalog edits, order stock moves.

ALTER TABLE products
  ADD COLUMN variants_json jsonb NOT NULL DEFAULT '[]',
  ADD COLUMN images_json jsonb NOT NULL DEFAULT '[]';

CREATE FUNCTION svc_refresh_product_variants(pid uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE products SET variants_json = COALESCE((
    SELECT jsonb_agg(jsonb_build_object(
      'num_id', v.num_id, 'name', v.name, 'value', v.value, 'price_minor', v.price_minor,
      'discount_price_minor', v.discount_price_minor, 'sku', v.sku, 'stock', v.stock,
      'stock_status', v.stock_status, 'position', v.position) ORDER BY v.position, v.num_id)
    FROM variants v WHERE v.product_id = pid), '[]'::jsonb)
  WHERE id = pid;
END $$;

CREATE FUNCTION svc_refresh_product_images(pid uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE products SET images_json = COALESCE((
    SELECT jsonb_agg(jsonb_build_object('num_id', i.num_id, 'src', i.src, 'position', i.position) ORDER BY i.position, i.num_id)
    FROM product_images i WHERE i.product_id = pid), '[]'::jsonb)
  WHERE id = pid;
END $$;

CREATE FUNCTION svc_variants_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'DELETE' THEN PERFORM svc_refresh_product_variants(NEW.product_id); END IF;
  IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.product_id <> NEW.product_id) THEN
    PERFORM svc_refresh_product_variants(OLD.product_id);
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION svc_images_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'DELETE' THEN PERFORM svc_refresh_product_images(NEW.product_id); END IF;
  IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.product_id <> NEW.product_id) THEN
    PERFORM svc_refresh_product_images(OLD.product_id);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER variants_refresh_product AFTER INSERT OR UPDATE OR DELETE ON variants
  FOR EACH ROW EXECUTE FUNCTION svc_variants_changed();
CREATE TRIGGER product_images_refresh_product AFTER INSERT OR UPDATE OR DELETE ON product_images
  FOR EACH ROW EXECUTE FUNCTION svc_images_changed();

-- Existing rows.
SELECT svc_refresh_product_variants(id), svc_refresh_product_images(id) FROM products;
