// Review of the App API's store data (products, variants, collections, listings, customers,
// metafields; app-api.md Resources; C5, C6, C7.1, C14.1) by real requests: the bugs found, each with
// the case that showed it. The concurrency case passes trivially on PGlite (one transaction at a
// time); it guards PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';
import { expectEnvelopeError, expectErrorsBody } from './helpers/expect.js';
import { multipartBody } from './helpers/catalog.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

const store = () => storeWithApp(h, { scopes: ['read_products', 'write_products'], tier: 'enterprise' });
const variants = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ name: 'Size', value: `V${from + i}`, price: 1, stock: 1 }));
const variantCount = async (productId: string) =>
  (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM variants WHERE product_id = $1', [productId])).rows[0].n;

describe('a product has at most 100 variants, however they are added (C7.1 merchant PUT /products/{id})', () => {
  it('an update that would take the product past 100 variants is a 400 envelope and adds none; changing variants at 100 still works', async () => {
    const s = await store();
    const made = await h.req('POST', '/products', { token: s.merchant.token, body: { title: 'Many', variants: variants(60) } });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().data.product_id as string;
    const put = (body: unknown) => h.req('PUT', `/products/${id}`, { token: s.merchant.token, body });

    // 60 + 40 = 100: allowed.
    const fill = await put({ variants: variants(40, 60) });
    expect(fill.statusCode, fill.body).toBe(200);
    expect(fill.json().data.variants).toHaveLength(100);

    // One more, alone or beside a change of an existing variant: refused whole (the change too).
    const firstId = fill.json().data.variants[0].id;
    for (const body of [{ variants: variants(1, 100) }, { variants: [{ varientId: firstId, stock: 50 }, ...variants(1, 100)] }, { variants: variants(100, 200) }]) {
      expectEnvelopeError(await put(body), 400, 'at most 100');
    }
    expect(await variantCount(id)).toBe(100);
    const after = await h.req('GET', `/api/v1/products/${id}.json`, { token: s.accessToken });
    expect(after.json().product.variants[0].inventory_quantity).toBe(1);

    // Changing variants of a full product is not adding.
    const change = await put({ variants: [{ varientId: firstId, stock: 7 }] });
    expect(change.statusCode, change.body).toBe(200);
    expect(change.json().data.variants[0].inventory_quantity).toBe(7);
  });

  it('concurrent updates each adding variants never take the product past 100 (the product lock counts them)', async () => {
    const s = await store();
    const made = await h.req('POST', '/products', { token: s.merchant.token, body: { title: 'Race', variants: variants(70) } });
    const id = made.json().data.product_id as string;
    const res = await Promise.all([0, 1, 2, 3].map((k) => h.req('PUT', `/products/${id}`, { token: s.merchant.token, body: { variants: variants(20, 100 + k * 20) } })));
    // 70 + 20 fits, a second 20 would not: one 200, three 400s, whichever comes first.
    expect(res.map((r) => r.statusCode).sort()).toEqual([200, 400, 400, 400]);
    expect(await variantCount(id)).toBe(90);
  });
});

describe('money refuses signed text such as "-0" on every route, with or without a schema in front (C5.2; docs/decisions.md Catalog: Money input)', () => {
  const SIGNED = ['-0', '-0.00', ' -0 ', '-1'];

  it('App API create (schema) and update (`variants[0]`, read without a schema): 400 errors body naming the field', async () => {
    const s = await store();
    const created = await h.req('POST', '/api/v1/products.json', { token: s.accessToken, body: { title: 'Money', price: '4.00', compare_at_price: '5.00' } });
    const id = created.json().product.product_id;
    for (const amount of SIGNED) {
      expectErrorsBody(await h.req('POST', '/api/v1/products.json', { token: s.accessToken, body: { title: 'x', price: amount } }), 400, 'price');
      for (const field of ['price', 'compare_at_price']) {
        const res = await h.req('PUT', `/api/v1/products/${id}.json`, { token: s.accessToken, body: { variants: [{ [field]: amount }] } });
        expectErrorsBody(res, 400, `variants[0].${field}`);
      }
    }
    const product = (await h.req('GET', `/api/v1/products/${id}.json`, { token: s.accessToken })).json().product;
    expect([product.price, product.compare_at_price]).toEqual(['4.00', '5.00']);
    // The number 0 (and JSON's -0, the same number) is a price of zero.
    const zero = await h.req('PUT', `/api/v1/products/${id}.json`, { token: s.accessToken, body: { variants: [{ price: 0 }] } });
    expect(zero.json().product.price).toBe('0.00');
  });

  it('merchant variant form (multipart, no schema): price and discountPrice "-0" are a 400 envelope and change nothing', async () => {
    const s = await store();
    const made = await h.req('POST', '/products', { token: s.merchant.token, body: { title: 'Form', variants: [{ name: 'Size', value: 'M', price: 9, discountPrice: 8 }] } });
    const variantId = made.json().data.variants[0].id;
    for (const amount of SIGNED) {
      for (const field of ['price', 'discountPrice']) {
        const { payload, contentType } = multipartBody({ [field]: amount });
        const res = await h.req('PATCH', `/variants/update-single-variant/${variantId}`, { token: s.merchant.token, payload: payload as unknown as string, headers: { 'content-type': contentType } });
        expectEnvelopeError(res, 400, field);
      }
    }
    const { rows } = await h.db.query<{ price_minor: string; discount_price_minor: string }>('SELECT price_minor, discount_price_minor FROM variants WHERE num_id = $1', [variantId]);
    expect([Number(rows[0].price_minor), Number(rows[0].discount_price_minor)]).toEqual([900, 800]);
  });
});
