// Review of the catalog (products, variants; app-api.md Product and Variant; C7.1, C14.1, C14.2) by
// real requests: the bugs found, each with the case that showed it. The concurrency cases pass
// trivially on PGlite (one transaction at a time); they guard PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { privateDatabase } from './fixtures/webhook-harness.js';
import { openPostgres } from '../src/db/postgres.js';
import { storeWithApp } from './helpers/actors.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { multipartBody, pngBytes } from './helpers/catalog.js';
import { uuidv7 } from '../src/ids.js';
import { eventsOf } from './helpers/events.js';
import { UPLOAD_PURGE_JOB, UPLOAD_RELEASE_GRACE_MS } from '../src/catalog/uploads.jobs.js';

let h: Harness;
beforeAll(async () => {
  // A database of this file's own on PostgreSQL: the `upload-purge` job acts on every store's
  // releases, and run by another file on the shared database (a clock of its own, another uploads
  // dir) it would take this file's releases without deleting their files, or the other way round.
  const own = await privateDatabase();
  h = await createHarness({}, { limiter: unlimitedLimiter(), ...(own ? { db: await openPostgres(own.url, { max: 5 }), afterClose: own.drop } : {}) });
});
afterAll(() => h?.close());

/** The grace passes on the service clock (C12.1) and the upload-purge job runs (C12.2). */
const purgeUploads = async () => {
  await h.advance(UPLOAD_RELEASE_GRACE_MS / 1000);
  await h.deps.jobs.run(UPLOAD_PURGE_JOB);
};
const store = () => storeWithApp(h, { scopes: ['read_products', 'write_products'], tier: 'enterprise' });
const titles = async (productId: string) =>
  (await h.db.query<{ name: string; value: string }>('SELECT name, value FROM variants WHERE product_id = $1 ORDER BY position, num_id', [productId])).rows
    .map((v) => `${v.name}/${v.value}`);

async function shirt(token: string, variants: unknown[] = [{ name: 'Size', value: 'S', price: 10, stock: 5 }, { name: 'Size', value: 'M', price: 10, stock: 5 }]) {
  const res = await h.req('POST', '/products', { token, body: { title: 'Shirt', variants } });
  expect(res.statusCode, res.body).toBe(201);
  const p = res.json().data;
  const { rows } = await h.db.query<{ id: string; num_id: number }>('SELECT id, num_id FROM variants WHERE product_id = $1 ORDER BY position', [p.product_id]);
  return { id: p.product_id as string, variants: rows };
}

function patchForm(id: string, token: string, fields: Record<string, string>) {
  const { payload, contentType } = multipartBody(fields);
  return h.req('PATCH', `/variants/update-single-variant/${id}`, { token, payload: payload as any, headers: { 'content-type': contentType } });
}

describe('two variants of one product never share a name and value (C7.1 variants; C14.2; docs/decisions.md Catalog)', () => {
  it('merchant POST /products with a repeated variant (any case, any surrounding spaces, or two without options) is a 400 envelope naming the entry, and makes nothing', async () => {
    const s = await store();
    const cases: unknown[][] = [
      [{ name: 'Size', value: 'M', price: 10 }, { name: 'Size', value: 'M', price: 12 }],
      [{ name: 'Size', value: 'M', price: 10 }, { name: 'Size', value: 'L', price: 10 }, { name: ' size ', value: 'm ', price: 12 }],
      [{ price: 10 }, { price: 12 }],
    ];
    for (const variants of cases) {
      const res = await h.req('POST', '/products', { token: s.merchant.token, body: { title: 'Dup', variants } });
      expectEnvelopeError(res, 400, `variants[${variants.length - 1}]`);
      expect(res.json().message).toContain('already exists');
    }
    const { rows } = await h.db.query('SELECT 1 FROM products WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows).toHaveLength(0);
    // Distinct ones are fine, and one variant with no options is fine.
    expect((await h.req('POST', '/products', { token: s.merchant.token, body: { title: 'Ok', variants: [{ price: 1 }, { name: 'Size', value: 'M', price: 1 }] } })).statusCode).toBe(201);
  });

  it('merchant PUT /products/{id}: adding an existing pair, two new entries with one pair, or renaming onto a sibling is a 400 that writes nothing; a swap is fine', async () => {
    const s = await store();
    const p = await shirt(s.merchant.token);
    const put = (variants: unknown[]) => h.req('PUT', `/products/${p.id}`, { token: s.merchant.token, body: { title: 'Changed', variants } });
    const [small, medium] = p.variants;
    for (const variants of [
      [{ name: 'Size', value: 'S', price: 11 }],
      [{ name: 'Size', value: 'XL', price: 11 }, { name: 'size', value: 'xl', price: 11 }],
      [{ varientId: medium.id, value: 'S' }],
      [{ varientId: small.num_id, value: 'L' }, { name: 'Size', value: 'L', price: 11 }],
      [{ varientId: small.id, stock: 99 }, { varientId: medium.id, name: 'SIZE', value: 's' }],
    ]) {
      const res = await put(variants);
      expectEnvelopeError(res, 400, 'already exists');
    }
    expect(await titles(p.id)).toEqual(['Size/S', 'Size/M']);
    const after = (await h.req('GET', `/api/v1/products/${p.id}.json`, { token: s.accessToken })).json().product;
    expect(after.title).toBe('Shirt');
    expect(after.variants.map((v: { inventory_quantity: number }) => v.inventory_quantity)).toEqual([5, 5]);

    // Swapping two values in one request ends distinct: allowed. So is naming a variant's own pair.
    const swap = await put([{ varientId: small.id, value: 'M' }, { varientId: medium.id, value: 'S' }, { varientId: small.id, name: 'Size', value: 'M', price: 12 }]);
    expect(swap.statusCode, swap.body).toBe(200);
    expect(await titles(p.id)).toEqual(['Size/M', 'Size/S']);
  });

  it('PATCH /variants/update-single-variant/{id} onto a sibling\'s pair is a 400 envelope (JSON and multipart) and changes nothing; another product\'s pair is fine', async () => {
    const s = await store();
    const p = await shirt(s.merchant.token);
    const other = await shirt(s.merchant.token, [{ name: 'Size', value: 'XL', price: 10 }]);
    const [small, medium] = p.variants;
    const json = await h.req('PATCH', `/variants/update-single-variant/${medium.id}`, { token: s.merchant.token, body: { value: 'S', stock: 1 } });
    expectEnvelopeError(json, 400, "'Size / S' already exists");
    const form = await patchForm(String(medium.num_id), s.merchant.token, { name: 'size', value: ' S', price: '3' });
    expectEnvelopeError(form, 400, 'already exists');
    expect(await titles(p.id)).toEqual(['Size/S', 'Size/M']);
    const { rows } = await h.db.query<{ stock: number; price_minor: number }>('SELECT stock, price_minor FROM variants WHERE id = $1', [medium.id]);
    expect(rows[0]).toEqual({ stock: 5, price_minor: 1000 });
    // Its own pair again, or a pair used only by another product: fine.
    expect((await h.req('PATCH', `/variants/update-single-variant/${small.id}`, { token: s.merchant.token, body: { name: 'Size', value: 'S' } })).statusCode).toBe(200);
    expect((await h.req('PATCH', `/variants/update-single-variant/${medium.id}`, { token: s.merchant.token, body: { value: 'XL' } })).statusCode).toBe(200);
    expect(await titles(other.id)).toEqual(['Size/XL']);
  });

  it('variants that already share a pair (older data) can still be changed in other ways; only a change of the pair is checked', async () => {
    const s = await store();
    const p = await shirt(s.merchant.token, [{ name: 'Size', value: 'S', price: 10 }]);
    const now = new Date();
    await h.db.query(
      `INSERT INTO variants (id, product_id, store_id, name, value, price_minor, stock, stock_status, position, created_at, updated_at)
       VALUES ($1, $2, $3, 'Size', 'S', 1000, 1, 'IN_STOCK', 2, $4, $4)`,
      [uuidv7(), p.id, s.merchant.storeId, now],
    );
    const twin = (await h.db.query<{ id: string }>('SELECT id FROM variants WHERE product_id = $1 AND position = 2', [p.id])).rows[0].id;
    expect((await h.req('PATCH', `/variants/update-single-variant/${twin}`, { token: s.merchant.token, body: { stock: 4, value: 'S' } })).statusCode).toBe(200);
    expect((await h.req('PUT', `/products/${p.id}`, { token: s.merchant.token, body: { variants: [{ varientId: twin, price: 9 }] } })).statusCode).toBe(200);
    // Moving it to a pair of its own resolves the clash.
    expect((await h.req('PATCH', `/variants/update-single-variant/${twin}`, { token: s.merchant.token, body: { value: 'M' } })).statusCode).toBe(200);
  });

  it('concurrent writes aiming at one pair: exactly one succeeds (the product lock serialises the check)', async () => {
    const s = await store();
    const p = await shirt(s.merchant.token, [{ name: 'Size', value: 'A', price: 1 }, { name: 'Size', value: 'B', price: 1 }, { name: 'Size', value: 'C', price: 1 }]);
    const [a, b, c] = p.variants;
    const res = await Promise.all([
      h.req('PATCH', `/variants/update-single-variant/${a.id}`, { token: s.merchant.token, body: { value: 'Z' } }),
      h.req('PATCH', `/variants/update-single-variant/${b.id}`, { token: s.merchant.token, body: { value: 'Z' } }),
      h.req('PUT', `/products/${p.id}`, { token: s.merchant.token, body: { variants: [{ varientId: c.id, value: 'Z' }] } }),
      h.req('PUT', `/products/${p.id}`, { token: s.merchant.token, body: { variants: [{ name: 'Size', value: 'Z', price: 1 }] } }),
    ]);
    expect(res.map((r) => r.statusCode).sort()).toEqual([200, 400, 400, 400]);
    expect((await titles(p.id)).filter((t) => t === 'Size/Z')).toHaveLength(1);
  });
});

describe('a write naming a product that a concurrent delete removes is the 400 of an unknown product, never a 500 (C6.2, C14.5)', () => {
  const channelApp = { scopes: ['read_products', 'write_products'], extensions: { salesChannel: true }, tier: 'enterprise' };

  it('POST /api/v1/product_listings.json beside DELETE /api/v1/products/{id}.json: 201 or 400 errors body, and no listing of a deleted product', async () => {
    const s = await storeWithApp(h, channelApp);
    for (let i = 0; i < 25; i++) {
      const made = await h.req('POST', '/api/v1/products.json', { token: s.accessToken, body: { title: `Gone ${i}` } });
      const id = made.json().product.product_id;
      const [listing, deleted] = await Promise.all([
        h.req('POST', '/api/v1/product_listings.json', { token: s.accessToken, body: { product_id: id } }),
        h.req('DELETE', `/api/v1/products/${id}.json`, { token: s.accessToken }),
      ]);
      expect(deleted.statusCode, deleted.body).toBe(200);
      expect([201, 400], listing.body).toContain(listing.statusCode);
      if (listing.statusCode === 400) expect(listing.json()).toEqual({ errors: { product_id: ['not found'] } });
    }
    const { rows } = await h.db.query('SELECT 1 FROM product_listings l WHERE NOT EXISTS (SELECT 1 FROM products p WHERE p.id = l.product_id)');
    expect(rows).toHaveLength(0);
  });

  it('POST /collections/{id}/products beside DELETE /products/{id}: 200 or 400 envelope, never a 500', async () => {
    const s = await store();
    const collection = (await h.req('POST', '/collections', { token: s.merchant.token, body: { title: 'Race' } })).json().data;
    for (let i = 0; i < 25; i++) {
      const made = await h.req('POST', '/products', { token: s.merchant.token, body: { title: `Gone ${i}` } });
      const id = made.json().data.product_id;
      const [added, deleted] = await Promise.all([
        h.req('POST', `/collections/${collection.id}/products`, { token: s.merchant.token, body: { productIds: [id] } }),
        h.req('DELETE', `/products/${id}`, { token: s.merchant.token }),
      ]);
      expect(deleted.statusCode, deleted.body).toBe(200);
      if (added.statusCode !== 200) expectEnvelopeError(added, 400, 'is not a product of this store');
    }
  });
});

describe('a variant named by its UUID in upper case is that variant (C14.2: varientId is the UUID)', () => {
  it('merchant PUT /products/{id} with an upper-case varientId changes it (JSON and its pair check alike)', async () => {
    const s = await store();
    const p = await shirt(s.merchant.token);
    const [small] = p.variants;
    const res = await h.req('PUT', `/products/${p.id}`, { token: s.merchant.token, body: { variants: [{ varientId: small.id.toUpperCase(), stock: 3, value: 'XS' }] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await titles(p.id)).toEqual(['Size/XS', 'Size/M']);
    const dup = await h.req('PUT', `/products/${p.id}`, { token: s.merchant.token, body: { variants: [{ varientId: small.id.toUpperCase(), value: 'M' }] } });
    expectEnvelopeError(dup, 400, 'already exists');
    // A varientId that is no id at all is refused; it is not read as "no id" (which adds a variant).
    for (const varientId of [0, -5]) {
      const bad = await h.req('PUT', `/products/${p.id}`, { token: s.merchant.token, body: { variants: [{ varientId, name: 'Size', value: 'XXL', price: 1 }] } });
      expectEnvelopeError(bad, 400, 'variants[0].varientId');
    }
    expect(await titles(p.id)).toEqual(['Size/XS', 'Size/M']);
  });
});

describe('menus made at once each go after the others (docs/decisions.md Content: a new menu goes after the store\'s existing menus)', () => {
  it('concurrent POST /menus: orders 0..n-1, no two menus at one position', async () => {
    const s = await store();
    const res = await Promise.all(Array.from({ length: 6 }, (_, i) => h.req('POST', '/menus', { token: s.merchant.token, body: { name: `Menu ${i}`, child: [{ name: 'Home', url: '/' }] } })));
    for (const r of res) expect(r.statusCode, r.body).toBe(201);
    const { rows } = await h.db.query<{ sort_order: number }>('SELECT sort_order FROM menus WHERE store_id = $1 AND parent_id IS NULL ORDER BY sort_order', [s.merchant.storeId]);
    expect(rows.map((r) => r.sort_order)).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe('products added to one collection at once each go after the others (docs/decisions.md Catalog: Collections; C14.5)', () => {
  it('concurrent POST /collections/{id}/products: positions 1..n, none shared', async () => {
    const s = await store();
    const collection = (await h.req('POST', '/collections', { token: s.merchant.token, body: { title: 'Busy' } })).json().data;
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await h.req('POST', '/products', { token: s.merchant.token, body: { title: `P${i}` } })).json().data.product_id);
    const res = await Promise.all(ids.map((id) => h.req('POST', `/collections/${collection.id}/products`, { token: s.merchant.token, body: { productIds: [id] } })));
    for (const r of res) expect(r.statusCode, r.body).toBe(200);
    const { rows } = await h.db.query<{ position: number }>('SELECT position FROM collection_products WHERE collection_id = $1 ORDER BY position', [collection.id]);
    expect(rows.map((r) => r.position)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe("a variant image is deleted only when it is the variant's own store's upload (C7.3; tenant isolation)", () => {
  it("another store's uploaded image, set by URL and then cleared or replaced, stays on disk and served", async () => {
    const owner = await store();
    const other = await store();
    const mine = await shirt(owner.merchant.token, [{ name: 'Size', value: 'S', price: 1 }]);
    const theirs = await shirt(other.merchant.token, [{ name: 'Size', value: 'S', price: 1 }]);
    const { payload, contentType } = multipartBody({}, [{ name: 'mainImage', filename: 'a.png', contentType: 'image/png', data: pngBytes() }]);
    const up = await h.req('PATCH', `/variants/update-single-variant/${mine.variants[0].id}`, { token: owner.merchant.token, payload: payload as any, headers: { 'content-type': contentType } });
    expect(up.statusCode, up.body).toBe(200);
    const url = up.json().data.mainImageUrl as string;
    const path = url.slice('http://svc.test'.length);
    expect((await h.req('GET', path)).statusCode).toBe(200);

    // The other store points its variant at that URL, then clears it, and again replaces it.
    for (const next of ['', 'https://example.com/x.png']) {
      const set = await h.req('PATCH', `/variants/update-single-variant/${theirs.variants[0].id}`, { token: other.merchant.token, body: { mainImageUrl: url } });
      expect(set.statusCode, set.body).toBe(200);
      const cleared = await h.req('PATCH', `/variants/update-single-variant/${theirs.variants[0].id}`, { token: other.merchant.token, body: { mainImageUrl: next } });
      expect(cleared.statusCode, cleared.body).toBe(200);
      await purgeUploads();
      expect((await h.req('GET', path)).statusCode).toBe(200);
    }
    // The owner clearing its own upload still deletes it (the upload-purge job, after the grace).
    const own = await h.req('PATCH', `/variants/update-single-variant/${mine.variants[0].id}`, { token: owner.merchant.token, body: { mainImageUrl: null } });
    expect(own.statusCode, own.body).toBe(200);
    await purgeUploads();
    expect((await h.req('GET', path)).statusCode).toBe(404);
  });
});

describe('inventory_levels/update tells the stock level the request left (docs/decisions.md Catalog: Events; C8.1)', () => {
  it('merchant PUT naming one variant twice: one event with the final level, none when it ends where it began', async () => {
    const s = await store();
    const p = await shirt(s.merchant.token);
    const [small] = p.variants;
    const put = (variants: unknown[]) => eventsOf(h, s.merchant.storeId, async () => {
      const res = await h.req('PUT', `/products/${p.id}`, { token: s.merchant.token, body: { variants } });
      expect(res.statusCode, res.body).toBe(200);
    });
    const there = await put([{ varientId: small.id, stock: 3 }, { varientId: small.num_id, stock: 5 }]);
    expect(there.filter((e) => e.topic === 'inventory_levels/update')).toEqual([]);
    const moved = await put([{ varientId: small.id, stock: 3 }, { varientId: small.id, stock: 7 }]);
    expect(moved.filter((e) => e.topic === 'inventory_levels/update').map((e) => [e.payload.variant_id, e.payload.available])).toEqual([[small.num_id, 7]]);
    const { rows } = await h.db.query<{ stock: number }>('SELECT stock FROM variants WHERE id = $1', [small.id]);
    expect(rows[0].stock).toBe(7);
  });
});
