// Collections (app-api.md Collection, POST /api/v1/collections.json; C7.1, C14.5) and product
// listings (app-api.md Product listing, POST /api/v1/product_listings.json; C6.2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { createTestApp, installApp, operatorToken, signupMerchant, signupPartner, storeWithApp, type Merchant, staffToken } from './helpers/actors.js';
import { expectApiHeaders, expectEnvelopeError, expectErrorsBody } from './helpers/expect.js';
import { events, newEvents } from './helpers/events.js';
import { uuidv7 } from '../src/ids.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function product(m: Merchant, title = 'Thing') {
  const res = await h.req('POST', '/products', { token: m.token, body: { title } });
  expect(res.statusCode).toBe(201);
  return res.json().data as { id: number; product_id: string };
}

// =============================================================================================

describe('POST /api/v1/collections.json (app-api.md Collection)', () => {
  it('201 bare { collection }, every field; handle = title lowercased with spaces -> "-"', async () => {
    const s = await storeWithApp(h);
    const before = await events(h, s.merchant.storeId);
    const res = await h.req('POST', '/api/v1/collections.json', {
      token: s.accessToken,
      body: { title: 'Summer Sale', body_html: '<p>Hot &amp; <b>cheap</b></p>', image: 'https://cdn.example.com/summer.jpg', collection_type: 'smart', rules: [{}] },
    });
    expect(res.statusCode, res.body).toBe(201);
    expectApiHeaders(res);
    expect(Object.keys(res.json())).toEqual(['collection']);
    const c = res.json().collection;
    expect(c).toEqual({
      id: expect.stringMatching(UUID),
      title: 'Summer Sale',
      handle: 'summer-sale',
      body_html: '<p>Hot &amp; <b>cheap</b></p>',
      description: 'Hot & cheap',
      published_at: expect.stringMatching(ISO),
      published_scope: 'web',
      sort_order: 'manual',
      collection_type: 'custom',
      url: '/collections/summer-sale',
      template_suffix: null,
      image: { alt: null, src: 'https://cdn.example.com/summer.jpg' },
      products_count: 0,
      seo: { title: 'Summer Sale', description: 'Hot & cheap', image: 'https://cdn.example.com/summer.jpg' },
      updated_at: expect.stringMatching(ISO),
    });
    expect(typeof c.id).toBe('string');
    // Collections emit no event (app-api.md's topic list has none).
    expect(await newEvents(h, s.merchant.storeId, before)).toEqual([]);
  });

  it('defaults and options: no body_html, no image; a given handle; { collection } wrapping; { src, alt } image; seo', async () => {
    const s = await storeWithApp(h);
    const post = (body: unknown) => h.req('POST', '/api/v1/collections.json', { token: s.accessToken, body });
    const bare = (await post({ title: 'New  Arrivals ' })).json().collection;
    expect(bare).toMatchObject({ title: 'New  Arrivals', handle: 'new-arrivals', body_html: '', description: '', image: { alt: null, src: null }, seo: { title: 'New  Arrivals', description: '', image: null } });
    expect((await post({ title: 'X', handle: 'Custom Handle' })).json().collection.handle).toBe('custom-handle');
    expect((await post({ collection: { title: 'Wrapped' } })).json().collection.handle).toBe('wrapped');
    const img = (await post({ title: 'Img', image: { src: 'https://cdn.example.com/i.png', alt: 'An image' } })).json().collection;
    expect(img.image).toEqual({ alt: 'An image', src: 'https://cdn.example.com/i.png' });
    const seo = (await post({ title: 'Seo', template_suffix: 'alt', seo: { title: 'Seo title', description: 'Seo text' } })).json().collection;
    expect(seo).toMatchObject({ template_suffix: 'alt', seo: { title: 'Seo title', description: 'Seo text', image: null } });
    // Titles are not unique, and the default handle is exactly the rule (docs/decisions.md).
    expect((await post({ title: 'Summer Sale' })).json().collection.handle).toBe('summer-sale');
    expect((await post({ title: 'Summer Sale' })).json().collection.handle).toBe('summer-sale');
  });

  it('a missing or blank title -> 422 { errors: { title: ["can\'t be blank"] } }; other invalid fields 422; a non-object body 400', async () => {
    const s = await storeWithApp(h);
    for (const body of [{}, { title: '' }, { title: '  ' }, { title: null }, { body_html: '<p>x</p>' }]) {
      const res = await h.req('POST', '/api/v1/collections.json', { token: s.accessToken, body });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({ errors: { title: ["can't be blank"] } });
      expectApiHeaders(res);
    }
    expectErrorsBody(await h.req('POST', '/api/v1/collections.json', { token: s.accessToken, body: { title: 'x', image: 'not a url' } }), 422, 'image');
    expectErrorsBody(await h.req('POST', '/api/v1/collections.json', { token: s.accessToken, body: { title: 5 } }), 422, 'title');
    expectErrorsBody(await h.req('POST', '/api/v1/collections.json', { token: s.accessToken, body: [1] }), 400);
    expectErrorsBody(await h.req('POST', '/api/v1/collections.json', { token: s.accessToken, headers: { 'content-type': 'application/json' }, payload: '{' }), 400);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM collections WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows[0].n).toBe(0);
  });

  it('401 without or with a bad token; 403 without write_products (write_collections is reserved and does not open it)', async () => {
    for (const token of [undefined, 'svcat_nope']) {
      const res = await h.req('POST', '/api/v1/collections.json', { token, body: { title: 'x' } });
      expectErrorsBody(res, 401);
      expectApiHeaders(res, { rated: false });
    }
    for (const scopes of [['read_products'], ['write_collections', 'read_collections']]) {
      const s = await storeWithApp(h, { scopes });
      const res = await h.req('POST', '/api/v1/collections.json', { token: s.accessToken, body: { title: 'x' } });
      expectErrorsBody(res, 403);
      expectApiHeaders(res);
    }
  });
});

describe('merchant POST /collections and POST /collections/{id}/products (C7.1, C14.5)', () => {
  it('POST /collections: 201 envelope with the collection; 422 envelope without a title; roles', async () => {
    const m = await signupMerchant(h);
    const res = await h.req('POST', '/collections', { token: m.token, body: { title: 'Best Sellers' } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ status: 201, state: 'success', message: null, count: null, pagination: null, data: { title: 'Best Sellers', handle: 'best-sellers', products_count: 0 } });
    expectEnvelopeError(await h.req('POST', '/collections', { token: m.token, body: {} }), 422, "title can't be blank");
    expect((await h.req('POST', '/collections', { token: await staffToken(h, m, 'STAFF_ADMIN'), body: { title: 'Staff' } })).statusCode).toBe(201);
    expectEnvelopeError(await h.req('POST', '/collections', { token: (await signupPartner(h)).token, body: { title: 'x' } }), 403);
    expectEnvelopeError(await h.req('POST', '/collections', { body: { title: 'x' } }), 401);
    expectEnvelopeError(await h.req('POST', '/collections', { token: 'bad', body: { title: 'x' } }), 401);
    const op = await operatorToken(h);
    expectEnvelopeError(await h.req('POST', '/collections', { token: op, body: { title: 'x' } }), 400);
    const byOp = await h.req('POST', '/collections', { token: op, body: { title: 'Op', storeId: m.storeId } });
    expect((await h.db.query('SELECT store_id FROM collections WHERE id = $1', [byOp.json().data.id])).rows[0].store_id).toBe(m.storeId);
  });

  it('adds products in order after the ones there; repeats are ignored; numeric ids accepted; products_count follows', async () => {
    const m = await signupMerchant(h);
    const [a, b, c] = [await product(m, 'A'), await product(m, 'B'), await product(m, 'C')];
    const col = (await h.req('POST', '/collections', { token: m.token, body: { title: 'Mix' } })).json().data;
    const add = (productIds: unknown[]) => h.req('POST', `/collections/${col.id}/products`, { token: m.token, body: { productIds } });

    const first = await add([b.product_id, a.product_id, b.product_id]);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ status: 200, state: 'success', data: { id: col.id, products_count: 2 } });
    const second = await add([a.product_id, c.id]);
    expect(second.json().data.products_count).toBe(3);
    const { rows } = await h.db.query('SELECT product_id FROM collection_products WHERE collection_id = $1 ORDER BY position', [col.id]);
    expect(rows.map((r) => r.product_id)).toEqual([b.product_id, a.product_id, c.product_id]);

    // Deleting a product takes it out of its collections.
    await h.req('DELETE', `/products/${a.product_id}`, { token: m.token });
    expect((await add([b.product_id])).json().data.products_count).toBe(2);
  });

  it('bad productIds -> 400 envelope and nothing added; unknown collection 404; another store\'s 403', async () => {
    const m = await signupMerchant(h);
    const other = await signupMerchant(h);
    const mine = await product(m);
    const foreign = await product(other);
    const col = (await h.req('POST', '/collections', { token: m.token, body: { title: 'C' } })).json().data;
    const foreignCol = (await h.req('POST', '/collections', { token: other.token, body: { title: 'F' } })).json().data;
    const add = (id: string, body: unknown, token = m.token) => h.req('POST', `/collections/${id}/products`, { token, body });

    for (const body of [{}, { productIds: [] }, { productIds: 'x' }, { productIds: ['not-an-id'] }, { productIds: Array(251).fill(mine.product_id) }]) {
      expectEnvelopeError(await add(col.id, body), 400);
    }
    expectEnvelopeError(await add(col.id, { productIds: [mine.product_id, foreign.product_id] }), 400, new RegExp(foreign.product_id));
    expectEnvelopeError(await add(col.id, { productIds: [uuidv7()] }), 400);
    expect((await h.db.query('SELECT count(*)::int AS n FROM collection_products WHERE collection_id = $1', [col.id])).rows[0].n).toBe(0);

    expectEnvelopeError(await add(uuidv7(), { productIds: [mine.product_id] }), 404);
    expectEnvelopeError(await add('nope', { productIds: [mine.product_id] }), 404);
    expectEnvelopeError(await add(foreignCol.id, { productIds: [mine.product_id] }), 403);
    expectEnvelopeError(await add(col.id, { productIds: [mine.product_id] }, (await signupPartner(h)).token), 403);
    expectEnvelopeError(await h.req('POST', `/collections/${col.id}/products`, { body: { productIds: [mine.product_id] } }), 401);
    expect((await add(col.id, { productIds: [mine.product_id] }, await staffToken(h, m, 'MANAGER'))).json().data.products_count).toBe(1);
  });
});

// =============================================================================================

describe('POST /api/v1/product_listings.json (app-api.md Product listing; C6.2)', () => {
  const channelApp = { scopes: ['read_products', 'write_products'], extensions: { salesChannel: true } };

  it('201 on the first listing, 200 again with external_id updated; the same listing by UUID or numeric id', async () => {
    const s = await storeWithApp(h, channelApp);
    const p = await product(s.merchant);
    const post = (body: unknown) => h.req('POST', '/api/v1/product_listings.json', { token: s.accessToken, body });

    const first = await post({ product_id: p.product_id, external_id: 'ext-1' });
    expect(first.statusCode, first.body).toBe(201);
    expectApiHeaders(first);
    expect(first.json()).toEqual({ product_listing: { id: expect.stringMatching(UUID), product_id: p.product_id, external_id: 'ext-1', status: 'active' } });
    const id = first.json().product_listing.id;

    const again = await post({ product_id: p.product_id, external_id: 'ext-2' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ product_listing: { id, product_id: p.product_id, external_id: 'ext-2', status: 'active' } });

    const byNumber = await post({ product_listing: { product_id: String(p.id) } });
    expect(byNumber.statusCode).toBe(200);
    expect(byNumber.json().product_listing).toEqual({ id, product_id: p.product_id, external_id: 'ext-2', status: 'active' });
    expect((await post({ product_id: p.id, external_id: 'ext 3 / stored as given ' })).json().product_listing.external_id).toBe('ext 3 / stored as given ');

    const other = await product(s.merchant, 'Other');
    const none = await post({ product_id: other.product_id });
    expect(none.statusCode).toBe(201);
    expect(none.json().product_listing.external_id).toBeNull();
    expect((await h.db.query('SELECT count(*)::int AS n FROM product_listings WHERE store_id = $1', [s.merchant.storeId])).rows[0].n).toBe(2);
  });

  it('an app without a sales channel in its manifest -> 400 errors body', async () => {
    for (const extensions of [undefined, {}, { salesChannel: false }, { webhooks: [] }]) {
      const s = await storeWithApp(h, { scopes: ['read_products', 'write_products'], ...(extensions ? { extensions } : {}) });
      const p = await product(s.merchant);
      const res = await h.req('POST', '/api/v1/product_listings.json', { token: s.accessToken, body: { product_id: p.product_id } });
      expectErrorsBody(res, 400, 'base');
      expect(res.json().errors.base[0]).toMatch(/sales channel/);
    }
    // The manifest is read at each call: a channel turned off stops new listings.
    const s = await storeWithApp(h, channelApp);
    const p = await product(s.merchant);
    expect((await h.req('POST', '/api/v1/product_listings.json', { token: s.accessToken, body: { product_id: p.product_id } })).statusCode).toBe(201);
    const off = await h.req('PATCH', `/apps/developer/apps/${s.app.appId}`, { token: s.partner.token, body: { extensions: { salesChannel: false } } });
    expect(off.statusCode, off.body).toBe(200);
    expectErrorsBody(await h.req('POST', '/api/v1/product_listings.json', { token: s.accessToken, body: { product_id: p.product_id } }), 400);
  });

  it('missing, unknown, malformed or another store\'s product_id -> 400 errors body', async () => {
    const s = await storeWithApp(h, channelApp);
    const other = await signupMerchant(h);
    const foreign = await product(other);
    const missing = await h.req('POST', '/api/v1/product_listings.json', { token: s.accessToken, body: { external_id: 'x' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ errors: { product_id: ["can't be blank"] } });
    for (const product_id of [uuidv7(), '99999999999', 'garbage', foreign.product_id, foreign.id, '', null, {}]) {
      expectErrorsBody(await h.req('POST', '/api/v1/product_listings.json', { token: s.accessToken, body: { product_id } }), 400, 'product_id');
    }
    expect((await h.db.query('SELECT count(*)::int AS n FROM product_listings WHERE product_id = $1', [foreign.product_id])).rows[0].n).toBe(0);
  });

  it('each app has its own channel: two apps list the same product, each 201; concurrent first listings make one listing', async () => {
    const s = await storeWithApp(h, channelApp);
    const second = await createTestApp(h, s.partner.token, channelApp);
    const t2 = await installApp(h, s.merchant, second);
    const p = await product(s.merchant);
    const post = (token: string) => h.req('POST', '/api/v1/product_listings.json', { token, body: { product_id: p.product_id } });
    expect((await post(s.accessToken)).statusCode).toBe(201);
    expect((await post(t2.accessToken)).statusCode).toBe(201);

    const p2 = await product(s.merchant, 'Race');
    const codes = (await Promise.all([1, 2, 3].map(() => h.req('POST', '/api/v1/product_listings.json', { token: s.accessToken, body: { product_id: p2.product_id } })))).map((r) => r.statusCode);
    expect(codes.sort()).toEqual([200, 200, 201]);
  });

  it('401 without or with a bad token; 403 without write_products', async () => {
    for (const token of [undefined, 'svcat_nope']) expectErrorsBody(await h.req('POST', '/api/v1/product_listings.json', { token, body: { product_id: '1' } }), 401);
    const s = await storeWithApp(h, { scopes: ['read_products'], extensions: { salesChannel: true } });
    const res = await h.req('POST', '/api/v1/product_listings.json', { token: s.accessToken, body: { product_id: '1' } });
    expectErrorsBody(res, 403);
    expectApiHeaders(res);
  });
});
