// A store's checkout set (store-config-cache.ts): its zones, shipping apps, address and active
// functions, read in one statement with its version, and the copy this process keeps of it. The
// store's address as JSON is shared with the checkout reads (checkouts.repo.ts).
import type { Queryable } from '../db/db.js';
import type { StoredZone } from './zone-rates.js';
import type { ShippingApp } from './app-rates.js';
import { NO_STORE_ADDRESS, type StoreAddress } from '../stores/store-address.js';
import type { StoreCheckoutConfig, StoreConfigCache } from './store-config-cache.js';
import { activeFunctionsJson, type StoreFunctionRow } from '../functions/functions.repo.js';

/** The store's address (C15.4) as JSON, null when none was saved: the rate requests' origin (C15.3). */
export const originJson = (storeId: string) => `(SELECT json_build_object('address1', sa.address1, 'address2', sa.address2, 'city', sa.city,
    'province', sa.province, 'country', sa.country, 'zip', sa.zip, 'phone', sa.phone)
     FROM store_addresses sa WHERE sa.store_id = ${storeId})`;

/**
 * A store's set (store-config-cache.ts) with its version, read in one statement (one snapshot: the
 * set is exactly the version's). Its own statement rather than a part of the quote's: a part that
 * is skipped still costs its tables' locks and executor set-up on every execution. The apps are in
 * handle order by bytes, as `shippingAppsOf` gives them (app-rates.ts; text-order.ts).
 */
const STORE_CONFIG_SQL = `
SELECT coalesce(v.version, 0)::text AS version, json_build_object(
  'zones', (SELECT coalesce(json_agg(json_build_object(
            'id', z.id, 'name', z.name, 'countries', z.countries, 'description', z.description, 'price_minor', z.price_minor,
            'type', z.type, 'min_weight', z.min_weight::text, 'max_weight', z.max_weight::text,
            'min_price', z.min_price::text, 'max_price', z.max_price::text) ORDER BY z.id), '[]'::json)
     FROM shipping_zones z WHERE z.store_id = st.id),
  'apps', (SELECT coalesce(json_agg(json_build_object(
            'id', a.id, 'handle', a.handle, 'ratesUrl', a.extensions->'shipping'->>'ratesUrl', 'secretEnc', a.client_secret_enc,
            'shopDomain', st.slug) ORDER BY a.handle COLLATE "C"), '[]'::json)
     FROM installations i JOIN apps a ON a.id = i.app_id
    WHERE i.store_id = st.id AND i.status = 'active' AND i.scopes @> '["write_shipping"]'::jsonb
      AND jsonb_typeof(a.extensions->'shipping'->'ratesUrl') = 'string'),
  'origin', ${originJson('st.id')},
  'functions', ${activeFunctionsJson('st.id')}) AS config
FROM stores st LEFT JOIN store_checkout_configs v ON v.store_id = st.id
WHERE st.id = $1`;

async function readStoreConfig(q: Queryable, storeId: string): Promise<StoreCheckoutConfig> {
  const { rows } = await q.query<{ version: string; config: ConfigJson }>(STORE_CONFIG_SQL, [storeId], { name: 'checkout_store_config' });
  const { version, config } = rows[0];
  return {
    storeId,
    version,
    zones: config.zones,
    apps: config.apps,
    origin: config.origin ?? NO_STORE_ADDRESS,
    functions: config.functions.map((f) => ({ ...f, activated_at: f.activated_at === null ? null : new Date(f.activated_at) })),
  };
}

/**
 * The store's set as of `version` (read with the checkout, in the same statement as it): this
 * process's copy when it is of this store at that version; else the set, read again and kept.
 * `slug`: lower case, the copies' key.
 */
export async function storeConfigAt(q: Queryable, configs: StoreConfigCache | undefined, slug: string, storeId: string, version: string): Promise<StoreCheckoutConfig> {
  const held = configs?.get(slug);
  if (held && held.storeId === storeId && held.version === version) return held;
  const config = await readStoreConfig(q, storeId);
  configs?.set(slug, config);
  return config;
}

/** The store's set as the quote query sends it (JSON). */
interface ConfigJson {
  zones: StoredZone[];
  apps: ShippingApp[];
  origin: StoreAddress | null;
  functions: (Omit<StoreFunctionRow, 'activated_at'> & { activated_at: string | null })[];
}
