// Issue 12's scenarios: the storefront checkout's shipping rates and its completion, on data
// written before the service starts (as bench/setup-data.ts does):
// - a store with merchant zones only: `GET .../shipping_rates` (target p99 < 10 ms at 32 connections);
// - a store with the same zones and two shipping apps whose rate endpoint (a receiver in a
//   process of its own, bench/rate-app.ts) answers after RATE_APP_DELAY_MS: rates asked of the apps (every request a checkout
//   with its own address, so its own request bytes: never the cache), target p99 no more than 15 ms
//   above the slower app; and from the cache (checkouts already quoted), target as fast as zones only;
// - completion (`POST .../complete`, each checkout completed once) against `POST /orders` taking the
//   same order on the same store (target: at least half its throughput);
// - issue 13: a store with the same zones and an app with three delivery-option functions (C11.3):
//   `GET .../shipping_rates`, every request running the three (target p99 < 15 ms at 32 connections).
import type { Deps } from '../src/deps.js';
import { signup } from '../src/accounts/accounts.service.js';
import { createApp } from '../src/apps/apps.service.js';
import { hashCheckoutToken, newCheckoutToken } from '../src/checkout/checkout-token.js';
import { createCheckout } from '../src/checkout/checkout.service.js';
import { priceLines } from '../src/checkout/checkout-lines.js';
import { rateBodySha256Of } from '../src/checkout/rate-request.js';
import { findStoreAddress } from '../src/stores/store-address.js';
import { uuidv7 } from '../src/ids.js';
import { installForBench } from './install.js';

export const RATE_APP_DELAY_MS = 50;
/** Completions and `POST /orders` take orders for one returning customer: the same work on both sides. */
const ORDER_EMAIL = 'bench-orders-buyer@bench.test';

export interface CheckoutBenchData {
  /** Zones only. */
  zonesSlug: string;
  zoneTokens: string[];
  /** Zones and two shipping apps. */
  appsSlug: string;
  /** Never quoted before: one request each. */
  uncachedTokens: string[];
  /** Quoted once before the load (the sanity check does it): answered from the rate cache. */
  cachedTokens: string[];
  /** Ready to complete (address, chosen zone rate, payment method), one completion each. */
  completeTokens: string[];
  /** Zones and three active delivery functions (issue 13). */
  functionsSlug: string;
  functionTokens: string[];
  /** The zones store's merchant, who takes the same order through `POST /orders`. */
  merchantLogin: { email: string; password: string };
  orderBody: string;
}

const address = (zip: string) => ({
  first_name: 'Bench', last_name: 'Buyer', address1: '1 Main Street', city: 'Portland', province: 'Oregon', province_code: 'OR',
  country: 'United States', country_code: 'US', zip, phone: '+15550100',
});

async function storeWithZones(deps: Deps, name: string) {
  const merchant = await signup(deps, { email: `${name}@bench.test`, password: 'bench-merchant-pass', name, storeName: name, role: 'MERCHANT' });
  const storeId = merchant.store!.id;
  const now = deps.clock.now();
  const productId = uuidv7(now.getTime());
  await deps.db.query(
    `INSERT INTO products (id, store_id, title, handle, price_minor, inventory_quantity, sku, created_at, updated_at)
     VALUES ($1, $2, 'Bench Tee', 'bench-tee', 2500, 1000000000, 'BENCH-TEE', $3, $3)`,
    [productId, storeId, now],
  );
  const zoneIds: string[] = [];
  for (const [zone, price, type, minPrice] of [['Standard', 500, 'Simple', null], ['Free over 100', 0, 'Price', '100'], ['Canada', 1500, 'Simple', null]] as const) {
    const id = uuidv7(now.getTime());
    zoneIds.push(id);
    await deps.db.query(
      `INSERT INTO shipping_zones (id, store_id, name, countries, price_minor, type, min_price, created_at, updated_at)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $8)`,
      [id, storeId, zone, JSON.stringify(zone === 'Canada' ? ['CA'] : ['US']), price, type, minPrice, now],
    );
  }
  return { storeId, slug: merchant.store!.storeURL, productId, standardZone: zoneIds[0] };
}

/** The rate body hash `checkouts` writes is the one the service keeps for a checkout it creates (else the apps scenario would measure another path). */
async function hashAsCreated(deps: Deps, store: { storeId: string; slug: string; productId: string }): Promise<void> {
  const lineItems = [{ product_id: store.productId, quantity: 1 }];
  const view = await createCheckout(deps, store.slug, { email: 'hash-check@bench.test', line_items: lineItems, shipping_address: address('99999') });
  const { rows } = await deps.db.query<{ h: string | null }>('SELECT rate_body_sha256 AS h FROM checkouts WHERE token_hash = $1', [hashCheckoutToken(view.token)]);
  const { lines } = await priceLines(deps.db, store.storeId, [{ id: uuidv7(), product_id: store.productId, variant_id: null, quantity: 1 }]);
  const written = rateBodySha256Of(await findStoreAddress(deps.db, store.storeId), address('99999'), lines, 'USD');
  if (!written || rows[0]?.h !== written) throw new Error(`bench checkouts' rate body hash ${written} is not the service's ${rows[0]?.h}`);
}

/**
 * Checkouts written straight to the table in batches (their tokens kept), each with its own zip, so
 * its own rate request bytes, and with the hash of those bytes as the service keeps it from a
 * checkout's creation (rate-request.ts `rateBodySha256Of`). `ready`: with the zone rate chosen and a
 * payment method, for completion.
 */
async function checkouts(deps: Deps, store: { storeId: string; productId: string }, count: number, zipBase: number, ready: { zoneId: string; email: string } | null): Promise<string[]> {
  const tokens: string[] = [];
  const now = deps.clock.now();
  const origin = await findStoreAddress(deps.db, store.storeId);
  const { lines } = await priceLines(deps.db, store.storeId, [{ id: uuidv7(), product_id: store.productId, variant_id: null, quantity: 1 }]);
  const rate = ready ? { handle: `zone-${ready.zoneId}`, title: 'Standard', code: 'Standard', source: null, price: '5.00', description: null, min_delivery_date: null, max_delivery_date: null } : null;
  for (let start = 0; start < count; start += 1000) {
    const rows = [];
    for (let i = start; i < Math.min(count, start + 1000); i++) {
      const { token, hash } = newCheckoutToken();
      tokens.push(token);
      rows.push({
        id: uuidv7(now.getTime()), token_hash: hash, email: ready?.email ?? `buyer-${zipBase + i}@bench.test`,
        line_items: [{ id: uuidv7(), product_id: store.productId, variant_id: null, quantity: 1 }], shipping_address: address(String(zipBase + i)),
        rate_body_sha256: rateBodySha256Of(origin, address(String(zipBase + i)), lines, 'USD'),
      });
    }
    await deps.db.query(
      `INSERT INTO checkouts (id, store_id, token_hash, email, currency, line_items, shipping_address, shipping_rate, payment_method, expires_at, created_at, updated_at, rate_body_sha256)
       SELECT x.id, $2, x.token_hash, x.email, 'USD', x.line_items, x.shipping_address, $3::jsonb, $4, $5, $6, $6, x.rate_body_sha256
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, token_hash text, email text, line_items jsonb, shipping_address jsonb, rate_body_sha256 text)`,
      // Expiry far enough ahead that no bench run outlives it.
      [JSON.stringify(rows), store.storeId, rate ? JSON.stringify(rate) : null, ready ? 'card' : null, new Date(now.getTime() + 30 * 86_400_000), now],
    );
  }
  return tokens;
}

/** Three delivery-option functions of a typical size: hide over a price, rename, move (also the dashboard scenario's). */
export const DELIVERY_FUNCTIONS = [
  { handle: 'hide-dear', target: 'cart.delivery-options.transform.run', configuration: { maxPrice: '14.00' },
    expression: '{"operations": input.deliveryOptions.filter(o, double(o.price) > double(configuration.maxPrice)).map(o, {"hide": {"handle": o.handle}})}' },
  { handle: 'rename-standard', target: 'cart.delivery-options.transform.run',
    expression: '{"operations": input.deliveryOptions.filter(o, o.code == "Standard").map(o, {"rename": {"handle": o.handle, "title": o.title + " (tracked)"}})}' },
  { handle: 'standard-first', target: 'cart.delivery-options.transform.run',
    expression: '{"operations": input.deliveryOptions.filter(o, o.code == "Standard").map(o, {"move": {"handle": o.handle, "index": 0}})}' },
];

export async function setupCheckoutBench(deps: Deps, partnerId: string, ratesUrl: string, counts: { uncached: number; complete: number }): Promise<CheckoutBenchData> {
  const zones = await storeWithZones(deps, 'bench-checkout-zones');
  const apps = await storeWithZones(deps, 'bench-checkout-apps');
  for (let i = 0; i < 2; i++) {
    const { app } = await createApp(deps, { id: partnerId, role: 'PARTNER', storeId: null }, {
      name: `Bench Shipping ${i + 1}`, appUrl: 'https://bench-app.example.com', scopes: ['write_shipping'], tier: 'enterprise',
      extensions: { shipping: { ratesUrl } },
    });
    await installForBench(deps, apps.storeId, app.clientId, app.clientSecret!);
  }
  await hashAsCreated(deps, apps);
  const withFunctions = await storeWithZones(deps, 'bench-checkout-functions');
  const { app: functionsApp } = await createApp(deps, { id: partnerId, role: 'PARTNER', storeId: null }, {
    name: 'Bench Delivery Functions', appUrl: 'https://bench-app.example.com', scopes: ['read_products'], tier: 'enterprise',
    extensions: { functions: DELIVERY_FUNCTIONS },
  });
  await installForBench(deps, withFunctions.storeId, functionsApp.clientId, functionsApp.clientSecret!);
  return {
    functionsSlug: withFunctions.slug,
    functionTokens: await checkouts(deps, withFunctions, 200, 30_000, null),
    zonesSlug: zones.slug,
    zoneTokens: await checkouts(deps, zones, 200, 10_000, null),
    appsSlug: apps.slug,
    uncachedTokens: await checkouts(deps, apps, counts.uncached, 20_000, null),
    cachedTokens: await checkouts(deps, apps, 200, 10_000, null),
    completeTokens: await checkouts(deps, zones, counts.complete, 90_000, { zoneId: zones.standardZone, email: ORDER_EMAIL }),
    merchantLogin: { email: 'bench-checkout-zones@bench.test', password: 'bench-merchant-pass' },
    orderBody: JSON.stringify({
      customer: { email: ORDER_EMAIL }, line_items: [{ product_id: zones.productId, quantity: 1 }],
      shipping_address: address('97201'), shipping_line: { title: 'Standard', code: 'Standard', price: '5.00' }, paymentMethod: 'card',
    }),
  };
}

/** The service's function pool counters (GET /metrics, `svc_function_pool`): read around a scenario. */
export async function functionPoolStats(base: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const stats: Record<string, number> = {};
  for (const m of text.matchAll(/^svc_function_pool\{stat="([a-z_]+)"\} ([0-9.e+-]+)$/gm)) stats[m[1]] = Number(m[2]);
  return stats;
}
