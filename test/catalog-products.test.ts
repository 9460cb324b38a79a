// Products: App API create, update, delete (C6.1; app-api.md Product and PUT /products/{id}.json;
// C14.1), the merchant admin product routes (C7.1), and the events each change writes to the outbox
// in its own transaction (C8.1; products/create, products/update, products/delete,
// inventory_levels/update). Each test names the clause it checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { installApp, operatorToken, signupMerchant, signupPartner, storeWithApp, staffToken } from './helpers/actors.js';
import { expectApiHeaders, expectEnvelopeError, expectErrorsBody } from './helpers/expect.js';
import { events, newEvents } from './helpers/events.js';
import { uuidv7 } from '../src/ids.js';

let h: Harness;
const ROLLBACK_TITLE = `ROLLBACK-${uuidv7()}`;

beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
  // A forced failure after the event row is written, so the change's transaction rolls back
  // (C8.1): fires only for this file's marker title.
  await h.db.exec(`
    CREATE OR REPLACE FUNCTION catalog_products_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.payload->>'title' = '${ROLLBACK_TITLE}' THEN RAISE EXCEPTION 'forced failure'; END IF;
      RETURN NEW;
    END $$;
    DROP TRIGGER IF EXISTS catalog_products_test_fail ON events;
    CREATE TRIGGER catalog_products_test_fail AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION catalog_products_test_fail();
  `);
});
afterAll(async () => {
  await h?.db.exec('DROP TRIGGER IF EXISTS catalog_products_test_fail ON events').catch(() => {});
  await h?.close();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function apiStore(scopes = ['read_products', 'write_products']) {
  return storeWithApp(h, { scopes });
}

/** A product made through the merchant admin with two variants (the first discounted) and an image. */
async function merchantProduct(token: string, body: Record<string, unknown> = {}) {
  const res = await h.req('POST', '/products', {
    token,
    body: {
      title: 'Linen Shirt',
      body_html: '<p>Soft</p>',
      category: 'Shirts',
      tags: ['summer'],
      images: ['https://cdn.example.com/shirt.jpg'],
      variants: [
        { name: 'Size', value: 'M', price: 25, discountPrice: 19.9, stock: 10, skuId: 'LS-M', weight: 0.3, weightUnit: 'kg' },
        { name: 'Size', value: 'L', price: 25, stock: 4, skuId: 'LS-L', weight: 0.35, weightUnit: 'kg' },
      ],
      ...body,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

async function variantRows(productId: string) {
  const { rows } = await h.db.query('SELECT * FROM variants WHERE product_id = $1 ORDER BY position', [productId]);
  return rows;
}

// =============================================================================================

describe('POST /api/v1/products.json (C6.1, C14.1)', () => {
  it('201 { product } with every field of app-api.md Product; defaults; emits exactly products/create', async () => {
    const s = await apiStore();
    const before = await events(h, s.merchant.storeId);
    const res = await h.req('POST', '/api/v1/products.json', {
      token: s.accessToken,
      body: {
        title: '  Canvas Tote ', body_html: '<p>Sturdy</p>', tags: ['bags', ' canvas ', 'bags'], price: '18.00', compare_at_price: 22.5,
        inventory_quantity: 35, sku: 'TOTE-1', vendor: 'Ignored Vendor', product_type: 'Ignored Type', unknown_key: true,
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    expectApiHeaders(res);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['product']);
    const p = body.product;
    expect(p).toEqual({
      id: expect.any(Number),
      product_id: expect.stringMatching(UUID),
      title: 'Canvas Tote',
      handle: 'canvas-tote',
      body_html: '<p>Sturdy</p>',
      vendor: '',
      product_type: '',
      published_scope: 'web',
      status: 'active',
      tags: ['bags', 'canvas'],
      price: '18.00',
      compare_at_price: '22.50',
      inventory_quantity: 35,
      variants: [],
      images: [],
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(Number.isInteger(p.id)).toBe(true);
    expect(p.created_at).toBe(p.updated_at);

    const got = await h.req('GET', `/api/v1/products/${p.product_id}.json`, { token: s.accessToken });
    expect(got.json()).toEqual({ product: p });

    const written = await newEvents(h, s.merchant.storeId, before);
    expect(written).toEqual([{ topic: 'products/create', payload: p }]);
  });

  it('accepts the body wrapped as { product }; status draft; no price gives null money', async () => {
    const s = await apiStore();
    const res = await h.req('POST', '/api/v1/products.json', { token: s.accessToken, body: { product: { title: 'Gift Card', status: 'draft' } } });
    expect(res.statusCode).toBe(201);
    expect(res.json().product).toMatchObject({ title: 'Gift Card', handle: 'gift-card', status: 'draft', price: null, compare_at_price: null, inventory_quantity: 0, tags: [] });
  });

  it('without a title -> 400 { errors: { title: ["can\'t be blank"] } }, nothing created, no event (C14.1)', async () => {
    const s = await apiStore();
    const before = await events(h, s.merchant.storeId);
    for (const body of [{}, { body_html: '<p>x</p>' }, { title: '' }, { title: '   ' }, { title: null }, { product: { price: '1.00' } }]) {
      const res = await h.req('POST', '/api/v1/products.json', { token: s.accessToken, body });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ errors: { title: ["can't be blank"] } });
      expectApiHeaders(res);
    }
    expect((await h.req('GET', '/api/v1/products.json', { token: s.accessToken })).json().products).toEqual([]);
    expect(await newEvents(h, s.merchant.storeId, before)).toEqual([]);
  });

  it('invalid fields -> 400 errors body naming each field', async () => {
    const s = await apiStore();
    const cases: [Record<string, unknown>, string][] = [
      [{ title: 'x', status: 'deleted' }, 'status'],
      [{ title: 'x', price: 'abc' }, 'price'],
      [{ title: 'x', price: -1 }, 'price'],
      [{ title: 'x', price: 1.999 }, 'price'],
      [{ title: 'x', compare_at_price: '1.234' }, 'compare_at_price'],
      [{ title: 'x', inventory_quantity: 1.5 }, 'inventory_quantity'],
      [{ title: 'x', inventory_quantity: -3 }, 'inventory_quantity'],
      [{ title: 'x', tags: [1, 2] }, 'tags'],
      [{ title: 42 }, 'title'],
      [{ title: 'x'.repeat(256) }, 'title'],
      [{ title: 'x', handle: '!!!' }, 'handle'],
    ];
    for (const [body, key] of cases) expectErrorsBody(await h.req('POST', '/api/v1/products.json', { token: s.accessToken, body }), 400, key);
    const multi = await h.req('POST', '/api/v1/products.json', { token: s.accessToken, body: { price: 'x', status: 'nope' } });
    expect(Object.keys(multi.json().errors).sort()).toEqual(['price', 'status', 'title']);
  });

  it('malformed JSON or a non-object body -> 400 errors body (C5.6)', async () => {
    const s = await apiStore();
    const bad = await h.req('POST', '/api/v1/products.json', { token: s.accessToken, headers: { 'content-type': 'application/json' }, payload: '{"title":' });
    expectErrorsBody(bad, 400);
    expectApiHeaders(bad);
    expectErrorsBody(await h.req('POST', '/api/v1/products.json', { token: s.accessToken, body: ['title'] }), 400);
  });

  it('handles: a slug of the title, unique in the store (slug-2, slug-3); a given handle must be free (400)', async () => {
    const s = await apiStore();
    const other = await apiStore();
    const make = async (token: string, body: Record<string, unknown>) => h.req('POST', '/api/v1/products.json', { token, body });
    expect((await make(s.accessToken, { title: 'Blue Mug!' })).json().product.handle).toBe('blue-mug');
    expect((await make(s.accessToken, { title: 'Blue  mug' })).json().product.handle).toBe('blue-mug-2');
    expect((await make(s.accessToken, { title: 'blue mug' })).json().product.handle).toBe('blue-mug-3');
    expect((await make(other.accessToken, { title: 'Blue Mug' })).json().product.handle).toBe('blue-mug'); // per store
    expect((await make(s.accessToken, { title: 'Other', handle: 'My Handle' })).json().product.handle).toBe('my-handle');
    const dup = await make(s.accessToken, { title: 'Other', handle: 'blue-mug' });
    expect(dup.statusCode).toBe(400);
    expect(dup.json()).toEqual({ errors: { handle: ['has already been taken'] } });
  });
});

describe('PUT /api/v1/products/{id}.json (app-api.md; C14.1)', () => {
  it('only the first variants entry is applied, onto product-level price, compare-at price and stock; variant rows untouched', async () => {
    const s = await apiStore();
    const created = await merchantProduct(s.merchant.token);
    expect(created).toMatchObject({ price: '19.90', compare_at_price: '25.00', inventory_quantity: 10 });
    const rowsBefore = await variantRows(created.product_id);

    const res = await h.req('PUT', `/api/v1/products/${created.product_id}.json`, {
      token: s.accessToken,
      body: { variants: [{ price: 12.5, compare_at_price: 20, inventory_quantity: 7 }, { price: 1, compare_at_price: 2, inventory_quantity: 999 }, 'garbage'] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expectApiHeaders(res);
    const p = res.json().product;
    expect(Object.keys(res.json())).toEqual(['product']);
    expect(p).toMatchObject({ price: '12.50', compare_at_price: '20.00', inventory_quantity: 7 });
    // The variants of the product object are the rows, unchanged.
    expect(p.variants).toEqual(created.variants);
    expect(await variantRows(created.product_id)).toEqual(rowsBefore);
    expect(p.title).toBe('Linen Shirt');
    expect(p.tags).toEqual(['summer']);
    expect(p.vendor).toBe('Shirts');
  });

  it('fields of the first entry that are absent keep their values; null clears the compare-at price; decimal strings accepted', async () => {
    const s = await apiStore();
    const created = await merchantProduct(s.merchant.token);
    const put = (body: unknown) => h.req('PUT', `/api/v1/products/${created.id}.json`, { token: s.accessToken, body });
    expect((await put({ variants: [{ price: '30' }] })).json().product).toMatchObject({ price: '30.00', compare_at_price: '25.00', inventory_quantity: 10 });
    expect((await put({ variants: [{ inventory_quantity: 0 }] })).json().product).toMatchObject({ price: '30.00', compare_at_price: '25.00', inventory_quantity: 0 });
    expect((await put({ variants: [{ compare_at_price: null }] })).json().product).toMatchObject({ price: '30.00', compare_at_price: null, inventory_quantity: 0 });
    expect((await put({ variants: [] })).json().product).toMatchObject({ price: '30.00', compare_at_price: null, inventory_quantity: 0 });
  });

  it('title, body_html, handle, status; tags replace all tags; vendor and product_type cannot be set', async () => {
    const s = await apiStore();
    const created = await merchantProduct(s.merchant.token, { tags: ['a', 'b', 'c'] });
    h.clock.advance(5);
    const res = await h.req('PUT', `/api/v1/products/${created.product_id}.json`, {
      token: s.accessToken,
      body: { title: 'Linen Shirt II', body_html: '<p>New</p>', handle: 'linen-2', status: 'archived', tags: ['x'], vendor: 'Hacker', product_type: 'Nope', category: 'Nope', price: '0.01' },
    });
    expect(res.statusCode).toBe(200);
    const p = res.json().product;
    expect(p).toMatchObject({ title: 'Linen Shirt II', body_html: '<p>New</p>', handle: 'linen-2', status: 'archived', tags: ['x'], vendor: 'Shirts', product_type: 'Shirts' });
    // `price` is not an update field: product-level money changes only through variants[0].
    expect(p.price).toBe('19.90');
    expect(p.created_at).toBe(created.created_at);
    expect(Date.parse(p.updated_at)).toBeGreaterThan(Date.parse(created.updated_at));

    const cleared = await h.req('PUT', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken, body: { tags: [] } });
    expect(cleared.json().product.tags).toEqual([]);
    const wrapped = await h.req('PUT', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken, body: { product: { title: 'Wrapped' } } });
    expect(wrapped.json().product.title).toBe('Wrapped');
  });

  it('the path id is the UUID or the numeric id; unknown, malformed or another store\'s -> 404 errors body', async () => {
    const s = await apiStore();
    const other = await signupMerchant(h);
    const created = await merchantProduct(s.merchant.token);
    const foreign = await merchantProduct(other.token);
    expect((await h.req('PUT', `/api/v1/products/${created.id}.json`, { token: s.accessToken, body: { title: 'By number' } })).json().product.title).toBe('By number');
    expect((await h.req('PUT', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken, body: { title: 'By uuid' } })).json().product.title).toBe('By uuid');
    for (const id of [uuidv7(), '999999999999', 'abc', foreign.product_id, String(foreign.id)]) {
      const res = await h.req('PUT', `/api/v1/products/${id}.json`, { token: s.accessToken, body: { title: 'Stolen' } });
      expectErrorsBody(res, 404);
      expectApiHeaders(res);
    }
    const { rows } = await h.db.query('SELECT title FROM products WHERE id = $1', [foreign.product_id]);
    expect(rows[0].title).toBe('Linen Shirt');
  });

  it('invalid input -> 400 errors body, nothing changed, no event; extra variants entries are not even read', async () => {
    const s = await apiStore();
    const created = await merchantProduct(s.merchant.token);
    const before = await events(h, s.merchant.storeId);
    const cases: [unknown, string][] = [
      [{ title: '' }, 'title'],
      [{ title: null }, 'title'],
      [{ status: 'gone' }, 'status'],
      [{ tags: [{}] }, 'tags'],
      [{ variants: { price: 1 } }, 'variants'],
      [{ variants: ['x'] }, 'variants[0]'],
      [{ variants: [{ price: 'free' }] }, 'variants[0].price'],
      [{ variants: [{ inventory_quantity: 2.5 }] }, 'variants[0].inventory_quantity'],
      [{ variants: [{ compare_at_price: -2 }] }, 'variants[0].compare_at_price'],
    ];
    for (const [body, key] of cases) {
      const res = await h.req('PUT', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken, body });
      expectErrorsBody(res, 400, key);
    }
    expect((await h.req('PUT', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken, body: { title: '' } })).json())
      .toEqual({ errors: { title: ["can't be blank"] } });
    const get = await h.req('GET', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken });
    expect(get.json().product).toEqual(created);
    expect(await newEvents(h, s.merchant.storeId, before)).toEqual([]);

    const ok = await h.req('PUT', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken, body: { variants: [{ price: 5 }, { price: 'not even money' }] } });
    expect(ok.statusCode).toBe(200);
  });

  it('a handle taken by another product of the store -> 400; its own handle is fine', async () => {
    const s = await apiStore();
    const a = await merchantProduct(s.merchant.token, { title: 'Alpha' });
    const b = await merchantProduct(s.merchant.token, { title: 'Beta' });
    const res = await h.req('PUT', `/api/v1/products/${b.product_id}.json`, { token: s.accessToken, body: { handle: a.handle } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ errors: { handle: ['has already been taken'] } });
    expect((await h.req('PUT', `/api/v1/products/${b.product_id}.json`, { token: s.accessToken, body: { handle: 'beta' } })).statusCode).toBe(200);
  });

  it('emits products/update with the REST product, and inventory_levels/update only when the stock changes (C8.1, C8.8)', async () => {
    const s = await apiStore();
    const created = await merchantProduct(s.merchant.token);
    let before = await events(h, s.merchant.storeId);

    const res = await h.req('PUT', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken, body: { title: 'Renamed', variants: [{ inventory_quantity: 3 }] } });
    const p = res.json().product;
    expect(await newEvents(h, s.merchant.storeId, before)).toEqual([
      { topic: 'products/update', payload: p },
      { topic: 'inventory_levels/update', payload: { product_id: created.id, variant_id: null, sku: 'LS-M', available: 3, updated_at: p.updated_at } },
    ]);

    before = await events(h, s.merchant.storeId);
    const same = await h.req('PUT', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken, body: { variants: [{ inventory_quantity: 3, price: 9 }] } });
    expect(await newEvents(h, s.merchant.storeId, before)).toEqual([{ topic: 'products/update', payload: same.json().product }]);
  });

  it('a change that fails after its event was written rolls back with its events (C8.1)', async () => {
    const s = await apiStore();
    const created = await merchantProduct(s.merchant.token);
    const before = await events(h, s.merchant.storeId);
    const res = await h.req('PUT', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken, body: { title: ROLLBACK_TITLE, variants: [{ inventory_quantity: 1 }] } });
    expectErrorsBody(res, 500);
    expect(JSON.stringify(res.json())).not.toContain('forced failure');
    expect((await h.req('GET', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken })).json().product).toEqual(created);
    expect(await newEvents(h, s.merchant.storeId, before)).toEqual([]);

    const create = await h.req('POST', '/api/v1/products.json', { token: s.accessToken, body: { title: ROLLBACK_TITLE } });
    expectErrorsBody(create, 500);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM products WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows[0].n).toBe(1);
    expect(await newEvents(h, s.merchant.storeId, before)).toEqual([]);
  });
});

describe('DELETE /api/v1/products/{id}.json (C6.1)', () => {
  it('200 {}; the product, its variants and images are gone; products/delete carries the product as it was', async () => {
    const s = await apiStore();
    const created = await merchantProduct(s.merchant.token);
    const before = await events(h, s.merchant.storeId);
    const res = await h.req('DELETE', `/api/v1/products/${created.id}.json`, { token: s.accessToken });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    expectApiHeaders(res);
    expect(await newEvents(h, s.merchant.storeId, before)).toEqual([{ topic: 'products/delete', payload: created }]);
    expectErrorsBody(await h.req('GET', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken }), 404);
    expect(await variantRows(created.product_id)).toEqual([]);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM product_images WHERE product_id = $1', [created.product_id]);
    expect(rows[0].n).toBe(0);
    expectErrorsBody(await h.req('DELETE', `/api/v1/products/${created.product_id}.json`, { token: s.accessToken }), 404);
  });

  it('another store\'s product -> 404 and it stays; by UUID works too', async () => {
    const s = await apiStore();
    const other = await signupMerchant(h);
    const foreign = await merchantProduct(other.token);
    expectErrorsBody(await h.req('DELETE', `/api/v1/products/${foreign.product_id}.json`, { token: s.accessToken }), 404);
    expectErrorsBody(await h.req('DELETE', `/api/v1/products/${foreign.id}.json`, { token: s.accessToken }), 404);
    expect((await h.db.query('SELECT 1 FROM products WHERE id = $1', [foreign.product_id])).rows).toHaveLength(1);
    const mine = await merchantProduct(s.merchant.token);
    expect((await h.req('DELETE', `/api/v1/products/${mine.product_id}.json`, { token: s.accessToken })).statusCode).toBe(200);
  });
});

describe('App API product writes: the four authentication checks (Rules 1, 2; C5.1)', () => {
  it('no credential and a bad credential -> 401 errors body without rate-limit headers', async () => {
    const s = await apiStore();
    const created = await merchantProduct(s.merchant.token);
    const calls: [string, string][] = [['POST', '/api/v1/products.json'], ['PUT', `/api/v1/products/${created.id}.json`], ['DELETE', `/api/v1/products/${created.id}.json`]];
    for (const [method, url] of calls) {
      for (const token of [undefined, 'svcat_not-a-token', s.merchant.token]) {
        const res = await h.req(method, url, { token, body: method === 'DELETE' ? undefined : { title: 'x' } });
        expectErrorsBody(res, 401);
        expectApiHeaders(res, { rated: false });
      }
    }
  });

  it('a token without write_products -> 403 errors body (read_products is not enough)', async () => {
    const s = await apiStore(['read_products']);
    const created = await merchantProduct(s.merchant.token);
    for (const [method, url] of [['POST', '/api/v1/products.json'], ['PUT', `/api/v1/products/${created.id}.json`], ['DELETE', `/api/v1/products/${created.id}.json`]]) {
      const res = await h.req(method, url, { token: s.accessToken, body: method === 'DELETE' ? undefined : { title: 'x' } });
      expectErrorsBody(res, 403);
      expectApiHeaders(res);
    }
    expect((await h.req('GET', `/api/v1/products/${created.id}.json`, { token: s.accessToken })).json().product.title).toBe('Linen Shirt');
  });
});

// =============================================================================================

describe('merchant POST /products (C7.1, C14.1)', () => {
  it('201 envelope, data = the App API product; variants as numbers; product-level values from the first variant; category sets vendor and product_type', async () => {
    const m = await signupMerchant(h);
    const before = await events(h, m.storeId);
    const res = await h.req('POST', '/products', {
      token: m.token,
      body: {
        title: 'Linen Shirt', body_html: '<p>Soft</p>', category: 'Shirts', tags: ['summer'], status: 'draft', vendor: 'ignored',
        price: '99.00', inventory_quantity: 500,
        images: ['https://cdn.example.com/a.jpg', 'https://cdn.example.com/b.jpg'],
        variants: [
          { name: 'Size', value: 'M', price: 25, discountPrice: 19.9, stock: 10, skuId: 'LS-M', weight: 1, weightUnit: 'kg' },
          { name: 'Size', value: 'L', price: 25.5, stock: 0, skuId: 'LS-L' },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const env = res.json();
    expect(env).toMatchObject({ status: 201, state: 'success', message: null, count: null, pagination: null });
    const p = env.data;
    expect(p).toEqual({
      id: expect.any(Number), product_id: expect.stringMatching(UUID), title: 'Linen Shirt', handle: 'linen-shirt', body_html: '<p>Soft</p>',
      vendor: 'Shirts', product_type: 'Shirts', published_scope: 'web', status: 'draft', tags: ['summer'],
      price: '19.90', compare_at_price: '25.00', inventory_quantity: 10,
      variants: [
        { id: expect.any(Number), product_id: p.id, title: 'Size / M', price: '19.90', compare_at_price: '25.00', sku: 'LS-M', inventory_quantity: 10, available: true },
        { id: expect.any(Number), product_id: p.id, title: 'Size / L', price: '25.50', compare_at_price: null, sku: 'LS-L', inventory_quantity: 0, available: false },
      ],
      images: [
        { id: expect.any(Number), product_id: p.id, src: 'https://cdn.example.com/a.jpg', position: 1 },
        { id: expect.any(Number), product_id: p.id, src: 'https://cdn.example.com/b.jpg', position: 2 },
      ],
      created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO),
    });
    const rows = await variantRows(p.product_id);
    expect(rows.map((v) => [v.name, v.value, v.price_minor, v.discount_price_minor, v.stock, v.stock_status, v.sku, v.weight === null ? null : Number(v.weight), v.weight_unit]))
      .toEqual([['Size', 'M', 2500, 1990, 10, 'IN_STOCK', 'LS-M', 1, 'kg'], ['Size', 'L', 2550, null, 0, 'OUT_OF_STOCK', 'LS-L', null, null]]);
    expect(await newEvents(h, m.storeId, before)).toEqual([{ topic: 'products/create', payload: p }]);
  });

  it('without variants the product-level fields are the body\'s (decimal strings); without a title -> 400 envelope', async () => {
    const m = await signupMerchant(h);
    const res = await h.req('POST', '/products', { token: m.token, body: { title: 'Poster', price: '12.00', compare_at_price: '15.00', inventory_quantity: 3, sku: 'P-1' } });
    expect(res.json().data).toMatchObject({ price: '12.00', compare_at_price: '15.00', inventory_quantity: 3, variants: [], vendor: '', product_type: '' });
    expectEnvelopeError(await h.req('POST', '/products', { token: m.token, body: { price: '1.00' } }), 400, "title can't be blank");
  });

  it('invalid variants and images -> 400 envelope naming the field, nothing created', async () => {
    const m = await signupMerchant(h);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ variants: [{ name: 'Size', value: 'M' }] }, /^variants\[0\]\.price can't be blank$/],
      [{ variants: [{ price: 'abc' }] }, /^variants\[0\]\.price/],
      [{ variants: [{ price: 1, stock: -1 }] }, /^variants\[0\]\.stock/],
      [{ variants: [{ price: 1, weightUnit: 'ton' }] }, /^variants\[0\]\.weightUnit/],
      [{ variants: [{ price: 1, weight: -2 }] }, /^variants\[0\]\.weight/],
      [{ variants: [{ price: 1 }, 7] }, /^variants\[1\]/],
      [{ variants: 'many' }, /^variants/],
      [{ images: ['not a url'] }, /^images\[0\]/],
      [{ images: 'https://cdn.example.com/a.jpg' }, /^images/],
      [{ category: 5 }, /^category/],
    ];
    for (const [body, message] of cases) expectEnvelopeError(await h.req('POST', '/products', { token: m.token, body: { title: 'T', ...body } }), 400, message);
    expect((await h.db.query('SELECT count(*)::int AS n FROM products WHERE store_id = $1', [m.storeId])).rows[0].n).toBe(0);
  });

  it('roles: store staff may, a partner may not (403), no or a bad token 401; the operator needs storeId (C7.1)', async () => {
    const m = await signupMerchant(h);
    for (const role of ['STAFF_ADMIN', 'MANAGER'] as const) {
      const token = await staffToken(h, m, role);
      const res = await h.req('POST', '/products', { token, body: { title: `By ${role}` } });
      expect(res.statusCode).toBe(201);
      expect((await h.db.query('SELECT store_id FROM products WHERE id = $1', [res.json().data.product_id])).rows[0].store_id).toBe(m.storeId);
    }
    const partner = await signupPartner(h);
    expectEnvelopeError(await h.req('POST', '/products', { token: partner.token, body: { title: 'x' } }), 403);
    expectEnvelopeError(await h.req('POST', '/products', { body: { title: 'x' } }), 401);
    expectEnvelopeError(await h.req('POST', '/products', { token: 'nope', body: { title: 'x' } }), 401);
    const op = await operatorToken(h);
    expectEnvelopeError(await h.req('POST', '/products', { token: op, body: { title: 'x' } }), 400);
    const res = await h.req('POST', '/products', { token: op, body: { title: 'By operator', storeId: m.storeId } });
    expect(res.statusCode).toBe(201);
    expect((await h.db.query('SELECT store_id FROM products WHERE id = $1', [res.json().data.product_id])).rows[0].store_id).toBe(m.storeId);
  });
});

describe('merchant PUT /products/{id} (C7.1, C14.1)', () => {
  it('updates fields, category (vendor, product_type), replaces images; product-level values independent of variant edits', async () => {
    const m = await signupMerchant(h);
    const created = await merchantProduct(m.token);
    const res = await h.req('PUT', `/products/${created.product_id}`, {
      token: m.token,
      body: { title: 'Shirt', category: 'Tops', images: ['https://cdn.example.com/new.jpg'], price: '30.00', compare_at_price: null, inventory_quantity: 50, tags: ['t'] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const p = res.json().data;
    expect(p).toMatchObject({ title: 'Shirt', vendor: 'Tops', product_type: 'Tops', price: '30.00', compare_at_price: null, inventory_quantity: 50, tags: ['t'] });
    expect(p.images).toEqual([{ id: expect.any(Number), product_id: created.id, src: 'https://cdn.example.com/new.jpg', position: 1 }]);
    expect(p.variants).toEqual(created.variants);

    const cleared = await h.req('PUT', `/products/${created.id}`, { token: m.token, body: { category: null } });
    expect(cleared.json().data).toMatchObject({ vendor: '', product_type: '' });
  });

  it('variants: an entry with varientId (UUID or numeric) changes that variant, one without adds one; products/update and one inventory_levels/update per changed stock', async () => {
    const m = await signupMerchant(h);
    const created = await merchantProduct(m.token);
    const [vm, vl] = await variantRows(created.product_id);
    const before = await events(h, m.storeId);
    const res = await h.req('PUT', `/products/${created.product_id}`, {
      token: m.token,
      body: { variants: [{ varientId: vm.id, stock: 3, price: 26 }, { varientId: vl.num_id, name: 'Größe' }, { name: 'Size', value: 'XL', price: 27, stock: 2 }] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const p = res.json().data;
    expect(p.variants.map((v: any) => [v.title, v.price, v.compare_at_price, v.inventory_quantity])).toEqual([
      ['Size / M', '19.90', '26.00', 3], ['Größe / L', '25.00', null, 4], ['Size / XL', '27.00', null, 2],
    ]);
    // C14.1: the product-level values stay as they were.
    expect(p).toMatchObject({ price: '19.90', compare_at_price: '25.00', inventory_quantity: 10 });
    expect(await newEvents(h, m.storeId, before)).toEqual([
      { topic: 'products/update', payload: p },
      { topic: 'inventory_levels/update', payload: { product_id: created.id, variant_id: vm.num_id, sku: 'LS-M', available: 3, updated_at: p.updated_at } },
    ]);

    const foreign = await merchantProduct((await signupMerchant(h)).token);
    const foreignVariant = (await variantRows(foreign.product_id))[0];
    expectEnvelopeError(await h.req('PUT', `/products/${created.product_id}`, { token: m.token, body: { variants: [{ varientId: foreignVariant.id, stock: 1 }] } }), 400, /varientId/);
    expect((await variantRows(foreign.product_id))[0].stock).toBe(foreignVariant.stock);
  });

  it('another store\'s product -> 403, unknown -> 404 (envelopes); staff 200; partner 403; no token 401', async () => {
    const m = await signupMerchant(h);
    const other = await signupMerchant(h);
    const created = await merchantProduct(m.token);
    const foreign = await merchantProduct(other.token);
    expectEnvelopeError(await h.req('PUT', `/products/${foreign.product_id}`, { token: m.token, body: { title: 'Mine now' } }), 403);
    expectEnvelopeError(await h.req('PUT', `/products/${foreign.id}`, { token: m.token, body: { title: 'Mine now' } }), 403);
    expect((await h.db.query('SELECT title FROM products WHERE id = $1', [foreign.product_id])).rows[0].title).toBe('Linen Shirt');
    expectEnvelopeError(await h.req('PUT', `/products/${uuidv7()}`, { token: m.token, body: { title: 'x' } }), 404);
    expectEnvelopeError(await h.req('PUT', '/products/not-an-id', { token: m.token, body: { title: 'x' } }), 404);
    expect((await h.req('PUT', `/products/${created.id}`, { token: await staffToken(h, m, 'MANAGER'), body: { title: 'By manager' } })).statusCode).toBe(200);
    expectEnvelopeError(await h.req('PUT', `/products/${created.id}`, { token: (await signupPartner(h)).token, body: { title: 'x' } }), 403);
    expectEnvelopeError(await h.req('PUT', `/products/${created.id}`, { body: { title: 'x' } }), 401);
    const op = await operatorToken(h);
    expect((await h.req('PUT', `/products/${foreign.id}`, { token: op, body: { title: 'By operator' } })).json().data.title).toBe('By operator');
  });
});

describe('merchant DELETE /products/{id} (C7.1)', () => {
  it('200 envelope with the product as it was; products/delete; its metafields go too; another store\'s -> 403', async () => {
    const m = await signupMerchant(h);
    const other = await signupMerchant(h);
    const created = await merchantProduct(m.token);
    const foreign = await merchantProduct(other.token);
    const [variant] = await variantRows(created.product_id);
    const mf = await h.req('POST', '/metafields/bulk', {
      token: m.token,
      body: { metafields: [
        { ownerType: 'product', ownerId: created.product_id, namespace: 'custom', key: 'a', type: 'single_line_text_field', value: 'x' },
        { ownerType: 'variant', ownerId: variant.id, namespace: 'custom', key: 'b', type: 'boolean', value: true },
        { ownerType: 'shop', ownerId: m.storeId, namespace: 'custom', key: 'c', type: 'boolean', value: true },
      ] },
    });
    expect(mf.statusCode, mf.body).toBe(200);

    expectEnvelopeError(await h.req('DELETE', `/products/${foreign.product_id}`, { token: m.token }), 403);
    const before = await events(h, m.storeId);
    const res = await h.req('DELETE', `/products/${created.product_id}`, { token: m.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 200, state: 'success', message: null, data: created, count: null, pagination: null });
    expect(await newEvents(h, m.storeId, before)).toEqual([{ topic: 'products/delete', payload: created }]);
    const { rows } = await h.db.query('SELECT owner_type FROM metafields WHERE store_id = $1', [m.storeId]);
    expect(rows.map((r) => r.owner_type)).toEqual(['shop']);
    expectEnvelopeError(await h.req('DELETE', `/products/${created.product_id}`, { token: m.token }), 404);
  });
});

describe('product writes and installations', () => {
  it('an app installed on two stores writes to the store of the token used', async () => {
    const s = await apiStore();
    const storeB = await signupMerchant(h);
    const b = await installApp(h, storeB, s.app);
    const res = await h.req('POST', '/api/v1/products.json', { token: b.accessToken, body: { title: 'For B' } });
    expect(res.statusCode).toBe(201);
    expect((await h.db.query('SELECT store_id FROM products WHERE id = $1', [res.json().product.product_id])).rows[0].store_id).toBe(storeB.storeId);
    expectErrorsBody(await h.req('GET', `/api/v1/products/${res.json().product.product_id}.json`, { token: s.accessToken }), 404);
  });
});
