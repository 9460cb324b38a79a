// The demo store's catalog (C1.5; issue 3 "Demo data"): products whose vendor and product type
// follow their category, a manual collection, and metafields readable through the App API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';
import { insertDemoStoreData } from '../src/seed/demo-store.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

describe('demo catalog data', () => {
  it('shows products, a collection with two products, and typed metafields on shop, product, variant, collection and page', async () => {
    const s = await storeWithApp(h, { scopes: ['read_products', 'read_metafields'] });
    await h.db.transaction((tx) => insertDemoStoreData(tx, s.merchant.storeId, h.clock.now()));

    const products = (await h.req('GET', '/api/v1/products.json', { token: s.accessToken })).json().products;
    expect(products.map((p: any) => [p.handle, p.vendor, p.product_type])).toEqual([
      ['ceramic-mug', 'Home', 'Home'], ['canvas-tote', 'Accessories', 'Accessories'], ['classic-tee', 'Apparel', 'Apparel'],
    ]);

    const { rows: [collection] } = await h.db.query('SELECT id FROM collections WHERE store_id = $1', [s.merchant.storeId]);
    const add = await h.req('POST', `/collections/${collection.id}/products`, { token: s.merchant.token, body: { productIds: [products[2].product_id] } });
    expect(add.json().data).toMatchObject({ title: 'Summer Picks', handle: 'summer-picks', products_count: 2 });

    const metafields = (await h.req('GET', '/api/v1/metafields.json', { token: s.accessToken })).json().data.metafields;
    expect(metafields.map((m: any) => [m.owner_type, `${m.namespace}.${m.key}`, m.value]).sort()).toEqual([
      ['collection', 'custom.featured', true],
      ['page', 'seo.hidden', false],
      ['product', 'care.wash_temperature', 30],
      ['product', 'custom.material', 'Organic cotton'],
      ['shop', 'store.opening_hours', { 'mon-fri': '9:00-18:00', sat: '10:00-14:00' }],
      ['variant', 'custom.chest_cm', 96.5],
    ]);
  });
});
