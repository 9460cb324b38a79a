// Quoting a checkout's shipping rates in few database round trips (issue 12's figures): the one
// query that reads the checkout with its lines' catalog facts, its zones and its shipping apps
// must read exactly what the single-purpose queries read; a quote of a store without apps is one
// query, and one answered from the rate cache by this process is one too; this process's memory
// of the cache keeps the cache's expiry (service clock) and falls back to the shared table; fresh
// answers reach the table behind the quote, several quotes' in one statement (rate-cache-writer.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { createHarness, type Harness } from './helpers/harness.js';
import { createTestApp, installApp, signupPartner } from './helpers/actors.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { address, insertProduct, orderStore } from './helpers/orders.js';
import { uuidv7 } from '../src/ids.js';
import type { QueryOptions } from '../src/db/db.js';
import { statementsOf as statementsOfDb } from './helpers/statements.js';
import { hashCheckoutToken } from '../src/checkout/checkout-token.js';
import { CHECKOUT_QUOTE_BATCH_SQL, QUOTE_BATCH, catalogLine, findCheckoutForQuote, findCheckoutInStore, type AskedLine } from '../src/checkout/checkouts.repo.js';
import { findZonesForCountry } from '../src/checkout/zone-rates.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RATE_CONNECTIONS_PER_ORIGIN, shippingAppsOf } from '../src/checkout/app-rates.js';
import { PER_HOST_CONCURRENCY } from '../src/webhooks/http-client.js';
import { RateMemo } from '../src/checkout/rate-memo.js';
import { CACHE_AFTER_FAILURE_MS, CACHE_AFTER_SUCCESS_MS, CACHED_ANSWERS_SQL } from '../src/checkout/rate-cache.js';
import { RateCacheWriter } from '../src/checkout/rate-cache-writer.js';

let h: Harness;
let rx: Receiver;
beforeAll(async () => {
  h = await createHarness();
  rx = await startReceiver((req) =>
    req.path === '/down'
      ? { status: 503, body: 'down' }
      : { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rates: [{ service_name: 'Courier', service_code: 'courier', total_price: 1450, currency: 'USD' }] }) });
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

type Store = Awaited<ReturnType<typeof orderStore>>;

async function zone(storeId: string, name: string, countries: string[], extra: { type?: string; minWeight?: string; maxPrice?: string } = {}) {
  const id = uuidv7();
  await h.db.query(
    `INSERT INTO shipping_zones (id, store_id, name, countries, price_minor, type, min_weight, max_price, created_at, updated_at)
     VALUES ($1, $2, $3, $4::jsonb, 499, $5, $6, $7, now(), now())`,
    [id, storeId, name, JSON.stringify(countries), extra.type ?? 'Simple', extra.minWeight ?? null, extra.maxPrice ?? null],
  );
  return id;
}

const base = (s: Store) => `/storefront/${s.merchant.slug}/checkouts`;

async function checkout(s: Store, lineItems: unknown[]): Promise<string> {
  const res = await h.req('POST', base(s), { body: { email: 'buyer@example.com', line_items: lineItems, shipping_address: address } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.checkout.token;
}

async function shippingApp(s: Store, path: string, scopes = ['write_shipping']) {
  const partner = await signupPartner(h);
  const app = await createTestApp(h, partner.token, { scopes, extensions: { shipping: { ratesUrl: `${rx.url}${path}` } } });
  await installApp(h, s.merchant, app);
  return app;
}

const statementsOf = (fn: () => Promise<unknown>) => statementsOfDb(h.deps.db, fn);

/** The database queries `fn` makes, by statement name (or the SQL's start when unnamed). */
const queriesOf = async (fn: () => Promise<unknown>): Promise<string[]> => (await statementsOf(fn)).map((q) => q.name);

const quote = async (s: Store, token: string) => {
  const res = await h.req('GET', `${base(s)}/${token}/shipping_rates`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.shipping_rates as { handle: string; source: string | null }[];
};

describe('the quote query reads what the single-purpose queries read', () => {
  it('lines (variants, numeric ids, a product gone), zones of the destination country, apps and origin', async () => {
    const s = await orderStore(h);
    const storeId = s.merchant.storeId;
    const plain = await insertProduct(h, storeId, { price: 1250, stock: 10, sku: 'P-1' });
    const shirt = await insertProduct(h, storeId, { title: 'Shirt', variants: [{ value: 'M', price: 2000, discountPrice: 1500, stock: 5, sku: 'SH-M' }, { value: 'L', price: 2100, stock: 5 }] });
    await h.db.query(`UPDATE variants SET weight = 1.5, weight_unit = 'lb' WHERE id = $1`, [shirt.variants[0].id]);
    const gb = await zone(storeId, 'UK', ['GB', 'IE']);
    const heavy = await zone(storeId, 'Heavy', ['GB'], { type: 'Weight', minWeight: '0.5' });
    await zone(storeId, 'France', ['FR']);
    const cheap = await zone(storeId, 'Cheap', ['GB'], { type: 'Price', maxPrice: '10.005' });
    const courier = await shippingApp(s, '/rates');
    await shippingApp(s, '/rates', ['read_shipping']); // no write_shipping: not asked
    const put = await h.req('PUT', '/stores/address', { token: s.merchant.token, body: { address1: '1 Dock Road', city: 'Leeds', country: 'GB', zip: 'LS1 1AA' } });
    expect(put.statusCode, put.body).toBe(200);

    const token = await checkout(s, [
      { product_id: plain.id, quantity: 2 },
      { product_id: shirt.numId, variant_id: shirt.variants[0].numId, quantity: 1 },
    ]);
    // Lines as stored, plus one naming a product that is gone and one by numeric ids (as `catalogLine` takes them).
    const stored = (await h.db.query<{ line_items: AskedLine[] }>('SELECT line_items FROM checkouts WHERE token_hash = $1', [hashCheckoutToken(token)])).rows[0].line_items;
    const lines: AskedLine[] = [
      ...stored,
      { id: uuidv7(), product_id: uuidv7(), variant_id: null, quantity: 1 },
      { id: uuidv7(), product_id: String(shirt.numId), variant_id: String(shirt.variants[1].numId), quantity: 3 },
      { id: uuidv7(), product_id: 'not-an-id', variant_id: null, quantity: 1 },
    ];
    await h.db.query('UPDATE checkouts SET line_items = $2::jsonb WHERE token_hash = $1', [hashCheckoutToken(token), JSON.stringify(lines)]);

    const found = (await findCheckoutForQuote(h.db, s.merchant.slug.toUpperCase(), hashCheckoutToken(token)))!;
    expect(found.store).toMatchObject({ id: storeId, slug: s.merchant.slug, currency: 'USD' });
    expect(found.row.line_items).toEqual(lines);
    expect(found.row.expires_at).toBeInstanceOf(Date);
    expect(found.row).toEqual((await findCheckoutInStore(h.db, s.merchant.slug, hashCheckoutToken(token)))!.row);
    const single = [];
    for (const l of lines) single.push(l.product_id === 'not-an-id' ? null : await catalogLine(h.db, storeId, l.product_id, l.variant_id));
    expect(found.catalog).toEqual(single);
    expect(found.catalog[2]).toBeNull();
    expect(found.catalog[1]).toMatchObject({ variant_id: shirt.variants[0].id, weight: expect.stringMatching(/^1\.5/), weight_unit: 'lb' });

    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
    expect([...found.zones].sort(byId)).toEqual((await findZonesForCountry(h.db, storeId, 'GB')).sort(byId));
    expect(found.zones.map((z) => z.id).sort()).toEqual([gb, heavy, cheap].sort());
    expect(found.shipping).toEqual(await shippingAppsOf(h.deps, storeId));
    expect(found.shipping.apps.map((a) => a.id)).toEqual([courier.appId]);
    expect(found.shipping.origin).toMatchObject({ address1: '1 Dock Road', city: 'Leeds', country: 'GB', zip: 'LS1 1AA', phone: null });

    // Not found: another store's slug, an unknown token.
    const other = await orderStore(h);
    expect(await findCheckoutForQuote(h.db, other.merchant.slug, hashCheckoutToken(token))).toBeNull();
    expect(await findCheckoutForQuote(h.db, s.merchant.slug, 'f'.repeat(64))).toBeNull();
  });

  it('a store without apps or address: no apps, every origin field null; no address on the checkout: no zones', async () => {
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId, { price: 500, stock: 1 });
    await zone(s.merchant.storeId, 'UK', ['GB']);
    const res = await h.req('POST', base(s), { body: { line_items: [{ product_id: product.id, quantity: 1 }] } });
    const token = res.json().data.checkout.token;
    const found = (await findCheckoutForQuote(h.db, s.merchant.slug, hashCheckoutToken(token)))!;
    expect(found.zones).toEqual([]);
    expect(found.shipping).toEqual({ apps: [], origin: { address1: null, address2: null, city: null, province: null, country: null, zip: null, phone: null } });
  });
});

describe('quotes asked together are read together (src/db/batch-reader.ts), each its own', () => {
  it("19 keys in one turn, across two stores, misses among them: three statements, and each key's answer is the one it gets alone", async () => {
    const stores = [await orderStore(h), await orderStore(h)];
    const tokens: { s: Store; token: string }[] = [];
    for (const [i, s] of stores.entries()) {
      await zone(s.merchant.storeId, `Zone ${i}`, ['GB']);
      for (let j = 0; j < 6 + i; j++) {
        const product = await insertProduct(h, s.merchant.storeId, { price: 100 * (j + 1) + i, stock: 10, sku: `S${i}-${j}` });
        tokens.push({ s, token: await checkout(s, [{ product_id: product.id, quantity: j + 1 }]) });
      }
    }
    const [a, b] = stores;
    const keys = [
      ...tokens.map(({ s, token }) => ({ slug: s.merchant.slug, hash: hashCheckoutToken(token) })),
      // Misses: a token under the other store's slug (both ways), an unknown token, a slug in capitals (found: slugs are compared in lower case).
      { slug: b.merchant.slug, hash: hashCheckoutToken(tokens[0].token) },
      { slug: a.merchant.slug, hash: hashCheckoutToken(tokens[tokens.length - 1].token) },
      { slug: a.merchant.slug, hash: 'e'.repeat(64) },
      { slug: a.merchant.slug.toUpperCase(), hash: hashCheckoutToken(tokens[1].token) },
      { slug: 'no-such-store', hash: hashCheckoutToken(tokens[2].token) },
      { slug: b.merchant.slug, hash: hashCheckoutToken(tokens[7].token) },
    ];
    expect(keys).toHaveLength(19);
    // Every other key asks for the cached rate answers too (none are cached: an empty list, or null when not asked for).
    const alone = [];
    for (const [i, k] of keys.entries()) alone.push(await findCheckoutForQuote(h.db, k.slug, k.hash, undefined, i % 2 === 0));
    expect(alone.map((f) => f?.row.token_hash ?? null)).toEqual([...tokens.map(({ token }) => hashCheckoutToken(token)), null, null, null, hashCheckoutToken(tokens[1].token), null, hashCheckoutToken(tokens[7].token)]);

    let together: unknown[] = [];
    const queries = await queriesOf(async () => (together = await Promise.all(keys.map((k, i) => findCheckoutForQuote(h.db, k.slug, k.hash, undefined, i % 2 === 0)))));
    // (Each found key's store set is read after, as no copy is passed here.)
    expect(queries.filter((q) => q.startsWith('checkout_for_quote'))).toEqual(['checkout_for_quote_batch', 'checkout_for_quote_batch', 'checkout_for_quote_batch']);
    expect(together).toEqual(alone);
  });

  it('concurrent GET .../shipping_rates of two stores: each buyer gets the rates of their own checkout', async () => {
    const stores = [await orderStore(h), await orderStore(h)];
    const quotes: { s: Store; token: string }[] = [];
    for (const [i, s] of stores.entries()) {
      await zone(s.merchant.storeId, `Zone ${i}`, ['GB'], { type: 'Price', maxPrice: `${(i + 1) * 30}.00` });
      await zone(s.merchant.storeId, `Heavy ${i}`, ['GB'], { type: 'Weight', minWeight: '2' });
      for (let j = 0; j < 5; j++) {
        const product = await insertProduct(h, s.merchant.storeId, { price: 1000 * (j + 1), stock: 10 });
        quotes.push({ s, token: await checkout(s, [{ product_id: product.id, quantity: 1 + (j % 3) }]) });
      }
    }
    const alone = [];
    for (const { s, token } of quotes) alone.push(await quote(s, token));
    for (let round = 0; round < 3; round++) {
      expect(await Promise.all(quotes.map(({ s, token }) => quote(s, token)))).toEqual(alone);
    }
    // The checkouts differ in what they are offered: a mix-up would show.
    expect(new Set(alone.map((r) => JSON.stringify(r))).size).toBeGreaterThan(2);
  });
});

/** A node of an EXPLAIN (FORMAT JSON) plan, as far as the tests read it. */
type PlanNode = { 'Node Type': string; 'Total Cost': number; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] };

describe('the batch quote statement', () => {
  it('is planned once, by the keys\' indexes, under the cost that would JIT-compile it, however many checkouts there are', async () => {
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId, { price: 100, stock: 1 });
    await h.db.query(
      `INSERT INTO checkouts (id, store_id, token_hash, currency, line_items, expires_at, created_at, updated_at)
       SELECT gen_random_uuid(), $1, md5(g::text) || md5(g::text || 'x'), 'USD', $2::jsonb, now(), now(), now() FROM generate_series(1, 5000) g`,
      [s.merchant.storeId, JSON.stringify([{ id: uuidv7(), product_id: product.id, variant_id: null, quantity: 1 }])],
    );
    await h.db.exec('ANALYZE checkouts');
    const types = Array.from({ length: QUOTE_BATCH }, () => 'text, text, boolean').join(', ');
    const args = Array.from({ length: QUOTE_BATCH }, (_, i) => `'${'ab'.repeat(32)}${i}', '${s.merchant.slug}', true`).join(', ');
    const { plan, jitAbove } = await h.db.transaction(async (tx) => {
      await tx.exec('SET LOCAL plan_cache_mode = force_generic_plan');
      await tx.exec(`PREPARE quote_batch_plan_test(${types}) AS ${CHECKOUT_QUOTE_BATCH_SQL}`);
      try {
        const { rows } = await tx.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) EXECUTE quote_batch_plan_test(${args})`);
        const jit = await tx.query<{ v: string }>(`SELECT current_setting('jit_above_cost') AS v`);
        return { plan: rows[0]['QUERY PLAN'], jitAbove: Number(jit.rows[0].v) };
      } finally {
        await tx.exec('DEALLOCATE quote_batch_plan_test');
      }
    });
    const text = JSON.stringify(plan);
    expect(plan[0].Plan['Total Cost'], text).toBeLessThan(jitAbove);
    const reads: string[] = [];
    const walk = (n: PlanNode) => {
      if (n['Relation Name']) reads.push(`${n['Relation Name']}: ${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`);
      n.Plans?.forEach(walk);
    };
    // How each table is read, from every node of the plan.
    walk(plan[0].Plan);
    expect(reads, text).toContain('checkouts: Index Scan checkouts_token_hash_key');
    expect(reads.filter((r) => r.startsWith('checkouts:')), text).toEqual(['checkouts: Index Scan checkouts_token_hash_key']);
    // The rate cache's answers read with a checkout: by their key's index, and only by it.
    expect(reads.filter((r) => r.startsWith('shipping_rate_cache:')), text).toHaveLength(1);
    expect(reads, text).not.toContain('shipping_rate_cache: Seq Scan');
    expect(text.match(/"Index Name":"shipping_rate_cache[a-z_]*"/g), text).toEqual(['"Index Name":"shipping_rate_cache_pkey"']);
    await h.db.query('DELETE FROM checkouts WHERE store_id = $1', [s.merchant.storeId]);
  });
});

/** A quote, then the table write that follows it (rate-cache-writer.ts), so both are seen by `queriesOf`. */
const quoteAndWrite = async (s: Store, token: string) => {
  const offered = await quote(s, token);
  await h.deps.rateCacheWriter.flush();
  return offered;
};

describe('round trips of GET .../shipping_rates', () => {
  // A write left by one test must not land among the next test's queries.
  afterEach(() => h.deps.rateCacheWriter.flush());

  it('zones only: one query (two for the first quote of the store in this process: its set, store-config-cache.ts)', async () => {
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 10 });
    const z = await zone(s.merchant.storeId, 'UK', ['GB']);
    const token = await checkout(s, [{ product_id: product.id, quantity: 1 }]);
    let offered: unknown;
    expect(await queriesOf(async () => (offered = await quote(s, token)))).toEqual(['checkout_for_quote', 'checkout_store_config']);
    expect(offered).toMatchObject([{ handle: `zone-${z}` }]);
    expect(await queriesOf(async () => (offered = await quote(s, token)))).toEqual(['checkout_for_quote']);
    expect(offered).toMatchObject([{ handle: `zone-${z}` }]);
  });

  it('apps: asked once, then answered from this process without a query; another process reads the shared cache', async () => {
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 10 });
    await zone(s.merchant.storeId, 'UK', ['GB']);
    await shippingApp(s, '/rates');
    const token = await checkout(s, [{ product_id: product.id, quantity: 1 }]);
    const asked = () => rx.received.filter((r) => r.path === '/rates').length;
    const before = asked();

    // The answers' write follows the quote (the quote does not wait for it: see 'the rate cache writer').
    // The cache's answers to the body were read with the checkout (none yet): no lookup of its own.
    expect(await queriesOf(() => quoteAndWrite(s, token))).toEqual(['checkout_for_quote', 'checkout_store_config', 'shipping_rate_cache_put_many']);
    expect(asked()).toBe(before + 1);
    let offered: { source: string | null }[] = [];
    expect(await queriesOf(async () => (offered = await quote(s, token)))).toEqual(['checkout_for_quote']);
    expect(offered.map((r) => r.source)).toEqual([null, expect.any(String)]);
    expect(asked()).toBe(before + 1);

    // Another process (its memory empty) finds the answer in the table, read with the checkout, and remembers it.
    const memo = h.deps.rateMemo;
    h.deps.rateMemo = new RateMemo();
    try {
      expect(await queriesOf(() => quote(s, token))).toEqual(['checkout_for_quote']);
      expect(await queriesOf(() => quote(s, token))).toEqual(['checkout_for_quote']);
      expect(asked()).toBe(before + 1);
    } finally {
      h.deps.rateMemo = memo;
    }

    // The memory keeps the cache's 15 minutes on the service clock.
    await h.advance(CACHE_AFTER_SUCCESS_MS / 1000 - 5);
    await quote(s, token);
    expect(asked()).toBe(before + 1);
    await h.advance(6);
    await quote(s, token);
    expect(asked()).toBe(before + 2);
  });

  it('two apps asked: both answers written in one statement, each with its own expiry', async () => {
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 10 });
    const up = await shippingApp(s, '/rates');
    const down = await shippingApp(s, '/down');
    const token = await checkout(s, [{ product_id: product.id, quantity: 1 }]);
    const now = h.clock.nowMs();
    expect(await queriesOf(() => quoteAndWrite(s, token))).toEqual(['checkout_for_quote', 'checkout_store_config', 'shipping_rate_cache_put_many']);
    const { rows } = await h.db.query<{ app_id: string; ok: boolean; rates: unknown[]; expires_at: Date }>(
      'SELECT app_id, ok, rates, expires_at FROM shipping_rate_cache WHERE app_id IN ($1, $2)', [up.appId, down.appId]);
    const byApp = new Map(rows.map((r) => [r.app_id, r]));
    expect(byApp.get(up.appId)).toMatchObject({ ok: true, rates: [expect.objectContaining({ service_code: 'courier' })] });
    expect(byApp.get(down.appId)).toMatchObject({ ok: false, rates: [] });
    expect(new Date(byApp.get(up.appId)!.expires_at).getTime() - now).toBeGreaterThanOrEqual(CACHE_AFTER_SUCCESS_MS);
    expect(new Date(byApp.get(down.appId)!.expires_at).getTime() - now).toBeGreaterThanOrEqual(CACHE_AFTER_FAILURE_MS);
    expect(new Date(byApp.get(down.appId)!.expires_at).getTime() - now).toBeLessThan(CACHE_AFTER_SUCCESS_MS);
  });

  it("a failure is remembered 30 seconds, by this process's memory as by the table", async () => {
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 10 });
    await shippingApp(s, '/down');
    const token = await checkout(s, [{ product_id: product.id, quantity: 1 }]);
    const asked = () => rx.received.filter((r) => r.path === '/down').length;
    const before = asked();
    expect(await quoteAndWrite(s, token)).toEqual([]);
    await h.advance(CACHE_AFTER_FAILURE_MS / 1000 - 1);
    expect(await queriesOf(() => quote(s, token))).toEqual(['checkout_for_quote']);
    expect(asked()).toBe(before + 1);
    await h.advance(2);
    expect(await quote(s, token)).toEqual([]);
    expect(asked()).toBe(before + 2);
  });
});

describe("the cache's answers read with the checkout (checkouts.rate_body_sha256, C15.3)", () => {
  afterEach(() => h.deps.rateCacheWriter.flush());

  const storedHash = async (token: string) =>
    (await h.db.query<{ h: string | null }>('SELECT rate_body_sha256 AS h FROM checkouts WHERE token_hash = $1', [hashCheckoutToken(token)])).rows[0].h;

  /** Quotes as a process that remembers nothing, with nothing cached: the body the quote sends, or null when it asks no app. */
  const bodySent = async (s: Store, token: string, appId: string): Promise<string | null> => {
    await h.deps.rateCacheWriter.flush();
    await h.db.query('DELETE FROM shipping_rate_cache WHERE app_id = $1', [appId]);
    const memo = h.deps.rateMemo;
    h.deps.rateMemo = new RateMemo();
    const before = rx.received.length;
    try {
      await quote(s, token);
    } finally {
      h.deps.rateMemo = memo;
    }
    const sent = rx.received.slice(before).filter((r) => r.path === '/hash-rates');
    expect(sent.length).toBeLessThanOrEqual(1);
    return sent[0] ? sent[0].raw.toString('utf8') : null;
  };

  it('is the hash of the body a quote sends, after the creation and after every change, whatever the address and lines', async () => {
    const s = await orderStore(h);
    const storeId = s.merchant.storeId;
    const app = await shippingApp(s, '/hash-rates');
    const put = await h.req('PUT', '/stores/address', { token: s.merchant.token, body: { address1: ' 9 Quay ', city: 'Cork', country: 'IE', zip: 'T12' } });
    expect(put.statusCode, put.body).toBe(200);
    const plain = await insertProduct(h, storeId, { price: 1250, sku: 'P-1' });
    const shirt = await insertProduct(h, storeId, { title: 'Shirt', variants: [{ value: 'M', price: 2000, discountPrice: 1500, stock: 50, sku: 'SH-M' }, { value: 'L', price: 2100, stock: 50 }] });
    await h.db.query(`UPDATE variants SET weight = 1.5, weight_unit = 'lb' WHERE id = $1`, [shirt.variants[0].id]);
    const card = await insertProduct(h, storeId, { title: 'Gift card', price: 500 });
    await h.db.query('UPDATE products SET requires_shipping = false WHERE id = $1', [card.id]);

    const text = fc.constantFrom(undefined, null, '', ' ', 'x', ' Ünïcode ', '12 Rue', 'A\tB');
    const addressArb = fc.record({
      first_name: text, last_name: text, company: text, address1: text, address2: text, city: text, province: text,
      province_code: fc.constantFrom(undefined, null, 'CO', ' ny '), zip: text, phone: text, country_code: fc.constantFrom('GB', 'US', 'IE'),
    }, { requiredKeys: ['country_code'] });
    const lineArb = fc.oneof(
      fc.record({ product_id: fc.constant(plain.id), quantity: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ product_id: fc.constant(String(shirt.numId)), variant_id: fc.constantFrom(shirt.variants[0].id, String(shirt.variants[1].numId)), quantity: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ product_id: fc.constant(card.id), quantity: fc.constant(1) }),
    );
    const changeArb = fc.record({ shipping_address: fc.option(addressArb), line_items: fc.array(lineArb, { minLength: 1, maxLength: 3 }), note: fc.string({ maxLength: 5 }) }, { requiredKeys: [] });

    await fc.assert(
      fc.asyncProperty(fc.option(addressArb, { nil: undefined }), fc.array(lineArb, { minLength: 1, maxLength: 3 }), changeArb, async (shippingAddress, lineItems, change) => {
        const created = await h.req('POST', base(s), { body: { email: 'buyer@example.com', line_items: lineItems, ...(shippingAddress ? { shipping_address: shippingAddress } : {}) } });
        expect(created.statusCode, created.body).toBe(201);
        const token = created.json().data.checkout.token;
        for (const step of ['created', 'changed']) {
          if (step === 'changed') {
            const changed = await h.req('PATCH', `${base(s)}/${token}`, { body: change });
            expect(changed.statusCode, changed.body).toBe(200);
          }
          const body = await bodySent(s, token, app.appId);
          expect(await storedHash(token), `${step}: ${body}`).toBe(body === null ? null : createHash('sha256').update(body).digest('hex'));
        }
      }),
      { numRuns: 25 },
    );
  });

  it('are not read when this process will not need them: its copy of the store has no shipping app, or it remembers the last quote', async () => {
    /** Whether each quote query of `fn` asked for the cached answers (its third parameter). */
    const asked = async (fn: () => Promise<unknown>) =>
      (await statementsOf(fn)).filter((q) => q.name === 'checkout_for_quote').map((q) => q.params[2]);
    const zonesOnly = await orderStore(h);
    await zone(zonesOnly.merchant.storeId, 'UK', ['GB']);
    const plain = await checkout(zonesOnly, [{ product_id: (await insertProduct(h, zonesOnly.merchant.storeId, { price: 1250, stock: 10 })).id, quantity: 1 }]);
    expect(await asked(() => quote(zonesOnly, plain))).toEqual([true]); // the store's set not yet held
    expect(await asked(() => quote(zonesOnly, plain))).toEqual([false]);

    const s = await orderStore(h);
    await shippingApp(s, '/rates');
    const token = await checkout(s, [{ product_id: (await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 10 })).id, quantity: 1 }]);
    expect(await asked(() => quoteAndWrite(s, token))).toEqual([true]); // asks the app
    expect(await asked(() => quote(s, token))).toEqual([true]); // answered from memory: the quote is remembered after it
    expect(await asked(() => quote(s, token))).toEqual([false]);
    const other = await checkout(s, [{ product_id: (await insertProduct(h, s.merchant.storeId, { price: 99, stock: 10 })).id, quantity: 1 }]);
    expect(await asked(() => quote(s, other))).toEqual([true]);
  });

  it("stale (the store's address or a product changed since) or missing: the quote looks its own body up, and another process's answer still counts", async () => {
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 10 });
    await shippingApp(s, '/rates');
    const token = await checkout(s, [{ product_id: product.id, quantity: 1 }]);
    const asked = () => rx.received.filter((r) => r.path === '/rates').length;
    const memo = h.deps.rateMemo;
    /** A quote in a process that remembers nothing: its queries (the table's write after it included). */
    const freshProcessQuote = async () => {
      h.deps.rateMemo = new RateMemo();
      try {
        return await queriesOf(() => quoteAndWrite(s, token));
      } finally {
        h.deps.rateMemo = memo;
      }
    };
    try {
      const before = asked();
      expect(await freshProcessQuote()).toEqual(['checkout_for_quote', 'checkout_store_config', 'shipping_rate_cache_put_many']);
      expect(asked()).toBe(before + 1);

      for (const [i, staleBy] of [
        () => h.req('PUT', '/stores/address', { token: s.merchant.token, body: { address1: '1 Dock Road', city: 'Leeds', country: 'GB', zip: 'LS1 1AA' } }),
        () => h.db.query(`UPDATE products SET title = 'Renamed' WHERE id = $1`, [product.id]),
      ].entries()) {
        const hint = await storedHash(token);
        await staleBy();
        // A new body: looked up (a miss), asked, written.
        const config = i === 0 ? ['checkout_store_config'] : []; // a new address is a new store set
        expect(await freshProcessQuote()).toEqual(['checkout_for_quote', ...config, 'shipping_rate_cache_lookup', 'shipping_rate_cache_put_many']);
        expect(asked()).toBe(before + 2 + i);
        // Another process: looked up and found, not asked.
        expect(await freshProcessQuote()).toEqual(['checkout_for_quote', 'shipping_rate_cache_lookup']);
        expect(asked()).toBe(before + 2 + i);
        // Any change of the checkout takes the new body's hash: the lookup is read with the checkout again.
        expect((await h.req('PATCH', `${base(s)}/${token}`, { body: { note: `change ${i}` } })).statusCode).toBe(200);
        expect(await storedHash(token)).not.toBe(hint);
        expect(await freshProcessQuote()).toEqual(['checkout_for_quote']);
        expect(asked()).toBe(before + 2 + i);
      }

      // A checkout without one (made before there was one): looked up, found.
      await h.db.query('UPDATE checkouts SET rate_body_sha256 = NULL WHERE token_hash = $1', [hashCheckoutToken(token)]);
      expect(await freshProcessQuote()).toEqual(['checkout_for_quote', 'shipping_rate_cache_lookup']);
      expect(asked()).toBe(before + 3);

      // What is read with the checkout keeps the cache's expiry (service clock): past it, the app is asked.
      expect((await h.req('PATCH', `${base(s)}/${token}`, { body: { note: 'again' } })).statusCode).toBe(200);
      await h.advance(CACHE_AFTER_SUCCESS_MS / 1000 + 1);
      expect(await freshProcessQuote()).toEqual(['checkout_for_quote', 'shipping_rate_cache_put_many']);
      expect(asked()).toBe(before + 4);
    } finally {
      h.deps.rateMemo = memo;
    }
  });
});

describe('the rate cache writer (C15.3): fresh answers reach the shared table behind the quote', () => {
  const cached = async (appIds: string[]) =>
    (await h.db.query<{ app_id: string; body_sha256: string; ok: boolean; rates: { service_code: string }[] }>(
      'SELECT app_id, body_sha256, ok, rates FROM shipping_rate_cache WHERE app_id = ANY($1::uuid[])', [appIds])).rows;

  it("answers without waiting for the write; several quotes' answers, a key twice among them, in one statement; then another process reads them", async () => {
    // A writer that only writes when flushed, so what is gathered is the test's to see.
    const previous = h.deps.rateCacheWriter;
    const writer = new RateCacheWriter(h.db, h.deps.log, 60_000);
    h.deps.rateCacheWriter = writer;
    const memo = h.deps.rateMemo;
    try {
      const s = await orderStore(h);
      const product = await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 10 });
      const up = await shippingApp(s, '/rates');
      const down = await shippingApp(s, '/down');
      // Three quantities, three request bodies.
      const tokens = [await checkout(s, [{ product_id: product.id, quantity: 1 }]), await checkout(s, [{ product_id: product.id, quantity: 2 }]), await checkout(s, [{ product_id: product.id, quantity: 3 }])];
      const asked = () => rx.received.filter((r) => r.path === '/rates').length;
      const before = asked();
      for (const [i, token] of tokens.entries()) {
        let offered: { source: string | null }[] = [];
        // The store's first quote in this process reads its set too (store-config-cache.ts).
        const first = i === 0 ? ['checkout_store_config'] : [];
        expect(await queriesOf(async () => (offered = await quote(s, token)))).toEqual(['checkout_for_quote', ...first]);
        expect(offered.map((r) => r.source)).toEqual([up.handle]);
      }
      expect(asked()).toBe(before + 3);
      expect(await cached([up.appId, down.appId])).toEqual([]);

      // Another process (its memory empty) misses the table until the write and asks the apps
      // again: harmless for a cache. Its answer to the same body and app joins the same batch.
      h.deps.rateMemo = new RateMemo();
      await quote(s, tokens[0]);
      expect(asked()).toBe(before + 4);

      expect(await queriesOf(() => writer.flush())).toEqual(['shipping_rate_cache_put_many']);
      const rows = await cached([up.appId, down.appId]);
      expect(rows).toHaveLength(6); // three bodies, two apps: the key seen twice is one row
      expect(new Set(rows.map((r) => r.body_sha256)).size).toBe(3);
      expect(rows.filter((r) => r.app_id === up.appId).every((r) => r.ok && r.rates[0].service_code === 'courier')).toBe(true);
      expect(rows.filter((r) => r.app_id === down.appId).every((r) => !r.ok && r.rates.length === 0)).toBe(true);

      // Yet another process finds every answer in the table (read with each checkout); no app is asked.
      h.deps.rateMemo = new RateMemo();
      for (const token of tokens) {
        expect(await queriesOf(() => quote(s, token))).toEqual(['checkout_for_quote']);
      }
      expect(asked()).toBe(before + 4);
      expect(await queriesOf(() => writer.flush())).toEqual([]);
    } finally {
      h.deps.rateMemo = memo;
      h.deps.rateCacheWriter = previous;
      await writer.close();
    }
  });

  it('a key given twice before a write: the later answer is the one written', async () => {
    const s = await orderStore(h);
    const app = await shippingApp(s, '/rates');
    const writer = new RateCacheWriter(h.db, h.deps.log, 60_000);
    const ratesUrl = `${rx.url}/rates`;
    const nowMs = h.clock.nowMs();
    writer.add('a'.repeat(64), [{ appId: app.appId, ratesUrl, ok: false, rates: [], expiresMs: nowMs + CACHE_AFTER_FAILURE_MS }]);
    const later = { service_code: 'later', service_name: 'Later', price_minor: 100, description: null, min_delivery_date: null, max_delivery_date: null };
    writer.add('a'.repeat(64), [{ appId: app.appId, ratesUrl, ok: true, rates: [later], expiresMs: nowMs + CACHE_AFTER_SUCCESS_MS }]);
    writer.add('b'.repeat(64), [{ appId: app.appId, ratesUrl, ok: false, rates: [], expiresMs: nowMs + CACHE_AFTER_FAILURE_MS }]);
    expect(await queriesOf(() => writer.close())).toEqual(['shipping_rate_cache_put_many']);
    const rows = await cached([app.appId]);
    expect(rows.map((r) => [r.body_sha256[0], r.ok, r.rates.map((x) => x.service_code)]).sort()).toEqual([['a', true, ['later']], ['b', false, []]]);
  });

  it('a failed write is logged; the buyer gets the rates, this process still remembers them, and the next write goes through', async () => {
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 10 });
    const app = await shippingApp(s, '/rates');
    const token = await checkout(s, [{ product_id: product.id, quantity: 1 }]);
    const asked = () => rx.received.filter((r) => r.path === '/rates').length;
    const before = asked();
    const db = h.deps.db;
    const original = db.query.bind(db);
    const failing = vi.spyOn(db, 'query').mockImplementation(((sql: string, params?: unknown[], options?: QueryOptions) =>
      options?.name === 'shipping_rate_cache_put_many' ? Promise.reject(new Error('database went away')) : original(sql, params, options)) as typeof db.query);
    const error = vi.spyOn(h.deps.log, 'error');
    try {
      expect((await quote(s, token)).map((r) => r.source)).toEqual([app.handle]);
      await h.deps.rateCacheWriter.flush(); // resolves: the failure is the writer's to log
      expect(error.mock.calls.map((c) => c[1])).toEqual(['caching shipping rates failed']);
    } finally {
      failing.mockRestore();
      error.mockRestore();
    }
    expect(await cached([app.appId])).toEqual([]);
    expect((await quote(s, token)).map((r) => r.source)).toEqual([app.handle]);
    expect(asked()).toBe(before + 1);

    // Another body: written as usual.
    const other = await checkout(s, [{ product_id: product.id, quantity: 2 }]);
    await quoteAndWrite(s, other);
    expect(await cached([app.appId])).toHaveLength(1);
  });
});

describe('the rate cache lookup', () => {
  it("goes by the key's leading body hash in a generic plan, whatever the statistics say of expiry", async () => {
    const s = await orderStore(h);
    const app = await shippingApp(s, '/rates');
    const live = new Date(h.clock.nowMs() + CACHE_AFTER_SUCCESS_MS);
    await h.db.query(
      `INSERT INTO shipping_rate_cache (app_id, body_sha256, rates_url, ok, rates, expires_at)
       SELECT $1, md5(g::text) || md5(g::text || 'x'), 'http://x', true, '[]', $2 FROM generate_series(1, 5000) g`,
      [app.appId, live],
    );
    const hit = (await h.db.query<{ h: string }>(`SELECT md5('77') || md5('77x') AS h`)).rows[0].h;
    const planOf = () => h.db.transaction(async (tx) => {
      // A named statement's plan after five runs, forced: it cannot see the parameters' values.
      await tx.exec('SET LOCAL plan_cache_mode = force_generic_plan');
      await tx.exec(`PREPARE rate_cache_plan_test(text, text) AS ${CACHED_ANSWERS_SQL}`);
      try {
        const { rows } = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE rate_cache_plan_test('${JSON.stringify([app.appId])}', '${hit}')`);
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await tx.exec('DEALLOCATE rate_cache_plan_test');
      }
    });
    // Statistics that are true, then statistics taken when nearly every answer had expired (a
    // condition on expiry would look selective: with one, the plan read the expiry index's range,
    // every live answer).
    await h.db.exec('ANALYZE shipping_rate_cache');
    const plans = [await planOf()];
    await h.db.query('UPDATE shipping_rate_cache SET expires_at = $2 WHERE app_id = $1', [app.appId, new Date(h.clock.nowMs() - 1000)]);
    await h.db.exec('ANALYZE shipping_rate_cache');
    await h.db.query('UPDATE shipping_rate_cache SET expires_at = $2 WHERE app_id = $1', [app.appId, live]);
    plans.push(await planOf());
    for (const plan of plans) {
      expect(plan).toMatch(/rows=1(\.00)? loops=1/);
      // A few index pages, not a walk over the cache (the top node's buffers count its children's).
      const pages = Number(/Buffers: shared hit=(\d+)/.exec(plan)?.[1]);
      expect(pages, plan).toBeLessThan(8);
      expect(plan).not.toMatch(/expiry_idx|Seq Scan on shipping_rate_cache/);
    }
    await h.db.query('DELETE FROM shipping_rate_cache WHERE app_id = $1', [app.appId]);
  });
});

describe('the rate clients', () => {
  // The checkouts' requests go through the rate requests' thread (src/checkout/rate-requests.ts),
  // the developer's rate test through `rateHttp` on the main thread: both pools are built alike.
  const senders: [string, (url: string) => Promise<{ status: number | null }>][] = [
    ['the checkouts\' thread', (url) => h.deps.rateRequests.ask({ url, secret: 'secret', shopDomain: 'shop', body: '{}', timeoutMs: 4000, currency: 'USD' })],
    ['the rate test\'s client', (url) => h.deps.rateHttp.send(url, { 'content-type': 'application/json' }, '{}', { timeoutMs: 4000 })],
  ];
  it.each(senders)('%s holds a connection per request in flight to one origin, beyond the 32 of webhooks (buyers at once, apps on one host)', async (_, send) => {
    const n = PER_HOST_CONCURRENCY + 8;
    let inFlight = 0;
    let most = 0;
    const held: (() => void)[] = [];
    const server = createServer((req, res) => {
      req.resume();
      inFlight++;
      most = Math.max(most, inFlight);
      const answer = () => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"rates":[]}');
      };
      held.push(answer);
      // Everything answers once all n are in, or after 2 s when some could not get through.
      if (held.length === n) held.splice(0).forEach((f) => f());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const timer = setTimeout(() => held.splice(0).forEach((f) => f()), 2000);
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rates`;
      const results = await Promise.all(Array.from({ length: n }, () => send(url)));
      expect(results.map((r) => r.status)).toEqual(Array(n).fill(200));
      expect(most).toBe(n);
      expect(RATE_CONNECTIONS_PER_ORIGIN).toBeGreaterThanOrEqual(n);
    } finally {
      clearTimeout(timer);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
