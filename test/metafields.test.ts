// Metafields (app-api.md Metafield; C6.6, C14.6, C14.7): the App API list with its four filters,
// bulk upsert on the App API and in the merchant admin (1 to 250 items, all or nothing, typed
// values, owners of the store), and the merchant read with its named error codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { operatorToken, signupMerchant, signupPartner, storeWithApp, type Merchant, staffToken } from './helpers/actors.js';
import { expectApiHeaders, expectEnvelopeError } from './helpers/expect.js';
import { uuidv7 } from '../src/ids.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SCOPES = ['read_metafields', 'write_metafields'];

interface Owners {
  product: { id: number; product_id: string };
  variant: { id: string; num_id: number };
  collection: string;
  customer: string;
  order: string;
  page: string;
}

/** One owner of each type in the merchant's store (customers, orders, pages inserted as rows). */
async function owners(m: Merchant): Promise<Owners> {
  const p = (await h.req('POST', '/products', { token: m.token, body: { title: 'Owner', variants: [{ name: 'Size', value: 'M', price: 10 }] } })).json().data;
  const variant = (await h.db.query<{ id: string; num_id: number }>('SELECT id, num_id FROM variants WHERE product_id = $1', [p.product_id])).rows[0];
  const collection = (await h.req('POST', '/collections', { token: m.token, body: { title: 'Owner' } })).json().data.id;
  const now = new Date();
  const customer = uuidv7();
  await h.db.query('INSERT INTO customers (id, store_id, email, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)', [customer, m.storeId, `${customer}@example.com`, now]);
  const order = uuidv7();
  await h.db.query(
    `INSERT INTO orders (id, store_id, order_number, confirmation_number, processed_at, created_at, updated_at)
     VALUES ($1, $2, (SELECT COALESCE(max(order_number), 1000) + 1 FROM orders WHERE store_id = $2), 'CONF', $3, $3, $3)`,
    [order, m.storeId, now],
  );
  const page = uuidv7();
  await h.db.query('INSERT INTO pages (id, store_id, title, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)', [page, m.storeId, 'About', now]);
  return { product: { id: p.id, product_id: p.product_id }, variant, collection, customer, order, page };
}

const item = (ownerType: string, ownerId: unknown, key: string, type: string, value: unknown, namespace = 'custom') => ({ ownerType, ownerId, namespace, key, type, value });

function bulk(token: string, metafields: unknown, via: 'api' | 'admin' = 'api') {
  return h.req('POST', via === 'api' ? '/api/v1/metafields/bulk.json' : '/metafields/bulk', { token, body: { metafields } });
}

async function rowsOf(storeId: string) {
  const { rows } = await h.db.query('SELECT owner_type, owner_id, namespace, key, type, value FROM metafields WHERE store_id = $1 ORDER BY owner_type, key', [storeId]);
  return rows;
}

// =============================================================================================

describe('POST /api/v1/metafields/bulk.json (C6.6)', () => {
  it('200 envelope data { metafields, created, updated }, each metafield field by field, in the order sent', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES });
    const o = await owners(s.merchant);
    const res = await bulk(s.accessToken, [
      item('product', o.product.product_id, 'material', 'single_line_text_field', 'Linen'),
      item('shop', s.merchant.storeId, 'founded', 'number_integer', '1999'),
      item('variant', o.variant.num_id, 'weight_g', 'number_decimal', 250.5),
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expectApiHeaders(res);
    const body = res.json();
    expect(body).toMatchObject({ status: 200, state: 'success', message: null, count: null, pagination: null });
    expect(body.data).toEqual({
      created: 3,
      updated: 0,
      metafields: [
        { id: expect.stringMatching(UUID), namespace: 'custom', key: 'material', value: 'Linen', raw_value: 'Linen', type: 'single_line_text_field', owner_type: 'product', owner_id: o.product.product_id, app_id: s.app.appId, created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) },
        { id: expect.stringMatching(UUID), namespace: 'custom', key: 'founded', value: 1999, raw_value: '1999', type: 'number_integer', owner_type: 'shop', owner_id: s.merchant.storeId, app_id: s.app.appId, created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) },
        // Owners are kept by UUID, whichever id named them (C14.2).
        { id: expect.stringMatching(UUID), namespace: 'custom', key: 'weight_g', value: 250.5, raw_value: '250.5', type: 'number_decimal', owner_type: 'variant', owner_id: o.variant.id, app_id: s.app.appId, created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) },
      ],
    });
  });

  it('an existing (owner type, owner, namespace, key) is updated in place: same id and created_at, new value and type; counts split', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES });
    const o = await owners(s.merchant);
    const first = (await bulk(s.accessToken, [item('product', o.product.product_id, 'care', 'single_line_text_field', 'Wash cold')])).json().data.metafields[0];
    await h.advance(5);
    const res = await bulk(s.accessToken, [
      item('product', String(o.product.id), 'care', 'multi_line_text_field', 'Wash cold\nDry flat'),
      item('product', o.product.product_id, 'care', 'single_line_text_field', 'Other namespace', 'other'),
    ]);
    expect(res.json().data).toMatchObject({ created: 1, updated: 1 });
    const [updated, created] = res.json().data.metafields;
    expect(updated).toMatchObject({ id: first.id, created_at: first.created_at, value: 'Wash cold\nDry flat', type: 'multi_line_text_field' });
    expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(first.updated_at));
    expect(created.id).not.toBe(first.id);
    expect(await rowsOf(s.merchant.storeId)).toHaveLength(2);
  });

  it('every owner type, each owner of the store (C6.6)', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES });
    const o = await owners(s.merchant);
    const res = await bulk(s.accessToken, [
      item('shop', s.merchant.storeId, 'k', 'boolean', true),
      item('product', o.product.id, 'k', 'boolean', true),
      item('variant', o.variant.id, 'k', 'boolean', true),
      item('collection', o.collection, 'k', 'boolean', true),
      item('customer', o.customer, 'k', 'boolean', true),
      item('order', o.order, 'k', 'boolean', true),
      item('page', o.page.toUpperCase(), 'k', 'boolean', true),
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.metafields.map((m: any) => [m.owner_type, m.owner_id])).toEqual([
      ['shop', s.merchant.storeId], ['product', o.product.product_id], ['variant', o.variant.id], ['collection', o.collection],
      ['customer', o.customer], ['order', o.order], ['page', o.page],
    ]);
  });

  it('typed values: sent raw or as JSON values, stored raw, returned typed (C14.6)', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES });
    const cases: [string, unknown, string, unknown][] = [
      ['single_line_text_field', 'Hello, world', 'Hello, world', 'Hello, world'],
      ['multi_line_text_field', 'line 1\nline 2', 'line 1\nline 2', 'line 1\nline 2'],
      ['number_integer', 42, '42', 42],
      ['number_integer', '42', '42', 42],
      ['number_integer', '-7', '-7', -7],
      ['number_decimal', 19.5, '19.5', 19.5],
      ['number_decimal', '19.50', '19.50', 19.5],
      ['number_decimal', '-0.25', '-0.25', -0.25],
      ['boolean', true, 'true', true],
      ['boolean', 'false', 'false', false],
      ['json', { a: 1, b: [true, null] }, '{"a":1,"b":[true,null]}', { a: 1, b: [true, null] }],
      ['json', '[1, 2]', '[1, 2]', [1, 2]],
      ['json', 3, '3', 3],
      ['date', '2024-02-29', '2024-02-29', '2024-02-29'],
      ['date_time', '2026-06-01T10:30:00Z', '2026-06-01T10:30:00Z', '2026-06-01T10:30:00Z'],
      ['date_time', '2026-06-01T10:30:00.123+05:30', '2026-06-01T10:30:00.123+05:30', '2026-06-01T10:30:00.123+05:30'],
      ['url', 'https://example.com/a?b=c', 'https://example.com/a?b=c', 'https://example.com/a?b=c'],
      ['url', 'mailto:hi@example.com', 'mailto:hi@example.com', 'mailto:hi@example.com'],
      ['color', '#1A2b3C', '#1A2b3C', '#1A2b3C'],
    ];
    const res = await bulk(s.accessToken, cases.map(([type, value], i) => item('shop', s.merchant.storeId, `k${i}`, type, value)));
    expect(res.statusCode, res.body).toBe(200);
    res.json().data.metafields.forEach((m: any, i: number) => {
      expect([m.type, m.raw_value, m.value], `case ${i}`).toEqual([cases[i][0], cases[i][2], cases[i][3]]);
    });
    const list = await h.req('GET', '/api/v1/metafields.json?key=k5', { token: s.accessToken });
    expect(list.json().data.metafields[0]).toMatchObject({ value: 19.5, raw_value: '19.5' });
  });

  it('a value that does not fit its type, or an unknown type -> 400 naming the index; nothing written', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES });
    const invalid: [string, unknown][] = [
      ['single_line_text_field', 'two\nlines'], ['single_line_text_field', 5], ['single_line_text_field', ''], ['multi_line_text_field', ['x']],
      ['number_integer', 1.5], ['number_integer', '1.5'], ['number_integer', 'abc'], ['number_integer', true], ['number_integer', 2 ** 53],
      ['number_decimal', 'abc'], ['number_decimal', '1e5'], ['number_decimal', '1.'], ['number_decimal', false],
      ['boolean', 'yes'], ['boolean', 1], ['json', '{bad'], ['json', 'plain words'],
      ['date', '2023-02-29'], ['date', '2026-2-1'], ['date', '20260201'], ['date', 20260201],
      ['date_time', '2026-02-28'], ['date_time', '2026-02-28T25:00:00Z'], ['date_time', 'yesterday'],
      ['url', 'not a url'], ['url', 'javascript:alert(1)'], ['url', 'ftp://example.com'],
      ['color', 'red'], ['color', '#fff'], ['color', '#12345G'],
      ['money', '1.00'], ['', 'x'],
    ];
    for (const [type, value] of invalid) {
      const res = await bulk(s.accessToken, [item('shop', s.merchant.storeId, 'ok', 'boolean', true), item('shop', s.merchant.storeId, 'bad', type, value)]);
      expectEnvelopeError(res, 400, /^metafields\[1\]/);
      expectApiHeaders(res);
    }
    const missingValue = await bulk(s.accessToken, [{ ownerType: 'shop', ownerId: s.merchant.storeId, namespace: 'n', key: 'k', type: 'boolean' }]);
    expectEnvelopeError(missingValue, 400, /^metafields\[0\]: value/);
    expect(await rowsOf(s.merchant.storeId)).toEqual([]);
  });

  it('all or nothing: one invalid item among valid ones (new and updates) -> 400 naming it, and nothing is written', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES });
    const o = await owners(s.merchant);
    await bulk(s.accessToken, [item('product', o.product.product_id, 'existing', 'single_line_text_field', 'old')]);
    const before = await rowsOf(s.merchant.storeId);

    const other = await signupMerchant(h);
    const foreign = await owners(other);
    const batches: [unknown[], RegExp][] = [
      [[item('product', o.product.product_id, 'existing', 'single_line_text_field', 'new'), item('shop', s.merchant.storeId, 'fresh', 'boolean', true), item('shop', s.merchant.storeId, 'broken', 'number_integer', 'x')], /^metafields\[2\]: value/],
      [[item('product', o.product.product_id, 'existing', 'single_line_text_field', 'new'), item('product', foreign.product.product_id, 'stolen', 'boolean', true)], /^metafields\[1\]: ownerId/],
      [[item('customer', uuidv7(), 'k', 'boolean', true), item('shop', s.merchant.storeId, 'fresh', 'boolean', true)], /^metafields\[0\]: ownerId/],
      [[item('shop', other.storeId, 'k', 'boolean', true)], /^metafields\[0\]: ownerId/],
      [[item('page', foreign.page, 'k', 'boolean', true)], /^metafields\[0\]/],
      [[item('widget', s.merchant.storeId, 'k', 'boolean', true)], /^metafields\[0\]: ownerType/],
      [[item('shop', s.merchant.storeId, 'k', 'boolean', true, 'bad namespace!')], /^metafields\[0\]: namespace/],
      [[item('shop', s.merchant.storeId, '', 'boolean', true)], /^metafields\[0\]: key/],
      [[item('shop', '', 'k', 'boolean', true)], /^metafields\[0\]: ownerId/],
      [[item('shop', s.merchant.storeId, 'fresh', 'boolean', true), 'not an object'], /^metafields\[1\]: must be an object/],
      // The lowest invalid index is named, whatever the kind of problem.
      [[item('shop', s.merchant.storeId, 'a', 'boolean', true), item('customer', uuidv7(), 'k', 'boolean', true), item('shop', s.merchant.storeId, 'k', 'color', 'red')], /^metafields\[1\]/],
      // The same metafield twice (by UUID and by numeric id of one product).
      [[item('product', o.product.product_id, 'dup', 'boolean', true), item('product', o.product.id, 'dup', 'boolean', false)], /^metafields\[1\]: repeats metafields\[0\]/],
    ];
    for (const [metafields, message] of batches) expectEnvelopeError(await bulk(s.accessToken, metafields), 400, message);
    expect(await rowsOf(s.merchant.storeId)).toEqual(before);
    expect(await rowsOf(other.storeId)).toEqual([]);
  });

  it('1 to 250 items: 0 or 251 -> 400; 250 -> 200', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES });
    for (const metafields of [[], Array(251).fill(0).map((_, i) => item('shop', s.merchant.storeId, `k${i}`, 'number_integer', i)), undefined, 'x', {}]) {
      expectEnvelopeError(await bulk(s.accessToken, metafields), 400, /^metafields must be an array of 1 to 250 items$/);
    }
    expectEnvelopeError(await h.req('POST', '/api/v1/metafields/bulk.json', { token: s.accessToken, headers: { 'content-type': 'application/json' }, payload: '{"metafields": [' }), 400);
    const res = await bulk(s.accessToken, Array(250).fill(0).map((_, i) => item('shop', s.merchant.storeId, `k${i}`, 'number_integer', i)));
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ created: 250, updated: 0 });
    expect(res.json().data.metafields.map((m: any) => m.value)).toEqual(Array.from({ length: 250 }, (_, i) => i));
    const again = await bulk(s.accessToken, Array(250).fill(0).map((_, i) => item('shop', s.merchant.storeId, `k${i}`, 'number_integer', i + 1)));
    expect(again.json().data).toMatchObject({ created: 0, updated: 250 });
  });

  it('401 envelope without or with a bad token; 403 envelope without write_metafields', async () => {
    for (const token of [undefined, 'svcat_nope']) {
      const res = await h.req('POST', '/api/v1/metafields/bulk.json', { token, body: { metafields: [] } });
      expectEnvelopeError(res, 401);
      expectApiHeaders(res, { rated: false });
    }
    const s = await storeWithApp(h, { scopes: ['read_metafields', 'write_products'] });
    const res = await bulk(s.accessToken, [item('shop', s.merchant.storeId, 'k', 'boolean', true)]);
    expectEnvelopeError(res, 403);
    expectApiHeaders(res);
  });
});

describe('GET /api/v1/metafields.json: the four filters, paging (app-api.md; C5.1)', () => {
  it('filters ownerType, ownerId, namespace, key; all four give at most one; newest first; envelope list with count and pagination', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES });
    const o = await owners(s.merchant);
    await bulk(s.accessToken, [
      item('product', o.product.product_id, 'a', 'boolean', true),
      item('product', o.product.product_id, 'b', 'boolean', true, 'seo'),
      item('variant', o.variant.id, 'a', 'boolean', true),
      item('shop', s.merchant.storeId, 'a', 'boolean', true, 'seo'),
    ]);
    await h.advance(1);
    await bulk(s.accessToken, [item('page', o.page, 'c', 'boolean', true)]);
    const other = await storeWithApp(h, { scopes: SCOPES });
    await bulk(other.accessToken, [item('shop', other.merchant.storeId, 'a', 'boolean', true)]);

    const list = async (q: string) => {
      const res = await h.req('GET', `/api/v1/metafields.json${q}`, { token: s.accessToken });
      expect(res.statusCode, res.body).toBe(200);
      return res;
    };
    const all = await list('');
    expectApiHeaders(all);
    expect(all.json()).toMatchObject({ status: 200, state: 'success', message: null, count: 5, pagination: { page: 1, limit: 50, totalPages: 1, resultCount: 5, totalResult: 5 } });
    expect(all.json().data.metafields[0]).toMatchObject({ owner_type: 'page', key: 'c' });
    const keys = async (q: string) => (await list(q)).json().data.metafields.map((m: any) => `${m.owner_type}:${m.namespace}.${m.key}`).sort();
    expect(await keys('?ownerType=product')).toEqual(['product:custom.a', 'product:seo.b']);
    expect(await keys(`?ownerId=${o.product.product_id}`)).toEqual(['product:custom.a', 'product:seo.b']);
    expect(await keys(`?ownerType=product&ownerId=${o.product.id}`)).toEqual(['product:custom.a', 'product:seo.b']);
    expect(await keys('?namespace=seo')).toEqual(['product:seo.b', 'shop:seo.a']);
    expect(await keys('?key=a')).toEqual(['product:custom.a', 'shop:seo.a', 'variant:custom.a']);
    expect(await keys(`?ownerType=product&ownerId=${o.product.product_id}&namespace=custom&key=a`)).toEqual(['product:custom.a']);
    expect(await keys(`?ownerType=variant&ownerId=${o.product.product_id}&namespace=custom&key=a`)).toEqual([]);
    expect(await keys('?namespace=none')).toEqual([]);
    expect(await keys('?unknown=1&owner_type=shop')).toEqual(['shop:seo.a']);

    const p1 = await list('?limit=2');
    expect(p1.json()).toMatchObject({ count: 5, pagination: { page: 1, limit: 2, totalPages: 3, resultCount: 2, totalResult: 5 } });
    const p3 = await list('?limit=2&page=3');
    expect(p3.json()).toMatchObject({ count: 5, pagination: { page: 3, limit: 2, totalPages: 3, resultCount: 1, totalResult: 5 } });
    expect((await list('?limit=1000')).json().pagination.limit).toBe(250);
  });

  it('an unknown ownerType -> 400 envelope; 401 envelope without a token; 403 envelope without read_metafields', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES });
    expectEnvelopeError(await h.req('GET', '/api/v1/metafields.json?ownerType=widget', { token: s.accessToken }), 400);
    for (const token of [undefined, 'svcat_nope']) expectEnvelopeError(await h.req('GET', '/api/v1/metafields.json', { token }), 401);
    const w = await storeWithApp(h, { scopes: ['write_metafields'] });
    const res = await h.req('GET', '/api/v1/metafields.json', { token: w.accessToken });
    expectEnvelopeError(res, 403);
    expectApiHeaders(res);
  });
});

describe('merchant POST /metafields/bulk (C6.6)', () => {
  it('same rules and answer; app_id null; staff may, partner 403, no token 401, operator needs storeId; an app update keeps the creator', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES });
    const m = s.merchant;
    const res = await bulk(m.token, [item('shop', m.storeId, 'hours', 'json', { mon: '9-5' })], 'admin');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ created: 1, updated: 0, metafields: [{ app_id: null, value: { mon: '9-5' }, raw_value: '{"mon":"9-5"}' }] });
    const byApp = await bulk(s.accessToken, [item('shop', m.storeId, 'hours', 'json', '{"mon":"10-4"}')]);
    expect(byApp.json().data).toMatchObject({ created: 0, updated: 1, metafields: [{ id: res.json().data.metafields[0].id, app_id: null, value: { mon: '10-4' } }] });
    expectEnvelopeError(await bulk(m.token, [item('shop', m.storeId, 'x', 'color', 'blue')], 'admin'), 400, /^metafields\[0\]: value/);
    expect((await bulk(await staffToken(h, m, 'STAFF_ADMIN'), [item('shop', m.storeId, 'staff', 'boolean', true)], 'admin')).statusCode).toBe(200);
    expectEnvelopeError(await bulk((await signupPartner(h)).token, [item('shop', m.storeId, 'x', 'boolean', true)], 'admin'), 403);
    expectEnvelopeError(await h.req('POST', '/metafields/bulk', { body: { metafields: [] } }), 401);
    const op = await operatorToken(h);
    expectEnvelopeError(await bulk(op, [item('shop', m.storeId, 'x', 'boolean', true)], 'admin'), 400);
    const byOp = await h.req('POST', '/metafields/bulk', { token: op, body: { storeId: m.storeId, metafields: [item('shop', m.storeId, 'op', 'boolean', true)] } });
    expect(byOp.statusCode, byOp.body).toBe(200);
    // Another store's owner, even for the operator acting for this store.
    const other = await signupMerchant(h);
    expectEnvelopeError(await bulk(m.token, [item('shop', other.storeId, 'x', 'boolean', true)], 'admin'), 400);
  });
});

describe('merchant GET /metafields/{id} (C14.7: UNAUTHORIZED, FORBIDDEN, NOT_FOUND)', () => {
  it('200 envelope data = the metafield, for the owner and for staff', async () => {
    const m = await signupMerchant(h);
    const created = (await bulk(m.token, [item('shop', m.storeId, 'k', 'number_decimal', '2.50')], 'admin')).json().data.metafields[0];
    for (const token of [m.token, await staffToken(h, m, 'STAFF_ADMIN'), await staffToken(h, m, 'MANAGER')]) {
      const res = await h.req('GET', `/metafields/${created.id}`, { token });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 200, state: 'success', message: null, data: created, count: null, pagination: null });
    }
    expect(created).toMatchObject({ value: 2.5, raw_value: '2.50' });
  });

  it('UNAUTHORIZED 401 without or with an invalid JWT (an app access token is not one)', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES });
    const created = (await bulk(s.accessToken, [item('shop', s.merchant.storeId, 'k', 'boolean', true)])).json().data.metafields[0];
    for (const token of [undefined, 'garbage', s.accessToken]) expectEnvelopeError(await h.req('GET', `/metafields/${created.id}`, { token }), 401, /^UNAUTHORIZED$/);
    await h.advance(13 * 3600); // platform JWTs live 12 hours
    expectEnvelopeError(await h.req('GET', `/metafields/${created.id}`, { token: s.merchant.token }), 401, /^UNAUTHORIZED$/);
  });

  it('FORBIDDEN 403 for a role without store access (partner, platform operator)', async () => {
    const m = await signupMerchant(h);
    const created = (await bulk(m.token, [item('shop', m.storeId, 'k', 'boolean', true)], 'admin')).json().data.metafields[0];
    for (const token of [(await signupPartner(h)).token, await operatorToken(h)]) {
      expectEnvelopeError(await h.req('GET', `/metafields/${created.id}`, { token }), 403, /^FORBIDDEN$/);
    }
  });

  it('NOT_FOUND 404 for a missing, malformed or another store\'s metafield', async () => {
    const m = await signupMerchant(h);
    const other = await signupMerchant(h);
    const foreign = (await bulk(other.token, [item('shop', other.storeId, 'k', 'boolean', true)], 'admin')).json().data.metafields[0];
    for (const id of [uuidv7(), 'nope', '123', foreign.id]) expectEnvelopeError(await h.req('GET', `/metafields/${id}`, { token: m.token }), 404, /^NOT_FOUND$/);
    expect((await h.req('GET', `/metafields/${foreign.id}`, { token: other.token })).statusCode).toBe(200);
  });
});
