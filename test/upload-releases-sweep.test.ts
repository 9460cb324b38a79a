// Every change that drops a text of the store releases the uploads that text named (docs/decisions.md
// Catalog, "A change that drops a text releases the uploads it named"): a product's description
// replaced or deleted with the product, a metafield's value replaced (bulk, both APIs) or deleted
// with its owner. For each writer, an upload whose only use is that text goes once the upload-purge
// job has run after the grace; one still used elsewhere in the store stays.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { privateDatabase } from './fixtures/webhook-harness.js';
import { openPostgres } from '../src/db/postgres.js';
import { operatorToken, storeWithApp, unique } from './helpers/actors.js';
import { multipartBody, pngBytes } from './helpers/catalog.js';
import { UPLOAD_PURGE_JOB, UPLOAD_RELEASE_GRACE_MS } from '../src/catalog/uploads.jobs.js';

let h: Harness;
let operator: string;
beforeAll(async () => {
  // A database of this file's own on PostgreSQL, as test/upload-references.test.ts: the job acts on
  // every store's releases, and another file's run would take this file's.
  const own = await privateDatabase();
  h = await createHarness({}, { limiter: unlimitedLimiter(), ...(own ? { db: await openPostgres(own.url, { max: 5 }), afterClose: own.drop } : {}) });
  operator = await operatorToken(h);
});
afterAll(() => h?.close());

const BASE = 'http://svc.test';
type Store = Awaited<ReturnType<typeof store>>;
const store = () => storeWithApp(h, {
  scopes: ['read_products', 'write_products', 'read_metafields', 'write_metafields', 'read_customers', 'write_customers'],
  tier: 'enterprise',
});

async function ok(res: { statusCode: number; body: string; json: () => any }, status = 200) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

async function product(s: Store, body: Record<string, unknown> = {}) {
  const p = (await ok(await h.req('POST', '/products', { token: s.merchant.token, body: { title: 'Shirt', variants: [{ name: 'Size', value: 'S', price: 10 }], ...body } }), 201)).data;
  const { rows } = await h.db.query<{ id: string }>('SELECT id FROM variants WHERE product_id = $1 ORDER BY position', [p.product_id]);
  return { id: p.product_id as string, variantId: rows[0].id };
}

/**
 * An upload of the store, on a variant of a product of its own (the service's one upload endpoint).
 * Once the field under test holds the URL, `letVariantGo` leaves that field its only use.
 */
async function upload(s: Store): Promise<string> {
  const { variantId } = await product(s);
  const { payload, contentType } = multipartBody({}, [{ name: 'mainImage', filename: 'a.png', contentType: 'image/png', data: pngBytes() }]);
  const res = await h.req('PATCH', `/variants/update-single-variant/${variantId}`, { token: s.merchant.token, payload: payload as any, headers: { 'content-type': contentType } });
  return (await ok(res)).data.mainImageUrl;
}
const letVariantGo = async (s: Store, url: string) => {
  const { rows } = await h.db.query<{ id: string }>('SELECT id FROM variants WHERE main_image_url = $1', [url]);
  await ok(await h.req('PATCH', `/variants/update-single-variant/${rows[0].id}`, { token: s.merchant.token, body: { mainImageUrl: null } }));
};

const served = async (url: string) => (await h.req('GET', url.slice(BASE.length))).statusCode;
/** The grace passes on the service clock (C12.1) and the job runs through C12.2. */
const purge = async () => {
  await h.advance(UPLOAD_RELEASE_GRACE_MS / 1000);
  await ok(await h.req('POST', `/apps/admin/jobs/${UPLOAD_PURGE_JOB}/run`, { token: operator }));
};

/** The name's characters, each percent-encoded: the reference rule reads it as the name. */
const percentEncoded = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
const htmlEscapedDot = (url: string) => url.replace(/\.png$/, '&#46;png');

const metafields = (s: Store, items: Record<string, unknown>[], by: 'merchant' | 'app') =>
  by === 'merchant'
    ? h.req('POST', '/metafields/bulk', { token: s.merchant.token, body: { metafields: items } })
    : h.req('POST', '/api/v1/metafields/bulk.json', { token: s.accessToken, body: { metafields: items } });
const metafield = (ownerType: string, ownerId: string, value: unknown, type = 'url') => ({ ownerType, ownerId, namespace: 'custom', key: 'image', type, value });

interface Writer {
  /** The field and the write that drops it. */
  name: string;
  /** Puts the URL in the field (and only there); what `drop` needs. */
  hold: (s: Store, url: string) => Promise<string>;
  drop: (s: Store, ref: string) => Promise<unknown>;
}

const writers: Writer[] = [
  {
    name: 'product body_html, replaced by merchant PUT /products/{id}',
    hold: async (s, url) => (await product(s, { body_html: `<p><img src="${url}"></p>` })).id,
    drop: async (s, id) => ok(await h.req('PUT', `/products/${id}`, { token: s.merchant.token, body: { body_html: '<p>None</p>' } })),
  },
  {
    name: 'product body_html (HTML character references), replaced by App API PUT /products/{id}.json',
    hold: async (s, url) => (await product(s, { body_html: `<img src="${htmlEscapedDot(url)}">` })).id,
    drop: async (s, id) => ok(await h.req('PUT', `/api/v1/products/${id}.json`, { token: s.accessToken, body: { product: { body_html: '' } } })),
  },
  {
    name: 'product body_html, deleted by merchant DELETE /products/{id}',
    hold: async (s, url) => (await product(s, { body_html: `<img src="${url}?v=2">` })).id,
    drop: async (s, id) => ok(await h.req('DELETE', `/products/${id}`, { token: s.merchant.token })),
  },
  {
    name: 'product body_html, deleted by App API DELETE /products/{id}.json',
    hold: async (s, url) => (await product(s, { body_html: `<img src="${url}">` })).id,
    drop: async (s, id) => ok(await h.req('DELETE', `/api/v1/products/${id}.json`, { token: s.accessToken })),
  },
  {
    name: 'product metafield value, replaced by merchant POST /metafields/bulk',
    hold: async (s, url) => {
      const { id } = await product(s);
      await ok(await metafields(s, [metafield('product', id, url)], 'merchant'));
      return id;
    },
    drop: async (s, id) => ok(await metafields(s, [metafield('product', id, 'https://example.com/other.png')], 'merchant')),
  },
  {
    name: 'variant metafield json value (name percent-encoded), replaced by App API POST /metafields/bulk.json',
    hold: async (s, url) => {
      const { variantId } = await product(s);
      const encoded = url.replace(/[^/]+$/, (name) => percentEncoded(name));
      await ok(await metafields(s, [metafield('variant', variantId, { image: encoded }, 'json')], 'app'));
      return variantId;
    },
    drop: async (s, id) => ok(await metafields(s, [metafield('variant', id, { image: null }, 'json')], 'app')),
  },
  {
    name: 'shop metafield value, replaced by App API bulk among items that name no upload',
    hold: async (s, url) => {
      const shop = s.merchant.storeId;
      await ok(await metafields(s, [metafield('shop', shop, url), { ...metafield('shop', shop, 'a'), key: 'plain', type: 'single_line_text_field' }], 'app'));
      return shop;
    },
    drop: async (s, shop) => {
      const body = await ok(await metafields(s, [
        { ...metafield('shop', shop, 'b'), key: 'plain', type: 'single_line_text_field' },
        { ...metafield('shop', shop, 'new'), key: `k${unique()}`, type: 'single_line_text_field' },
        metafield('shop', shop, 'https://example.com/other.png'),
      ], 'app'));
      // One write for all, in the order sent, whichever of them waited for the release.
      expect(body.data.metafields.map((m: { raw_value: string }) => m.raw_value)).toEqual(['b', 'new', 'https://example.com/other.png']);
      expect([body.data.created, body.data.updated]).toEqual([1, 2]);
    },
  },
  {
    name: 'product metafield value, deleted with its product by merchant DELETE /products/{id}',
    hold: async (s, url) => {
      const { id } = await product(s);
      await ok(await metafields(s, [metafield('product', id, url)], 'app'));
      return id;
    },
    drop: async (s, id) => ok(await h.req('DELETE', `/products/${id}`, { token: s.merchant.token })),
  },
  {
    name: 'variant metafield value, deleted with its product by App API DELETE /products/{id}.json',
    hold: async (s, url) => {
      const { id, variantId } = await product(s);
      await ok(await metafields(s, [metafield('variant', variantId, url)], 'app'));
      return id;
    },
    drop: async (s, id) => ok(await h.req('DELETE', `/api/v1/products/${id}.json`, { token: s.accessToken })),
  },
  {
    name: 'customer metafield value, deleted with the customer by App API DELETE /customers/{id}.json',
    hold: async (s, url) => {
      const c = (await ok(await h.req('POST', '/api/v1/customers.json', { token: s.accessToken, body: { customer: { email: `c-${unique()}@example.com` } } }), 201)).customer;
      await ok(await metafields(s, [metafield('customer', c.id, url)], 'app'));
      return c.id;
    },
    drop: async (s, id) => ok(await h.req('DELETE', `/api/v1/customers/${id}.json`, { token: s.accessToken })),
  },
];

describe('a change that drops a text releases the uploads it named', () => {
  it.each(writers)('$name: the upload used only there goes', async ({ hold, drop }) => {
    const s = await store();
    const url = await upload(s);
    const ref = await hold(s, url);
    await letVariantGo(s, url);
    await purge();
    expect(await served(url)).toBe(200); // the field keeps it
    await drop(s, ref);
    await purge();
    expect(await served(url)).toBe(404);
  });

  it.each(writers)('$name: the upload still used elsewhere stays', async ({ hold, drop }) => {
    const s = await store();
    const url = await upload(s);
    const ref = await hold(s, url);
    await ok(await h.req('POST', '/collections', { token: s.merchant.token, body: { title: 'C', image: url } }), 201);
    await letVariantGo(s, url);
    await drop(s, ref);
    await purge();
    expect(await served(url)).toBe(200);
  });
});

describe('a write of a text that drops no upload releases nothing', () => {
  it('a description or metafield value naming no upload, or still naming it, records no release', async () => {
    const s = await store();
    const url = await upload(s);
    const p = await product(s, { body_html: '<p>plain &amp; simple</p>' });
    const storeId = s.merchant.storeId;
    const releases = async () => (await h.db.query('SELECT name FROM upload_releases WHERE store_id = $1', [storeId])).rows.length;
    await letVariantGo(s, url);
    await purge();
    expect(await served(url)).toBe(404); // nothing held it
    const fresh = await upload(s);
    await letVariantGo(s, fresh);
    await ok(await h.req('PUT', `/products/${p.id}`, { token: s.merchant.token, body: { body_html: `<img src="${fresh}">` } }));
    await purge();
    expect(await releases()).toBe(0);
    await ok(await h.req('PUT', `/products/${p.id}`, { token: s.merchant.token, body: { body_html: `<p>Still</p><img src="${fresh}?v=3">` } }));
    await ok(await metafields(s, [metafield('product', p.id, 'https://example.com/a.png')], 'merchant'));
    await ok(await metafields(s, [metafield('product', p.id, 'https://example.com/b.png')], 'merchant'));
    expect(await releases()).toBe(0);
    expect(await served(fresh)).toBe(200);
  });
});

// Real parallel transactions: PGlite runs one at a time, which proves nothing about locking.
describe.skipIf(!inject('testDatabaseUrl'))('on PostgreSQL: a value committed while the bulk write waited', () => {
  it('is the value the write reads and releases, not the one it first saw', async () => {
    const s = await store();
    const url = await upload(s);
    // Nothing names the upload now and nothing released it: only the value below will.
    await h.db.query('UPDATE variants SET main_image_url = NULL WHERE main_image_url = $1', [url]);
    const { id } = await product(s);
    await ok(await metafields(s, [metafield('product', id, 'https://example.com/a.png')], 'app'));
    let commit!: () => void;
    const gate = new Promise<void>((resolve) => { commit = resolve; });
    let written!: () => void;
    const isWritten = new Promise<void>((resolve) => { written = resolve; });
    // Another writer puts the URL in the value and holds its transaction open.
    const other = h.db.transaction(async (tx) => {
      await tx.query("UPDATE metafields SET value = $1 WHERE store_id = $2 AND owner_type = 'product' AND owner_id = $3", [url, s.merchant.storeId, id]);
      written();
      await gate;
    });
    await isWritten;
    const replacing = metafields(s, [metafield('product', id, 'https://example.com/b.png')], 'app');
    // The bulk write has read what it reads and waits for the row.
    for (let i = 0; ; i++) {
      // A wait in this file's own database (pg_locks is the whole server's: other files run beside it).
      const { rows } = await h.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE NOT l.granted AND l.locktype = 'transactionid' AND a.datname = current_database()`,
      );
      if (rows[0].n > 0) break;
      if (i > 800) throw new Error('the bulk write never waited for the row');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    commit();
    await other;
    await ok(await replacing);
    await purge();
    expect(await served(url)).toBe(404);
  });
});
