// Review of the catalog and content resources (app-api.md Resources; C5, C6, C14): bugs found by
// reading the code against the spec and by requests at once on real PostgreSQL. The concurrency
// tests pass trivially on PGlite (it runs one transaction at a time); they guard PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';
import { expectEnvelopeError } from './helpers/expect.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

const store = () => storeWithApp(h, { scopes: ['read_products', 'write_products', 'read_content', 'write_content'], tier: 'enterprise' });
const createProduct = (token: string, body: unknown) => h.req('POST', '/api/v1/products.json', { token, body });
const handlesOf = async (storeId: string) =>
  (await h.db.query<{ handle: string }>('SELECT handle FROM products WHERE store_id = $1 ORDER BY handle', [storeId])).rows.map((r) => r.handle);

describe('product handles stay unique in the store under concurrent writes (docs/decisions.md Catalog: Handles)', () => {
  it('creates with one title at once take slug, slug-2, ... (never the same handle twice)', async () => {
    const s = await store();
    const res = await Promise.all(Array.from({ length: 8 }, () => createProduct(s.accessToken, { title: 'Same Title' })));
    expect(res.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    const handles = res.map((r) => r.json().product.handle as string);
    expect(new Set(handles).size).toBe(8);
    expect([...handles].sort()).toEqual(['same-title', ...[2, 3, 4, 5, 6, 7, 8].map((n) => `same-title-${n}`)].sort());
  });

  it('creates sending one handle at once: one 201, the others 400 has already been taken', async () => {
    const s = await store();
    const res = await Promise.all(Array.from({ length: 8 }, (_, i) => createProduct(s.accessToken, { title: `P${i}`, handle: 'given' })));
    expect(res.filter((r) => r.statusCode === 201)).toHaveLength(1);
    for (const r of res.filter((x) => x.statusCode !== 201)) {
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual({ errors: { handle: ['has already been taken'] } });
    }
    expect(await handlesOf(s.merchant.storeId)).toEqual(['given']);
  });

  it('updates to one handle at once: one 200, the others 400; no two products share it', async () => {
    const s = await store();
    const products = await Promise.all([0, 1, 2, 3].map(async (i) => (await createProduct(s.accessToken, { title: `Q${i}` })).json().product));
    const res = await Promise.all(products.map((p) => h.req('PUT', `/api/v1/products/${p.id}.json`, { token: s.accessToken, body: { handle: 'wanted' } })));
    expect(res.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(res.filter((r) => r.statusCode === 400)).toHaveLength(3);
    expect((await handlesOf(s.merchant.storeId)).filter((x) => x === 'wanted')).toHaveLength(1);
  });
});

describe('a variant update and a product update with variants at once (C7.1, C7.3)', () => {
  it('both succeed: no deadlock answered as a 500', async () => {
    const s = await store();
    const m = s.merchant.token;
    const created = await h.req('POST', '/products', {
      token: m,
      body: { title: 'Deadlock Tee', variants: [{ name: 'Size', value: 'S', price: 10, stock: 5 }, { name: 'Size', value: 'M', price: 10, stock: 5 }] },
    });
    expect(created.statusCode).toBe(201);
    const p = created.json().data;
    const [first, second] = p.variants.map((v: { id: number }) => v.id);
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await Promise.all([
        h.req('PUT', `/products/${p.product_id}`, { token: m, body: { variants: [{ varientId: first, stock: i }] } }),
        h.req('PATCH', `/variants/update-single-variant/${second}`, { token: m, body: { stock: i } }),
        h.req('PATCH', `/variants/update-single-variant/${first}`, { token: m, body: { stock: i + 1 } }),
      ]);
      codes.push(...res.map((r) => r.statusCode));
    }
    expect(codes).toEqual(Array(codes.length).fill(200));
  }, 60_000);
});

describe('page link and seoImage are URLs (app-api.md Page: `seoImage` is a social-share image URL, `link` an external link)', () => {
  const postPage = (token: string, body: unknown) => h.req('POST', '/api/v1/pages.json', { token, body });
  const pageCount = async (storeId: string) => (await h.db.query('SELECT count(*)::int AS n FROM pages WHERE store_id = $1', [storeId])).rows[0].n;

  it('a value that is not an absolute http(s) URL -> 400 envelope naming the field; nothing stored', async () => {
    const s = await store();
    for (const [field, value] of [
      ['link', 'javascript:alert(document.cookie)'],
      ['link', '/pages/about'],
      ['link', 'not a url'],
      ['seoImage', 'not a url'],
      ['seoImage', 'data:image/png;base64,AAAA'],
      ['seoImage', 'ftp://cdn.example.com/share.png'],
    ] as const) {
      const res = await postPage(s.accessToken, { title: 'Policy', [field]: value });
      expectEnvelopeError(res, 400, `${field} must be an http or https URL`);
    }
    // The merchant route reads the same fields.
    expectEnvelopeError(await h.req('POST', '/pages', { token: s.merchant.token, body: { title: 'Policy', seoImage: 'javascript:x' } }), 400, 'seoImage must be an http or https URL');
    expect(await pageCount(s.merchant.storeId)).toBe(0);
  });

  it('absolute http(s) URLs are stored trimmed; "" or null is none', async () => {
    const s = await store();
    const ok = await postPage(s.accessToken, { title: 'Policy', link: ' https://example.com/policy ', seoImage: 'http://cdn.example.com/a.png' });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().data.page).toMatchObject({ link: 'https://example.com/policy', seoImage: 'http://cdn.example.com/a.png' });
    const none = await postPage(s.accessToken, { title: 'Policy', link: '', seoImage: null });
    expect(none.statusCode).toBe(201);
    expect(none.json().data.page).toMatchObject({ link: null, seoImage: null });
  });
});
