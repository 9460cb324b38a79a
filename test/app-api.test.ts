// The App API's common layer and its first endpoints: authentication (app-api.md Authentication,
// Rules), the request-rate limit (Limits; C5.5), the version header (Versioning; C5.5), response and
// error shapes (Conventions, Errors; C5.1, C5.6), bare-body paging (C5.4) and products (C6.1, C14.1),
// the unavailable file endpoints (C6.9). Each test names the clause it checks.
//
// The rate limiter runs on a clock this file drives by hand (a fresh one-second window per test, and
// time frozen within it), so "the 21st request within one second" holds however slow the machine.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { expectEnvelopeError, expectErrorsBody } from './helpers/expect.js';
import { createTestApp, installApp, signupMerchant, storeWithApp } from './helpers/actors.js';
import { MemoryRateLimiter } from '../src/ratelimit/memory.js';
import { WINDOW_MS } from '../src/ratelimit/limiter.js';
import { uuidv7 } from '../src/ids.js';

let h: Harness;
/** The rate limiter's "now" (ms): frozen within a test, moved one window on before each test. */
let limiterNow = Date.now();
const limiter = new MemoryRateLimiter({ now: () => limiterNow });

beforeAll(async () => {
  h = await createHarness({}, { limiter });
});
afterAll(() => h?.close());
beforeEach(() => {
  limiterNow = Math.max(limiterNow + WINDOW_MS, Date.now());
});

const VERSION = '2026-06';
const BASE = 'http://svc.test'; // SVC_BASE_URL of the harness
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

type Res = Awaited<ReturnType<Harness['req']>>;

// ---------------------------------------------------------------------------------------------
// Shapes (app-api.md Errors, Body shapes)

function expectVersionHeader(res: Res) {
  expect(res.headers['x-svc-api-version']).toBe(VERSION);
}

function expectNoRateHeaders(res: Res) {
  for (const name of [...RATE_HEADERS, 'retry-after']) expect(res.headers[name]).toBeUndefined();
}

function rate(res: Res) {
  return {
    limit: Number(res.headers['x-ratelimit-limit']),
    remaining: Number(res.headers['x-ratelimit-remaining']),
    reset: Number(res.headers['x-ratelimit-reset']),
  };
}

const get = (url: string, token?: string, headers?: Record<string, string>) => h.req('GET', url, { token, headers });

// ---------------------------------------------------------------------------------------------
// Store data: products are inserted with SQL (their create routes do not exist yet)

interface ProductSeed {
  title?: string;
  handle?: string;
  status?: 'active' | 'draft' | 'archived';
  priceMinor?: number | null;
  compareMinor?: number | null;
  createdAt?: Date;
  bodyHtml?: string;
  vendor?: string;
  productType?: string;
  tags?: string[];
  inventory?: number;
  sku?: string | null;
}

let seedSeconds = 0;
/** Strictly increasing creation times, so "newest first" has one right order. */
const nextCreatedAt = () => new Date(Date.UTC(2026, 0, 1) + ++seedSeconds * 1000);

async function insertProduct(storeId: string, p: ProductSeed = {}) {
  const id = uuidv7();
  const createdAt = p.createdAt ?? nextCreatedAt();
  const title = p.title ?? `Product ${id.slice(-6)}`;
  const { rows } = await h.db.query<{ num_id: number }>(
    `INSERT INTO products (id, store_id, title, handle, body_html, vendor, product_type, status, tags, price_minor,
                           compare_at_price_minor, inventory_quantity, sku, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, $13, $14, $14) RETURNING num_id`,
    [id, storeId, title, p.handle ?? `handle-${id.slice(-12)}`, p.bodyHtml ?? '', p.vendor ?? '', p.productType ?? '', p.status ?? 'active',
      JSON.stringify(p.tags ?? []), p.priceMinor ?? null, p.compareMinor ?? null, p.inventory ?? 0, p.sku ?? null, createdAt],
  );
  return { id, numId: rows[0].num_id, title, createdAt };
}

async function insertVariant(storeId: string, productId: string, v: { name?: string; value?: string; priceMinor: number; discountMinor?: number | null; stock?: number; stockStatus?: string; sku?: string | null; position?: number }) {
  const id = uuidv7();
  const now = new Date();
  const { rows } = await h.db.query<{ num_id: number }>(
    `INSERT INTO variants (id, product_id, store_id, name, value, price_minor, discount_price_minor, stock, stock_status, sku, position, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING num_id`,
    [id, productId, storeId, v.name ?? '', v.value ?? '', v.priceMinor, v.discountMinor ?? null, v.stock ?? 0, v.stockStatus ?? 'IN_STOCK', v.sku ?? null, v.position ?? 1, now],
  );
  return { id, numId: rows[0].num_id };
}

async function insertImage(productId: string, src: string, position: number) {
  const { rows } = await h.db.query<{ num_id: number }>(
    'INSERT INTO product_images (product_id, src, position) VALUES ($1, $2, $3) RETURNING num_id',
    [productId, src, position],
  );
  return rows[0].num_id;
}

// =============================================================================================

describe('authentication (app-api.md Authentication, Rules 1: 401; C5.1 shape, C5.5 headers)', () => {
  it('no Authorization header -> 401 errors body, version header, no rate-limit headers (Rules 1; C5.5)', async () => {
    const res = await get('/api/v1/products.json');
    expectErrorsBody(res, 401);
    expectVersionHeader(res);
    expectNoRateHeaders(res);
  });

  it('a malformed Authorization header -> 401 (Rules 1)', async () => {
    const s = await storeWithApp(h);
    for (const authorization of [`Basic ${s.accessToken}`, 'Bearer', 'Bearer ', s.accessToken, `Token ${s.accessToken}`, `Bearer ${s.accessToken} extra`]) {
      const res = await get('/api/v1/products.json', undefined, { authorization });
      expectErrorsBody(res, 401);
      expectVersionHeader(res);
      expectNoRateHeaders(res);
    }
  });

  it('an unknown token -> 401 (Rules 1)', async () => {
    const res = await get('/api/v1/products.json', 'svcat_this-token-was-never-issued');
    expectErrorsBody(res, 401);
    expectVersionHeader(res);
    expectNoRateHeaders(res);
  });

  it('an expired token (24 h, Obtaining access tokens 3) -> 401; still valid just before (Rules 1)', async () => {
    const s = await storeWithApp(h);
    expect((await get('/api/v1/products.json', s.accessToken)).statusCode).toBe(200); // cached from here on
    await h.advance(24 * 3600 - 60);
    expect((await get('/api/v1/products.json', s.accessToken)).statusCode).toBe(200);
    await h.advance(61); // 24 h + 1 s after issue
    const res = await get('/api/v1/products.json', s.accessToken);
    expectErrorsBody(res, 401);
    expectVersionHeader(res);
    expectNoRateHeaders(res);
  });

  it('a token after uninstall -> 401 at once (Token state; Rules 1; C4.7)', async () => {
    const s = await storeWithApp(h);
    expect((await get('/api/v1/products.json', s.accessToken)).statusCode).toBe(200); // cached from here on
    const del = await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.merchant.token });
    expect(del.statusCode).toBe(200);
    const res = await get('/api/v1/products.json', s.accessToken);
    expectErrorsBody(res, 401);
    expectVersionHeader(res);
    expectNoRateHeaders(res);
    expectEnvelopeError(await get('/api/v1/files.json', s.accessToken), 401);
  });

  it('401 on /api/v1/files.json uses the envelope error (C5.1, C6.9)', async () => {
    const none = await get('/api/v1/files.json');
    expectEnvelopeError(none, 401);
    expectVersionHeader(none);
    expectNoRateHeaders(none);
    const bad = await get('/api/v1/files.json', 'svcat_nope');
    expectEnvelopeError(bad, 401);
    expectNoRateHeaders(bad);
  });
});

describe('scopes (app-api.md Rules 2: 403; C5.1, C5.5)', () => {
  it('a token lacking read_products -> 403 errors body, with version and rate-limit headers', async () => {
    const s = await storeWithApp(h, { scopes: ['read_orders', 'write_products'] });
    const res = await get('/api/v1/products.json', s.accessToken);
    expectErrorsBody(res, 403);
    expectVersionHeader(res);
    expect(rate(res)).toMatchObject({ limit: 20, remaining: 19 });
    expectErrorsBody(await get(`/api/v1/products/${uuidv7()}.json`, s.accessToken), 403);
  });
});

describe('X-SVC-Api-Version on every /api/v1 response (Versioning 2; C5.5)', () => {
  it('200, 401, 403, 404 (after auth), 422 and 429 all carry 2026-06', async () => {
    const s = await storeWithApp(h);
    const ok = await get('/api/v1/products.json', s.accessToken);
    expect(ok.statusCode).toBe(200);
    expectVersionHeader(ok);

    const unauth = await get('/api/v1/products.json');
    expect(unauth.statusCode).toBe(401);
    expectVersionHeader(unauth);

    const noScope = await storeWithApp(h, { scopes: ['read_orders'] });
    const forbidden = await get('/api/v1/products.json', noScope.accessToken);
    expect(forbidden.statusCode).toBe(403);
    expectVersionHeader(forbidden);

    const missing = await get('/api/v1/no-such-thing.json', s.accessToken);
    expectErrorsBody(missing, 404);
    expectVersionHeader(missing);
    expect(rate(missing).limit).toBe(20);

    const invalid = await get('/api/v1/products.json?status=deleted', s.accessToken);
    expect(invalid.statusCode).toBe(422);
    expectVersionHeader(invalid);

    let limited: Res | undefined;
    for (let i = 0; i < 25 && !limited; i++) {
      const res = await get('/api/v1/products.json', s.accessToken);
      if (res.statusCode === 429) limited = res;
    }
    expect(limited?.statusCode).toBe(429);
    expectVersionHeader(limited!);
  });

  it('an unknown path under /api/v1 without a token -> 401 before 404 (C5.5; Rules 1)', async () => {
    const res = await get('/api/v1/no-such-thing.json');
    expectErrorsBody(res, 401);
    expectVersionHeader(res);
    expectNoRateHeaders(res);
  });

  it('a request sending X-SVC-Api-Version: 1999-01 (or garbage) is served as the current version (C5.5)', async () => {
    const s = await storeWithApp(h);
    const product = await insertProduct(s.merchant.storeId);
    for (const sent of ['1999-01', 'not-a-version', VERSION]) {
      const res = await get('/api/v1/products.json', s.accessToken, { 'x-svc-api-version': sent });
      expect(res.statusCode).toBe(200);
      expect(res.json().products.map((p: any) => p.product_id)).toEqual([product.id]);
      expectVersionHeader(res);
    }
  });
});

describe('request rate (app-api.md Limits, Request rate; C5.5)', () => {
  it('free tier: 20 per second; the 21st -> 429 rate-limit body, Retry-After 1, headers (Limits 1)', async () => {
    const s = await storeWithApp(h);
    const remaining: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await get('/api/v1/products.json', s.accessToken);
      expect(res.statusCode).toBe(200);
      const r = rate(res);
      expect(r.limit).toBe(20);
      expect(res.headers['retry-after']).toBeUndefined();
      remaining.push(r.remaining);
    }
    expect(remaining).toEqual([19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);

    const res = await get('/api/v1/products.json', s.accessToken);
    expect(res.statusCode).toBe(429);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect(body).toEqual({ error: expect.any(String), message: expect.any(String) });
    expect(body.message).toMatch(/rate limit/i);
    expect(body.message).toMatch(/\b1\b/); // the seconds to retry after
    expect(res.headers['retry-after']).toBe('1');
    expectVersionHeader(res);
    const r = rate(res);
    expect(r).toMatchObject({ limit: 20, remaining: 0 });
    // Unix seconds, at the end of the window that started with this second's first request.
    const nowSeconds = limiterNow / 1000;
    expect(Number.isInteger(r.reset)).toBe(true);
    expect(r.reset).toBeGreaterThanOrEqual(Math.floor(nowSeconds));
    expect(r.reset).toBeLessThanOrEqual(Math.ceil(nowSeconds) + 1);
    expect(Math.abs(r.reset - Date.now() / 1000)).toBeLessThan(3600);

    // A refused request is not recorded; once the window has passed, requests are served again.
    limiterNow += WINDOW_MS;
    const again = await get('/api/v1/products.json', s.accessToken);
    expect(again.statusCode).toBe(200);
    expect(rate(again)).toMatchObject({ limit: 20, remaining: 19 });
  });

  it('25 concurrent requests: exactly 20 served, 5 refused (Limits 1, 2: no burst allowance)', async () => {
    const s = await storeWithApp(h);
    const results = await Promise.all(Array.from({ length: 25 }, () => get('/api/v1/products.json', s.accessToken)));
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(20);
    expect(codes.filter((c) => c === 429)).toHaveLength(5);
    for (const res of results) {
      expectVersionHeader(res);
      expect(rate(res).limit).toBe(20);
      if (res.statusCode === 429) {
        expect(rate(res).remaining).toBe(0);
        expect(res.headers['retry-after']).toBe('1');
      }
    }
    expect(results.filter((r) => r.statusCode === 200).map((r) => rate(r).remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('per (app, store) pair: the same app on another store and another app on the same store are unaffected (Limits 3)', async () => {
    const s = await storeWithApp(h);
    const otherStore = await signupMerchant(h);
    const sameAppOtherStore = await installApp(h, otherStore, s.app);
    const otherApp = await createTestApp(h, s.partner.token);
    const otherAppSameStore = await installApp(h, s.merchant, otherApp);

    for (let i = 0; i < 20; i++) expect((await get('/api/v1/products.json', s.accessToken)).statusCode).toBe(200);
    expect((await get('/api/v1/products.json', s.accessToken)).statusCode).toBe(429);

    for (const token of [sameAppOtherStore.accessToken, otherAppSameStore.accessToken]) {
      const res = await get('/api/v1/products.json', token);
      expect(res.statusCode).toBe(200);
      expect(rate(res)).toMatchObject({ limit: 20, remaining: 19 });
    }
    // ...and they did not pool into the first pair's window either.
    expect((await get('/api/v1/products.json', s.accessToken)).statusCode).toBe(429);
  });

  it('requests ending in 4xx count: 404s and 422s use up the window (Limits 2)', async () => {
    const s = await storeWithApp(h);
    for (let i = 0; i < 10; i++) expect((await get('/api/v1/no-such-thing.json', s.accessToken)).statusCode).toBe(404);
    for (let i = 0; i < 5; i++) expect((await get(`/api/v1/products/${uuidv7()}.json`, s.accessToken)).statusCode).toBe(404);
    for (let i = 0; i < 5; i++) expect((await get('/api/v1/products.json?status=nope', s.accessToken)).statusCode).toBe(422);
    const res = await get('/api/v1/products.json', s.accessToken);
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({ error: expect.any(String), message: expect.any(String) });
  });

  it('403s carry rate-limit headers and count (Limits 2; C5.5)', async () => {
    const s = await storeWithApp(h, { scopes: ['read_orders'] });
    for (let i = 0; i < 20; i++) {
      const res = await get('/api/v1/products.json', s.accessToken);
      expect(res.statusCode).toBe(403);
      expect(rate(res)).toMatchObject({ limit: 20, remaining: 19 - i });
      expect(Number.isInteger(rate(res).reset)).toBe(true);
    }
    const res = await get('/api/v1/products.json', s.accessToken);
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({ error: expect.any(String), message: expect.any(String) });
  });

  it('all methods count equally (Limits 2)', async () => {
    const s = await storeWithApp(h);
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    for (let i = 0; i < 20; i++) {
      const method = methods[i % methods.length];
      const res = await h.req(method, '/api/v1/files.json', { token: s.accessToken });
      expect(res.statusCode).toBe(404);
      expect(rate(res).remaining).toBe(19 - i);
    }
    for (const method of methods) {
      const res = await h.req(method, '/api/v1/products.json', { token: s.accessToken });
      expect(res.statusCode).toBe(429);
    }
  });

  it('401s are not counted (C5.5)', async () => {
    const s = await storeWithApp(h);
    for (let i = 0; i < 25; i++) expect((await get('/api/v1/products.json', undefined, { authorization: 'Bearer svcat_wrong' })).statusCode).toBe(401);
    expect(rate(await get('/api/v1/products.json', s.accessToken)).remaining).toBe(19);
  });

  it('a tier change reaches the limiter within 60 s of the service clock, not at once (Limits 4; C3.3)', async () => {
    const s = await storeWithApp(h);
    expect(rate(await get('/api/v1/products.json', s.accessToken)).limit).toBe(20);

    const patch = await h.req('PATCH', `/apps/developer/apps/${s.app.appId}`, { token: s.partner.token, body: { tier: 'pro' } });
    expect(patch.statusCode).toBe(200);
    expect(patch.json().data.app.tier).toBe('pro');

    expect(rate(await get('/api/v1/products.json', s.accessToken)).limit).toBe(20);
    await h.advance(30);
    expect(rate(await get('/api/v1/products.json', s.accessToken)).limit).toBe(20);
    await h.advance(31); // 61 s after the tier was looked up
    const res = await get('/api/v1/products.json', s.accessToken);
    expect(res.statusCode).toBe(200);
    expect(rate(res).limit).toBe(100);
    expect(rate(res).remaining).toBe(100 - 4);
  });
});

describe('tenant isolation (C4.6: a token opens its installation\'s store only)', () => {
  it('the same app installed on two stores: store A\'s token never sees store B\'s products', async () => {
    const a = await storeWithApp(h);
    const storeB = await signupMerchant(h);
    const b = await installApp(h, storeB, a.app);
    const pa = await insertProduct(a.merchant.storeId, { title: 'A product' });
    const pb = await insertProduct(storeB.storeId, { title: 'B product' });

    const listA = await get('/api/v1/products.json', a.accessToken);
    expect(listA.json().products.map((p: any) => p.product_id)).toEqual([pa.id]);
    const listB = await get('/api/v1/products.json', b.accessToken);
    expect(listB.json().products.map((p: any) => p.product_id)).toEqual([pb.id]);

    for (const id of [pb.id, String(pb.numId)]) {
      const res = await get(`/api/v1/products/${id}.json`, a.accessToken);
      expectErrorsBody(res, 404);
      expectVersionHeader(res);
      expect(JSON.stringify(res.json())).not.toContain('B product');
    }
    expect((await get(`/api/v1/products/${pb.id}.json`, b.accessToken)).statusCode).toBe(200);
    expect((await get(`/api/v1/products/${pb.numId}.json`, b.accessToken)).statusCode).toBe(200);
  });
});

describe('products list: bare body and Link paging (Conventions 5; C5.4; C6.1)', () => {
  const link = (query: string, rel: 'next' | 'previous') => `<${BASE}/api/v1/products.json?${query}>; rel="${rel}"`;

  it('7 products, limit=3: next on page 1, next and previous on page 2, previous on page 3; newest first', async () => {
    const s = await storeWithApp(h);
    const seeded = [];
    for (let i = 0; i < 7; i++) seeded.push(await insertProduct(s.merchant.storeId, { title: `P${i}` }));
    const newestFirst = [...seeded].reverse().map((p) => p.id);

    const p1 = await get('/api/v1/products.json?limit=3', s.accessToken);
    expect(p1.statusCode).toBe(200);
    expect(Object.keys(p1.json())).toEqual(['products']);
    expect(p1.json().products.map((p: any) => p.product_id)).toEqual(newestFirst.slice(0, 3));
    expect(p1.headers.link).toBe(link('page=2&limit=3', 'next'));

    const p2 = await get('/api/v1/products.json?page=2&limit=3', s.accessToken);
    expect(p2.json().products.map((p: any) => p.product_id)).toEqual(newestFirst.slice(3, 6));
    expect(p2.headers.link).toBe(`${link('page=3&limit=3', 'next')}, ${link('page=1&limit=3', 'previous')}`);

    const p3 = await get('/api/v1/products.json?page=3&limit=3', s.accessToken);
    expect(p3.json().products.map((p: any) => p.product_id)).toEqual(newestFirst.slice(6));
    expect(p3.headers.link).toBe(link('page=2&limit=3', 'previous'));

    const beyond = await get('/api/v1/products.json?page=4&limit=3', s.accessToken);
    expect(beyond.statusCode).toBe(200);
    expect(beyond.json()).toEqual({ products: [] });

    // One page: no Link header at all.
    const single = await get('/api/v1/products.json', s.accessToken);
    expect(single.json().products.map((p: any) => p.product_id)).toEqual(newestFirst);
    expect(single.headers.link).toBeUndefined();
    const exact = await get('/api/v1/products.json?limit=7', s.accessToken);
    expect(exact.json().products).toHaveLength(7);
    expect(exact.headers.link).toBeUndefined();
  });

  it('the status filter filters, is carried in Link, and other query parameters are ignored (C5.4; Conventions 4)', async () => {
    const s = await storeWithApp(h);
    const active = [];
    for (let i = 0; i < 4; i++) {
      active.push(await insertProduct(s.merchant.storeId, { status: 'active' }));
      await insertProduct(s.merchant.storeId, { status: i % 2 ? 'draft' : 'archived' });
    }
    const newestActive = [...active].reverse().map((p) => p.id);

    const p1 = await get('/api/v1/products.json?status=active&limit=3&foo=bar&since=never', s.accessToken);
    expect(p1.statusCode).toBe(200);
    expect(p1.json().products.map((p: any) => p.product_id)).toEqual(newestActive.slice(0, 3));
    expect(p1.json().products.every((p: any) => p.status === 'active')).toBe(true);
    expect(p1.headers.link).toBe(link('page=2&limit=3&status=active', 'next'));

    const p2 = await get('/api/v1/products.json?status=active&limit=3&page=2', s.accessToken);
    expect(p2.json().products.map((p: any) => p.product_id)).toEqual(newestActive.slice(3));
    expect(p2.headers.link).toBe(link('page=1&limit=3&status=active', 'previous'));

    const drafts = await get('/api/v1/products.json?status=draft', s.accessToken);
    expect(drafts.json().products.map((p: any) => p.status)).toEqual(['draft', 'draft']);
    const archived = await get('/api/v1/products.json?status=archived', s.accessToken);
    expect(archived.json().products.map((p: any) => p.status)).toEqual(['archived', 'archived']);
    expect((await get('/api/v1/products.json?bogus=1', s.accessToken)).json().products).toHaveLength(8);
  });

  it('an unknown status -> 422 errors body (C6.1)', async () => {
    const s = await storeWithApp(h);
    for (const status of ['deleted', 'ACTIVE', 'any']) {
      const res = await get(`/api/v1/products.json?status=${status}`, s.accessToken);
      expectErrorsBody(res, 422, 'status');
      expectVersionHeader(res);
    }
  });

  it('limit defaults to 50 and is clamped to 250; invalid page/limit fall back to the defaults (C5.4)', async () => {
    const s = await storeWithApp(h);
    await h.db.query(
      `INSERT INTO products (id, store_id, title, handle, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'Bulk ' || n, 'bulk-' || n, $2::timestamptz + n * interval '1 second', $2::timestamptz
         FROM generate_series(1, 260) AS n`,
      [s.merchant.storeId, new Date(Date.UTC(2025, 0, 1))],
    );
    const dflt = await get('/api/v1/products.json', s.accessToken);
    expect(dflt.json().products).toHaveLength(50);
    expect(dflt.json().products[0].title).toBe('Bulk 260');
    expect(dflt.headers.link).toBe(link('page=2&limit=50', 'next'));

    const clamped = await get('/api/v1/products.json?limit=1000', s.accessToken);
    expect(clamped.statusCode).toBe(200);
    expect(clamped.json().products).toHaveLength(250);
    expect(clamped.headers.link).toBe(link('page=2&limit=250', 'next'));

    const last = await get('/api/v1/products.json?limit=1000&page=2', s.accessToken);
    expect(last.json().products.map((p: any) => p.title)).toEqual(['Bulk 10', 'Bulk 9', 'Bulk 8', 'Bulk 7', 'Bulk 6', 'Bulk 5', 'Bulk 4', 'Bulk 3', 'Bulk 2', 'Bulk 1']);
    expect(last.headers.link).toBe(link('page=1&limit=250', 'previous'));

    for (const q of ['limit=0', 'limit=-5', 'limit=abc', 'page=0&limit=', 'page=-1', 'page=abc']) {
      const res = await get(`/api/v1/products.json?${q}`, s.accessToken);
      expect(res.statusCode).toBe(200);
      expect(res.json().products).toHaveLength(50);
      expect(res.json().products[0].title).toBe('Bulk 260');
    }
  });

  it('an absurdly large page is an empty page, not a server error (C5.4)', async () => {
    const s = await storeWithApp(h);
    await insertProduct(s.merchant.storeId);
    for (const page of ['99999999999999999999', '1e300', String(Number.MAX_SAFE_INTEGER)]) {
      const res = await get(`/api/v1/products.json?page=${page}&limit=250`, s.accessToken);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ products: [] });
    }
  });
});

describe('the product object (app-api.md Product; C5.2; C14.1; C6.1 get by UUID or numeric id)', () => {
  it('every field, money as two-decimal strings, integer ids; same object in the list and by either id', async () => {
    const s = await storeWithApp(h);
    const p = await insertProduct(s.merchant.storeId, {
      title: 'Linen Shirt', handle: 'linen-shirt', bodyHtml: '<p>Soft</p>', vendor: 'Apparel', productType: 'Shirts',
      tags: ['summer', 'linen'], priceMinor: 1990, compareMinor: 2500, inventory: 12, sku: 'LS-1', status: 'active',
    });
    const v1 = await insertVariant(s.merchant.storeId, p.id, { name: 'Size', value: 'M', priceMinor: 2500, discountMinor: 1990, stock: 12, sku: 'LS-1-M', position: 1 });
    const v2 = await insertVariant(s.merchant.storeId, p.id, { name: 'Size', value: 'L', priceMinor: 1005, stock: 0, sku: null, position: 2 });
    const i1 = await insertImage(p.id, 'https://cdn.example.com/a.jpg', 1);
    const i2 = await insertImage(p.id, 'https://cdn.example.com/b.jpg', 2);

    const expected = {
      id: p.numId,
      product_id: p.id,
      title: 'Linen Shirt',
      handle: 'linen-shirt',
      body_html: '<p>Soft</p>',
      vendor: 'Apparel',
      product_type: 'Shirts',
      published_scope: 'web',
      status: 'active',
      tags: ['summer', 'linen'],
      price: '19.90',
      compare_at_price: '25.00',
      inventory_quantity: 12,
      variants: [
        { id: v1.numId, product_id: p.numId, title: expect.any(String), price: '19.90', compare_at_price: '25.00', sku: 'LS-1-M', inventory_quantity: 12, available: true },
        { id: v2.numId, product_id: p.numId, title: expect.any(String), price: '10.05', compare_at_price: null, sku: null, inventory_quantity: 0, available: false },
      ],
      images: [
        { id: i1, product_id: p.numId, src: 'https://cdn.example.com/a.jpg', position: 1 },
        { id: i2, product_id: p.numId, src: 'https://cdn.example.com/b.jpg', position: 2 },
      ],
      created_at: p.createdAt.toISOString(),
      updated_at: p.createdAt.toISOString(),
    };

    const byUuid = await get(`/api/v1/products/${p.id}.json`, s.accessToken);
    expect(byUuid.statusCode).toBe(200);
    expect(byUuid.json()).toEqual({ product: expected });
    const product = byUuid.json().product;
    expect(Number.isInteger(product.id)).toBe(true);
    for (const v of product.variants) expect(Number.isInteger(v.id)).toBe(true);
    expect(product.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);

    const byNum = await get(`/api/v1/products/${p.numId}.json`, s.accessToken);
    expect(byNum.statusCode).toBe(200);
    expect(byNum.json()).toEqual({ product: expected });
    expectVersionHeader(byNum);
    expect(rate(byNum).limit).toBe(20);

    const list = await get('/api/v1/products.json', s.accessToken);
    expect(list.json()).toEqual({ products: [expected] });
  });

  it('a product without variants has variants: [] and null money when it has no price', async () => {
    const s = await storeWithApp(h);
    const p = await insertProduct(s.merchant.storeId, { title: 'Gift note', priceMinor: 5, compareMinor: null });
    const bare = await insertProduct(s.merchant.storeId, { title: 'No price' });
    const res = await get(`/api/v1/products/${p.id}.json`, s.accessToken);
    expect(res.json().product).toMatchObject({ price: '0.05', compare_at_price: null, variants: [], images: [], tags: [], inventory_quantity: 0 });
    const res2 = await get(`/api/v1/products/${bare.numId}.json`, s.accessToken);
    expect(res2.json().product).toMatchObject({ price: null, compare_at_price: null, variants: [] });
  });

  it('unknown, malformed or other-store ids -> 404 errors body (C6.1; C5.1)', async () => {
    const s = await storeWithApp(h);
    for (const id of [uuidv7(), '999999999999', 'not-an-id', '12abc', '0']) {
      const res = await get(`/api/v1/products/${id}.json`, s.accessToken);
      expectErrorsBody(res, 404);
      expectVersionHeader(res);
    }
  });
});

describe('files (C6.9: unavailable, 404 envelope after authentication)', () => {
  const paths = ['/api/v1/files.json', '/api/v1/files', '/api/v1/files/123.json', '/api/v1/files/a/b'];
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

  it('any method and path under /api/v1/files -> 404 envelope error, with version and rate headers', async () => {
    const s = await storeWithApp(h);
    for (const path of paths) {
      for (const method of methods) {
        limiterNow += WINDOW_MS; // 28 requests here: keep each under the per-second limit
        const res = await h.req(method, path, { token: s.accessToken });
        expectEnvelopeError(res, 404);
        expectVersionHeader(res);
        expect(rate(res).limit).toBe(20);
      }
    }
    const head = await h.req('HEAD', '/api/v1/files.json', { token: s.accessToken });
    expect(head.statusCode).toBe(404);
    expectVersionHeader(head);
  });

  it('without a token -> 401 envelope error first, for every method', async () => {
    for (const method of methods) {
      const res = await h.req(method, '/api/v1/files/123.json');
      expectEnvelopeError(res, 401);
      expectNoRateHeaders(res);
    }
  });

  it('the planned multipart upload, or a malformed JSON body, still gets the 404 (C6.9 over C5.6)', async () => {
    const s = await storeWithApp(h);
    const boundary = 'x-boundary';
    const multipart = await h.req('POST', '/api/v1/files.json', {
      token: s.accessToken,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\nPNG\r\n--${boundary}--\r\n`,
    });
    expectEnvelopeError(multipart, 404);
    const badJson = await h.req('POST', '/api/v1/files.json', { token: s.accessToken, headers: { 'content-type': 'application/json' }, payload: '{"alt":' });
    expectEnvelopeError(badJson, 404);
    const noType = await h.req('PUT', '/api/v1/files/1.json', { token: s.accessToken, payload: 'raw bytes' });
    expectEnvelopeError(noType, 404);
  });

  it('the OpenAPI document still builds and lists POST /api/v1/files.json', async () => {
    const res = await h.req('GET', '/openapi.json');
    expect(res.statusCode).toBe(200);
    expect(res.json().paths['/api/v1/files.json']).toHaveProperty('post');
  });
});

describe('malformed JSON (C5.6)', () => {
  // The App API has no route that reads a JSON body yet (product create/update are not built; the
  // file routes answer 404 whatever the body). The shared error handler is checked on the developer
  // API, an envelope route, until an /api/v1 POST route exists.
  it('POST /apps/developer/apps with malformed JSON -> 400 envelope error', async () => {
    const s = await storeWithApp(h);
    const res = await h.req('POST', '/apps/developer/apps', { token: s.partner.token, headers: { 'content-type': 'application/json' }, payload: '{"name": "x",' });
    expectEnvelopeError(res, 400);
  });
});

describe('C5.5 errors before routing', () => {
  it('a URL with bad percent-encoding gets a 400 in the errors shape with the version and rate-limit headers; without a token, 401 first', async () => {
    const s = await storeWithApp(h);
    const res = await h.req('GET', '/api/v1/%zz', { token: s.accessToken });
    expect(res.statusCode).toBe(400);
    expect(res.headers['x-svc-api-version']).toBe('2026-06');
    expect(rate(res)).toMatchObject({ limit: 20, remaining: 19 });
    expect(res.json()).toEqual({ errors: { base: ['Malformed URL'] } });
    const stranger = await h.req('GET', '/api/v1/%zz');
    expectErrorsBody(stranger, 401);
    expectVersionHeader(stranger);
    expectNoRateHeaders(stranger);
  });
});
