// The checkouts' SQL (C15.1): the row, its lookup by token hash, the lock that lets exactly one
// completion through, the catalog facts a line is priced from, the purge of abandoned checkouts,
// and the erasure of a redacted customer's checkouts (C9).
import type { Queryable } from '../db/db.js';
import { insertRow, updateRow } from '../db/sql.js';
import { BatchReader } from '../db/batch-reader.js';
import type { Address } from '../orders/order-view.js';
import { isUuid } from '../ids.js';
import type { ShippingRate } from './shipping-rates.js';
import type { StoredZone } from './zone-rates.js';
import type { ShippingApp } from './app-rates.js';
import { NO_STORE_ADDRESS, type StoreAddress } from '../stores/store-address.js';
import type { AnswersReadWithCheckout, StoredAnswerRow } from './rate-cache.js';
import { zonesForCountry, type StoreConfigCache } from './store-config-cache.js';
import { originJson, storeConfigAt } from './store-config.repo.js';
import type { FunctionResults } from './checkout-functions.js';
import type { PricedLine } from './checkout-lines.js';
import type { AppliedDiscount } from '../orders/pricing.js';
import type { StoreFunctionRow } from '../functions/functions.repo.js';
import { erasedRuns } from '../functions/function-runs.repo.js';

/**
 * What a completed checkout was priced at (C15.1): its lines as priced from the catalog and its
 * discount code as it applied when the order was taken. Read again, it is priced from these.
 */
export interface CompletedPricing {
  lines: PricedLine[];
  applied: AppliedDiscount | null;
}

/** A line as the buyer asked for it; priced from the catalog when read (checkout-lines.ts). */
export interface AskedLine {
  id: string;
  product_id: string;
  variant_id: string | null;
  quantity: number;
}


export interface CheckoutRow {
  id: string;
  store_id: string;
  token_hash: string;
  email: string | null;
  currency: string;
  line_items: AskedLine[];
  shipping_address: Partial<Address> | null;
  /** The rate the buyer chose, as it was offered (C15.1 `shipping_line`). */
  shipping_rate: ShippingRate | null;
  discount_code: string | null;
  note: string | null;
  payment_method: string | null;
  order_id: string | null;
  completed_at: Date | null;
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
  /** What the cart functions' last runs gave (C11.4); null when none ran. */
  function_results: FunctionResults | null;
  /**
   * The SHA-256 of the rate request body a quote would send as of the last change (C15.3; rate-request.ts
   * `rateBodySha256Of`), null when it would ask no app: the quote query reads that body's cached
   * answers with the checkout. A hint only: a quote uses them when its own body hashes the same.
   */
  rate_body_sha256: string | null;
  /** What the checkout was priced at when it was completed (C15.1; checkout-state.ts); null while open. */
  completed_pricing: CompletedPricing | null;
}

const CASTS = { line_items: 'jsonb', shipping_address: 'jsonb', shipping_rate: 'jsonb', function_results: 'jsonb', completed_pricing: 'jsonb' };

export async function insertCheckout(q: Queryable, row: CheckoutRow): Promise<void> {
  await insertRow(q, 'checkouts', { ...row }, { casts: CASTS, name: true });
}

/** The store's checkout with this token hash (another store's token is not found). */
export async function findCheckout(q: Queryable, storeId: string, tokenHash: string, opts: { lock?: boolean } = {}): Promise<CheckoutRow | null> {
  const { rows } = await q.query<CheckoutRow>(
    `SELECT * FROM checkouts WHERE token_hash = $1 AND store_id = $2${opts.lock ? ' FOR UPDATE' : ''}`,
    [tokenHash, storeId],
  );
  return rows[0] ?? null;
}

/**
 * The checkout with this token hash in the store with this slug, with its store, in one query;
 * `configVersion` is the store's set's version (store-config-cache.ts), for `storeConfigAt`.
 */
export async function findCheckoutInStore(q: Queryable, slug: string, tokenHash: string): Promise<{ store: CheckoutStore; row: CheckoutRow; configVersion: string } | null> {
  const { rows } = await q.query<CheckoutRow & { store_slug: string; store_currency: string; store_origin: StoreAddress | null; config_version: string }>(
    `SELECT c.*, s.slug AS store_slug, s.currency AS store_currency, ${originJson('s.id')} AS store_origin, coalesce(v.version, 0)::text AS config_version
       FROM checkouts c JOIN stores s ON s.id = c.store_id
       LEFT JOIN store_checkout_configs v ON v.store_id = s.id
      WHERE c.token_hash = $1 AND s.slug = $2`,
    [tokenHash, slug.toLowerCase()],
    { name: 'checkout_in_store' },
  );
  if (!rows[0]) return null;
  const { store_slug, store_currency, store_origin, config_version, ...row } = rows[0];
  return { store: { id: row.store_id, slug: store_slug, currency: store_currency, origin: store_origin ?? NO_STORE_ADDRESS }, row, configVersion: config_version };
}

/**
 * Everything a quote of the checkout's shipping rates reads, found in one round trip: the checkout
 * with its store, each stored line's catalog facts (null where the product is gone), the store's
 * zones holding the destination country (C15.2), the shipping apps to ask and the store's address
 * (C15.3, C15.4). Each part is the same rows the single-purpose queries give (`catalogLine`,
 * `findZonesForCountry`, `shippingAppsOf`), so the rules downstream cannot tell the difference.
 */
export interface CheckoutQuoteData {
  store: CheckoutStore;
  row: CheckoutRow;
  /** By line, in the checkout's order. */
  catalog: (CatalogLine | null)[];
  zones: StoredZone[];
  shipping: { apps: ShippingApp[]; origin: StoreAddress };
  /** The store's active functions of every target, in activation order (C11.2). */
  functions: StoreFunctionRow[];
  /** The shared rate cache's answers to the body of `row.rate_body_sha256`; null without one, or when not asked for. */
  cached: AnswersReadWithCheckout | null;
}

/** A line's catalog facts (CatalogLine) from product `p` and variant `v`: one list for the quote and `catalogLine`. */
const CATALOG_LINE_COLUMNS = `p.id AS product_id, p.num_id AS product_num_id, p.title, p.status, p.sku AS product_sku,
  p.price_minor AS product_price_minor, p.requires_shipping,
  (SELECT count(*)::int FROM variants cv WHERE cv.product_id = p.id) AS variant_count,
  v.id AS variant_id, v.num_id AS variant_num_id, v.name AS variant_name, v.value AS variant_value,
  v.sku AS variant_sku, v.price_minor AS variant_price_minor, v.discount_price_minor AS variant_discount_price_minor,
  v.weight::text AS weight, v.weight_unit`;

/** A stored catalog reference to the column it is compared with (as `byKind`, in SQL; anything else finds nothing). */
const REF_UUID = (ref: string) => `CASE WHEN ${ref} ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN (${ref})::uuid END`;
const REF_NUM = (ref: string) => `CASE WHEN ${ref} ~ '^[0-9]{1,18}$' THEN (${ref})::bigint END`;

/**
 * The quote statement over the checkouts that `found` selects, each row with `batch_n`: the
 * position (from 1) of the key it answers.
 */
const checkoutQuoteSql = (found: string) => `
WITH c AS (${found})
SELECT c.batch_n AS n, json_build_object('checkout', row_to_json(c),
  'catalog', (SELECT coalesce(json_agg(f ORDER BY l.n), '[]'::json)
     FROM jsonb_array_elements(c.line_items) WITH ORDINALITY AS l(item, n)
     LEFT JOIN LATERAL (
       SELECT ${CATALOG_LINE_COLUMNS}
         FROM products p
         LEFT JOIN variants v ON v.product_id = p.id
              AND (v.id = ${REF_UUID(`l.item->>'variant_id'`)} OR v.num_id = ${REF_NUM(`l.item->>'variant_id'`)})
        WHERE p.store_id = c.store_id
          AND (p.id = ${REF_UUID(`l.item->>'product_id'`)} OR p.num_id = ${REF_NUM(`l.item->>'product_id'`)})
        LIMIT 1
     ) f ON true),
  -- The cached answers to the body the checkout's last change foresaw (rate-cache.ts), when asked
  -- for (not read at all otherwise: CASE skips the subquery): none without one.
  'cached', CASE WHEN c.with_cached THEN (SELECT coalesce(json_agg(json_build_object('app_id', r.app_id, 'rates_url', r.rates_url, 'rates', r.rates, 'expires_at', r.expires_at)), '[]'::json)
     FROM shipping_rate_cache r WHERE r.body_sha256 = c.rate_body_sha256) END) AS quote
FROM c`;

/** The checkout with its store, of the key whose two values are the SQL `tokenHash` and `slug`. */
const checkoutOfKey = (tokenHash: string, slug: string) => `
  SELECT c.*, s.slug AS store_slug, s.currency AS store_currency, coalesce(v.version, 0)::text AS config_version
    FROM checkouts c JOIN stores s ON s.id = c.store_id
    LEFT JOIN store_checkout_configs v ON v.store_id = s.id
   WHERE c.token_hash = ${tokenHash} AND s.slug = ${slug}`;

/** One key. */
const CHECKOUT_QUOTE_SQL = checkoutQuoteSql(`SELECT 1 AS batch_n, $3::boolean AS with_cached, x.* FROM (${checkoutOfKey('$1', '$2')}) x`);

/**
 * Up to QUOTE_BATCH keys, in a fixed number of slots (unused ones null, which match nothing): a
 * statement whose shape and row estimate never change, so PostgreSQL plans it once (keys as JSON
 * rows, estimated at 100, crossed jit_above_cost and each execution was JIT-compiled, about 30 ms;
 * an array's estimate differs between custom and generic plans, docs/decisions.md). LATERAL with
 * LIMIT 1: each key is looked up by its two unique indexes, whatever the planner estimates of the keys.
 */
export const QUOTE_BATCH = 8;
export const CHECKOUT_QUOTE_BATCH_SQL = checkoutQuoteSql(`
  SELECT k.n AS batch_n, k.with_cached, x.*
    FROM (VALUES ${Array.from({ length: QUOTE_BATCH }, (_, i) => `(${i + 1}, $${3 * i + 1}::text, $${3 * i + 2}::text, $${3 * i + 3}::boolean)`).join(', ')}) AS k(n, token_hash, slug, with_cached)
    CROSS JOIN LATERAL (${checkoutOfKey('k.token_hash', 'k.slug')} LIMIT 1) x`);

interface QuoteKey {
  tokenHash: string;
  /** Lower case. */
  slug: string;
  /** Read the cached answers to the checkout's `rate_body_sha256` with it. */
  withCached: boolean;
}

/** The quote statement's answer for one key: one JSON column rather than two dozen (the driver's per-column work on every row is most of what reading it costs the service). */
interface QuoteJson {
  checkout: Record<string, unknown> & { store_slug: string; store_currency: string; config_version: string; batch_n: number; with_cached: boolean };
  catalog: (CatalogLine | null)[];
  /** Null when not asked for. */
  cached: StoredAnswerRow[] | null;
}

/** Reads the keys: one alone by its own statement, more by the batch statement, its unused slots null. */
async function readQuotes(q: Queryable, keys: QuoteKey[]): Promise<(QuoteJson | null)[]> {
  const { rows } = keys.length === 1
    ? await q.query<{ n: number; quote: QuoteJson }>(CHECKOUT_QUOTE_SQL, [keys[0].tokenHash, keys[0].slug, keys[0].withCached], { name: 'checkout_for_quote' })
    : await q.query<{ n: number; quote: QuoteJson }>(
      CHECKOUT_QUOTE_BATCH_SQL,
      Array.from({ length: QUOTE_BATCH }, (_, i) => keys[i] ?? null).flatMap((k) => [k?.tokenHash ?? null, k?.slug ?? null, k?.withCached ?? false]),
      { name: 'checkout_for_quote_batch' },
    );
  const found: (QuoteJson | null)[] = keys.map(() => null);
  for (const row of rows) found[row.n - 1] = row.quote;
  return found;
}

/** Quotes read through the same connection or pool are read together (src/db/batch-reader.ts). */
const quoteReaders = new WeakMap<Queryable, BatchReader<QuoteKey, QuoteJson>>();

function quoteReaderOf(q: Queryable): BatchReader<QuoteKey, QuoteJson> {
  let reader = quoteReaders.get(q);
  if (!reader) quoteReaders.set(q, (reader = new BatchReader({ read: (keys) => readQuotes(q, keys), maxBatch: QUOTE_BATCH })));
  return reader;
}

/** The checkout's timestamps, which come as JSON text in the one-column answer of the quote query. */
const CHECKOUT_DATES = ['completed_at', 'expires_at', 'created_at', 'updated_at'] as const;

/**
 * The checkout with this token hash in the store with this slug, and all a quote of its rates
 * reads; null when not found. `configs`: this process's copies of stores' sets, used when the
 * database says the copy is current and refreshed when it is not (without: read every time).
 * `withCachedAnswers`: read the shared rate cache's answers to the checkout's `rate_body_sha256`
 * too (the caller knows when it will not need them: checkout.service.ts `checkoutForQuote`).
 */
export async function findCheckoutForQuote(q: Queryable, slug: string, tokenHash: string, configs?: StoreConfigCache, withCachedAnswers = true): Promise<CheckoutQuoteData | null> {
  const key = slug.toLowerCase();
  const quote = await quoteReaderOf(q).load({ tokenHash, slug: key, withCached: withCachedAnswers });
  if (!quote) return null;
  const { checkout, catalog, cached } = quote;
  const { store_slug, store_currency, config_version, batch_n: _, with_cached: __, ...fields } = checkout;
  for (const key of CHECKOUT_DATES) fields[key] = fields[key] === null ? null : new Date(fields[key] as string);
  const row = fields as unknown as CheckoutRow;
  const config = await storeConfigAt(q, configs, key, row.store_id, config_version);
  return {
    store: { id: row.store_id, slug: store_slug, currency: store_currency, origin: config.origin },
    row,
    // A line whose product is gone aggregates as null.
    catalog: catalog.map((f) => (f && f.product_id !== null ? f : null)),
    zones: zonesForCountry(config.zones, row.shipping_address?.country_code),
    shipping: { apps: [...config.apps], origin: config.origin },
    functions: [...config.functions],
    cached: row.rate_body_sha256 === null || cached === null ? null : { bodySha256: row.rate_body_sha256, rows: cached },
  };
}

export type CheckoutChanges = Partial<Pick<CheckoutRow, 'email' | 'line_items' | 'shipping_address' | 'shipping_rate' | 'discount_code' | 'note' | 'payment_method' | 'function_results' | 'rate_body_sha256'>>;

export async function updateCheckout(q: Queryable, id: string, changes: CheckoutChanges, now: Date): Promise<CheckoutRow> {
  const { rows } = await updateRow<CheckoutRow>(q, 'checkouts', { id }, { ...changes, updated_at: now }, { casts: CASTS, returning: '*' });
  return rows[0];
}

export async function markCompleted(q: Queryable, id: string, orderId: string, now: Date, functionResults: FunctionResults | null, pricing: CompletedPricing): Promise<CheckoutRow> {
  const { rows } = await updateRow<CheckoutRow>(q, 'checkouts', { id }, { order_id: orderId, completed_at: now, updated_at: now, function_results: functionResults, completed_pricing: pricing }, { casts: CASTS, returning: '*' });
  return rows[0];
}

/**
 * What the cart functions' latest runs gave, without a change of the buyer's (C11.4: a GET shows
 * the last runs, a refused completion's too). `updated_at` stays: it dates the buyer's changes.
 */
export async function saveFunctionResults(q: Queryable, id: string, functionResults: FunctionResults | null): Promise<void> {
  await updateRow(q, 'checkouts', { id }, { function_results: functionResults }, { casts: CASTS });
}

/**
 * The chosen rate as it is offered now (its price, title or code moved since it was chosen,
 * checkout.service.ts `completeCheckout`), so the checkout shows what its completion would charge
 * and the shipping line its order would copy. `updated_at` stays:
 * it dates the buyer's changes.
 */
export async function saveChosenRate(q: Queryable, id: string, rate: ShippingRate): Promise<void> {
  await updateRow(q, 'checkouts', { id }, { shipping_rate: rate }, { casts: CASTS });
}

/** What a storefront checkout needs of its store: id, currency, the domain apps know it by, and its address (C15.4). */
export interface CheckoutStore {
  id: string;
  slug: string;
  currency: string;
  origin: StoreAddress;
}

export async function storeBySlug(q: Queryable, slug: string): Promise<CheckoutStore | null> {
  const { rows } = await q.query<Omit<CheckoutStore, 'origin'> & { origin: StoreAddress | null }>(
    `SELECT s.id, s.slug, s.currency, ${originJson('s.id')} AS origin FROM stores s WHERE s.slug = $1`,
    [slug.toLowerCase()],
    { name: 'checkout_store_by_slug' },
  );
  return rows[0] ? { ...rows[0], origin: rows[0].origin ?? NO_STORE_ADDRESS } : null;
}

/** The catalog facts of one line: its product and, when named, the product's variant. */
export interface CatalogLine {
  product_id: string;
  product_num_id: number;
  title: string;
  status: string;
  product_sku: string | null;
  product_price_minor: number | null;
  requires_shipping: boolean;
  variant_count: number;
  variant_id: string | null;
  variant_num_id: number | null;
  variant_name: string | null;
  variant_value: string | null;
  variant_sku: string | null;
  variant_price_minor: number | null;
  variant_discount_price_minor: number | null;
  weight: string | null;
  weight_unit: string | null;
}

/**
 * The product of the store named by UUID or numeric id, with the variant named (UUID or numeric
 * id) when it belongs to that product. Null when the store has no such product.
 */
export async function catalogLine(q: Queryable, storeId: string, productRef: string, variantRef: string | null): Promise<CatalogLine | null> {
  const { rows } = await q.query<CatalogLine>(
    `SELECT ${CATALOG_LINE_COLUMNS}
       FROM products p
       LEFT JOIN variants v ON v.product_id = p.id AND (v.id = $4::uuid OR v.num_id = $5::bigint)
      WHERE p.store_id = $1 AND (p.id = $2::uuid OR p.num_id = $3::bigint)`,
    [storeId, ...byKind(productRef), ...byKind(variantRef)],
    { name: 'checkout_catalog_line' },
  );
  return rows[0] ?? null;
}

/**
 * Whether every one of these products of the store is active now. Completion asks it inside its
 * transaction once the order has locked the products' rows (stock.ts), so the answer holds until
 * the order commits: a product archived or drafted meanwhile is seen, and one archived later waits.
 */
export async function productsAllActive(q: Queryable, storeId: string, productIds: string[]): Promise<boolean> {
  const ids = [...new Set(productIds)];
  if (!ids.length) return true;
  // Unnamed: a named statement on the embedded database runs as EXECUTE with literals (src/db/pglite.ts), which take no arrays.
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM products WHERE store_id = $1 AND id = ANY($2::uuid[]) AND status = 'active'`,
    [storeId, ids],
  );
  return rows[0].n === ids.length;
}

/** A catalog reference as [uuid, null] or [null, numeric id]: each compared with its own indexed column. */
const byKind = (ref: string | null): [string | null, string | null] => (ref === null ? [null, null] : isUuid(ref) ? [ref, null] : [null, ref]);

/**
 * Abandoned (never completed) checkouts last changed before `before`; returns how many went. The
 * function runs at them are erased in the same statement (input, output, error message, token;
 * the records stay until their own retention, C11.5): the erasure of a redacted customer (C9)
 * finds runs through their checkout, so runs kept past their checkout (a quote late in its life
 * runs after its last change; retention may be longer than 30 days) would be out of its reach.
 */
export async function purgeAbandonedCheckouts(q: Queryable, before: Date): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `WITH purged AS (DELETE FROM checkouts WHERE completed_at IS NULL AND updated_at < $1 RETURNING id),
     runs_at AS (SELECT id, input_id FROM function_runs WHERE checkout_id IN (SELECT id FROM purged)),
     ${erasedRuns('runs_at')}
     SELECT count(*)::int AS n FROM purged`,
    [before],
  );
  return rows[0].n;
}
