// A process's copy of a store's checkout set (zones, shipping apps and address, active functions:
// src/checkout/store-config-cache.ts) is never served stale: every kind of write to any of it, by
// any process, moves the store's version (migration 0018's triggers), and the quote then reads
// the set again. The property swept here, change by change: a quote read through a cache that
// was filled before the change equals a quote read with no cache at all, right after the change.
// Writes that touch none of it (billing, an order) keep the copy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';
import { address, insertProduct, uniq } from './helpers/orders.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { uuidv7 } from '../src/ids.js';
import { hashCheckoutToken } from '../src/checkout/checkout-token.js';
import { findCheckoutForQuote } from '../src/checkout/checkouts.repo.js';
import { StoreConfigCache, zonesForCountry } from '../src/checkout/store-config-cache.js';
import { DELIVERY_TARGET } from '../src/checkout/checkout-functions.js';

let h: Harness;
let rx: Receiver;
beforeAll(async () => {
  h = await createHarness();
  rx = await startReceiver(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"rates": []}' }));
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

const FUNCTION = { handle: 'rename', target: DELIVERY_TARGET, expression: '{"operations": []}', configuration: { a: 1 } };

async function setUp() {
  const s = await storeWithApp(h, {
    scopes: ['read_products', 'write_shipping'], tier: 'enterprise',
    extensions: { shipping: { ratesUrl: `${rx.url}/rates` }, functions: [FUNCTION] },
  });
  const storeId = s.merchant.storeId;
  const product = await insertProduct(h, storeId, { price: 1000, stock: 10 });
  const zoneId = uuidv7();
  await h.db.query(
    `INSERT INTO shipping_zones (id, store_id, name, countries, price_minor, type, created_at, updated_at)
     VALUES ($1, $2, 'UK', '["GB"]'::jsonb, 499, 'Simple', now(), now())`,
    [zoneId, storeId],
  );
  const res = await h.req('POST', `/storefront/${s.merchant.slug}/checkouts`, {
    body: { email: `buyer-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address },
  });
  expect(res.statusCode, res.body).toBe(201);
  const hash = hashCheckoutToken(res.json().data.checkout.token);
  const cache = new StoreConfigCache();
  const read = () => findCheckoutForQuote(h.db, s.merchant.slug, hash, cache);
  const fresh = () => findCheckoutForQuote(h.db, s.merchant.slug, hash);
  return { s, storeId, zoneId, cache, read, fresh, slug: s.merchant.slug };
}

type Setup = Awaited<ReturnType<typeof setUp>>;

/** The parts of a quote the set gives, comparable. */
const setOf = (q: Awaited<ReturnType<Setup['read']>>) => ({ zones: q!.zones, shipping: q!.shipping, functions: q!.functions });

const CHANGES: [string, (x: Setup) => Promise<unknown>][] = [
  ['a zone added', (x) => h.db.query(
    `INSERT INTO shipping_zones (id, store_id, name, countries, price_minor, type, created_at, updated_at)
     VALUES ($1, $2, 'UK express', '["GB"]'::jsonb, 1299, 'Simple', now(), now())`, [uuidv7(), x.storeId])],
  ['a zone repriced', (x) => h.db.query('UPDATE shipping_zones SET price_minor = 650 WHERE id = $1', [x.zoneId])],
  ['a zone deleted by an app through the App API', async (x) => {
    const res = await h.req('DELETE', `/api/v1/shipping_zones/${x.zoneId}.json`, { token: x.s.accessToken });
    expect(res.statusCode, res.body).toBe(200);
  }],
  ['the store address set through the API', async (x) => {
    const res = await h.req('PUT', '/stores/address', { token: x.s.merchant.token, body: { address1: '2 Quay', city: 'Hull', country: 'GB', zip: 'HU1 1AA' } });
    expect(res.statusCode, res.body).toBe(200);
  }],
  ['the app uninstalled', (x) => h.db.query(`UPDATE installations SET status = 'uninstalled' WHERE store_id = $1`, [x.storeId])],
  ['write_shipping taken from the installation', (x) => h.db.query(`UPDATE installations SET scopes = '["read_products"]'::jsonb WHERE store_id = $1`, [x.storeId])],
  ['the app\'s rate URL changed', (x) => h.db.query(`UPDATE apps SET extensions = jsonb_set(extensions, '{shipping,ratesUrl}', to_jsonb($2::text)) WHERE id = $1`, [x.s.app.appId, `${rx.url}/other`])],
  ['the app\'s handle changed', (x) => h.db.query(`UPDATE apps SET handle = handle || '-2' WHERE id = $1`, [x.s.app.appId])],
  ['the app\'s secret rotated', (x) => h.db.query(`UPDATE apps SET client_secret_enc = client_secret_enc || 'x' WHERE id = $1`, [x.s.app.appId])],
  ['the function deactivated', (x) => h.db.query('UPDATE store_functions SET active = false WHERE store_id = $1', [x.storeId])],
  ['the function configured by the merchant', (x) => h.db.query(`UPDATE store_functions SET configuration = '{"a": 2}'::jsonb WHERE store_id = $1`, [x.storeId])],
  ['the function\'s expression changed in the manifest', (x) => h.db.query(
    `UPDATE app_functions SET expression = '{"operations": [{"hide": {"handle": "x"}}]}' WHERE app_id = $1`, [x.s.app.appId])],
  ['the function deleted from the manifest (its activations cascade)', (x) => h.db.query('DELETE FROM app_functions WHERE app_id = $1', [x.s.app.appId])],
];

describe('a store\'s checkout set, as of its version (migration 0018)', () => {
  it('is read once, then served from the copy while nothing changes', async () => {
    const x = await setUp();
    const first = await x.read();
    const held = x.cache.get(x.slug.toLowerCase());
    expect(held).not.toBeNull();
    expect(setOf(first)).toEqual(setOf(await x.fresh()));
    expect(first!.shipping.apps).toHaveLength(1);
    expect(first!.functions.map((f) => f.handle)).toEqual(['rename']);
    expect(first!.zones.map((z) => z.id)).toEqual([x.zoneId]);
    const again = await x.read();
    // The very copy: the set was not read again.
    expect(x.cache.get(x.slug.toLowerCase())).toBe(held);
    expect(setOf(again)).toEqual(setOf(first));
  });

  for (const [what, change] of CHANGES) {
    it(`a copy filled before ${what} is not served after it`, async () => {
      const x = await setUp();
      const before = await x.read();
      const held = x.cache.get(x.slug.toLowerCase())!;
      await change(x);
      const after = await x.read();
      expect(setOf(after)).toEqual(setOf(await x.fresh()));
      expect(setOf(after)).not.toEqual(setOf(before));
      expect(x.cache.get(x.slug.toLowerCase())!.version).not.toBe(held.version);
    });
  }

  it('writes that touch none of it keep the copy: billing on the installation, an order, a product', async () => {
    const x = await setUp();
    await x.read();
    const held = x.cache.get(x.slug.toLowerCase());
    await h.db.query(`UPDATE installations SET billing_status = 'active', updated_at = now() WHERE store_id = $1`, [x.storeId]);
    await h.db.query('UPDATE stores SET next_order_number = next_order_number + 1 WHERE id = $1', [x.storeId]);
    await h.db.query(`UPDATE apps SET name = name || ' 2' WHERE id = $1`, [x.s.app.appId]);
    await insertProduct(h, x.storeId, { price: 10, stock: 1 });
    await x.read();
    expect(x.cache.get(x.slug.toLowerCase())).toBe(held);
  });

  it('a copy of another store (same slug, another id) is never used', async () => {
    const x = await setUp();
    const y = await setUp();
    await x.read();
    // y's copy filed under x's slug, as if the slug had moved to another store.
    await y.read();
    x.cache.set(x.slug.toLowerCase(), { ...y.cache.get(y.slug.toLowerCase())! });
    expect(setOf(await x.read())).toEqual(setOf(await x.fresh()));
    expect(x.cache.get(x.slug.toLowerCase())!.storeId).toBe(x.storeId);
  });

  it('versions come from one sequence: two stores never hold the same one', async () => {
    const x = await setUp();
    const y = await setUp();
    await x.read();
    await y.read();
    expect(x.cache.get(x.slug.toLowerCase())!.version).not.toBe(y.cache.get(y.slug.toLowerCase())!.version);
  });

  it('keeps its destination\'s zones, as findZonesForCountry does; bounded by stores', () => {
    const zone = (id: string, countries: unknown) => ({ id, countries }) as never;
    expect(zonesForCountry([zone('a', ['GB', 'IE']), zone('b', ['FR']), zone('c', [])], ' gb ').map((z: { id: string }) => z.id)).toEqual(['a']);
    expect(zonesForCountry([zone('a', ['GB'])], null)).toEqual([]);
    expect(zonesForCountry([zone('a', ['GB'])], 'ZZ')).toEqual([]);
    const small = new StoreConfigCache(2);
    for (const slug of ['a', 'b', 'c']) small.set(slug, { storeId: slug, version: '1', zones: [], apps: [], origin: null as never, functions: [] });
    expect(small.size).toBe(2);
    expect(small.get('a')).toBeUndefined();
  });
});
