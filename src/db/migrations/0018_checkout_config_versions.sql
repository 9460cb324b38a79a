-- A version number for what a checkout quote reads of its store besides the checkout itself: its
-- shipping zones, shipping apps (installations, the apps' handles, rate URLs and secrets), address
-- and active functions. Every process keeps a copy of each store's set it has read, and the quote
-- query sends back the version it holds: the set comes again only when the version has moved
-- (src/checkout/store-config-cache.ts). Triggers move it, so no writer (API, dashboard, manifest
-- sync, uninstall, a cascade) can forget to. Versions come from one sequence: never reused, never
-- the same for two stores.
--
-- A table of its own rather than a column of stores: a version bump locks this row only, never
-- the stores row that every order placement updates (next_order_number).

CREATE SEQUENCE checkout_config_versions;

CREATE TABLE store_checkout_configs (
  store_id uuid PRIMARY KEY REFERENCES stores (id),
  version bigint NOT NULL
);

CREATE FUNCTION svc_touch_checkout_config(sid uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO store_checkout_configs (store_id, version) VALUES (sid, nextval('checkout_config_versions'))
    ON CONFLICT (store_id) DO UPDATE SET version = EXCLUDED.version;
END $$;

-- Rows that belong to one store.
CREATE FUNCTION svc_store_row_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'DELETE' THEN PERFORM svc_touch_checkout_config(NEW.store_id); END IF;
  IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.store_id <> NEW.store_id) THEN
    PERFORM svc_touch_checkout_config(OLD.store_id);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER shipping_zones_checkout_config AFTER INSERT OR UPDATE OR DELETE ON shipping_zones
  FOR EACH ROW EXECUTE FUNCTION svc_store_row_changed();
CREATE TRIGGER store_addresses_checkout_config AFTER INSERT OR UPDATE OR DELETE ON store_addresses
  FOR EACH ROW EXECUTE FUNCTION svc_store_row_changed();
CREATE TRIGGER store_functions_checkout_config AFTER INSERT OR UPDATE OR DELETE ON store_functions
  FOR EACH ROW EXECUTE FUNCTION svc_store_row_changed();
-- Only the columns a quote reads: other installation writes (billing, versions) move nothing.
CREATE TRIGGER installations_checkout_config AFTER INSERT OR DELETE OR UPDATE OF store_id, app_id, status, scopes ON installations
  FOR EACH ROW EXECUTE FUNCTION svc_store_row_changed();

-- An app's handle, rate URL (extensions) or secret: every store it is installed on.
CREATE FUNCTION svc_app_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM svc_touch_checkout_config(i.store_id) FROM installations i WHERE i.app_id = OLD.id;
  RETURN NULL;
END $$;
CREATE TRIGGER apps_checkout_config AFTER DELETE OR UPDATE OF handle, extensions, client_secret_enc ON apps
  FOR EACH ROW EXECUTE FUNCTION svc_app_changed();

-- A function's declaration (expression, target, configuration...): every store that has it.
-- (A new declaration reaches a store through its store_functions row; a deleted one cascades to them.)
CREATE FUNCTION svc_app_function_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM svc_touch_checkout_config(s.store_id) FROM store_functions s WHERE s.app_function_id = OLD.id;
  RETURN NULL;
END $$;
CREATE TRIGGER app_functions_checkout_config AFTER UPDATE ON app_functions
  FOR EACH ROW EXECUTE FUNCTION svc_app_function_changed();
