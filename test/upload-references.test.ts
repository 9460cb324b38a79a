// A store's uploaded images live while the store uses them (docs/decisions.md Catalog, "An upload
// lives while its store uses it"; C7.3): deleting a product deletes the uploads only it referenced,
// and an image dropped from one place (a variant, a product's images) is deleted only when nothing
// else of the store references it: another product, another variant, a description, in whatever form
// the URL is written there. The file goes by the upload-purge job once the grace has passed, so a
// copy of the URL committed just after its last reference was dropped still keeps it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { privateDatabase } from './fixtures/webhook-harness.js';
import { openPostgres } from '../src/db/postgres.js';
import { operatorToken, storeWithApp } from './helpers/actors.js';
import { multipartBody, pngBytes } from './helpers/catalog.js';
import { UPLOAD_PURGE_JOB, UPLOAD_RELEASE_GRACE_MS } from '../src/catalog/uploads.jobs.js';
import { releaseUploads } from '../src/catalog/upload-references.js';

let h: Harness;
beforeAll(async () => {
  // A database of this file's own on PostgreSQL: the `upload-purge` job acts on every store's
  // releases, and run by another file on the shared database (a clock of its own, another uploads
  // dir) it would take this file's releases without deleting their files, or the other way round.
  const own = await privateDatabase();
  h = await createHarness({}, { limiter: unlimitedLimiter(), ...(own ? { db: await openPostgres(own.url, { max: 5 }), afterClose: own.drop } : {}) });
});
afterAll(() => h?.close());

const BASE = 'http://svc.test';
const store = () => storeWithApp(h, { scopes: ['read_products', 'write_products'], tier: 'enterprise' });

async function product(token: string, body: Record<string, unknown> = {}) {
  const res = await h.req('POST', '/products', { token, body: { title: 'Shirt', variants: [{ name: 'Size', value: 'S', price: 10 }], ...body } });
  expect(res.statusCode, res.body).toBe(201);
  const p = res.json().data;
  const { rows } = await h.db.query<{ id: string }>('SELECT id FROM variants WHERE product_id = $1 ORDER BY position', [p.product_id]);
  return { id: p.product_id as string, variantId: rows[0]?.id };
}

/** Uploads an image onto the variant (the service's one upload endpoint); its URL. */
async function upload(token: string, variantId: string): Promise<string> {
  const { payload, contentType } = multipartBody({}, [{ name: 'mainImage', filename: 'a.png', contentType: 'image/png', data: pngBytes() }]);
  const res = await h.req('PATCH', `/variants/update-single-variant/${variantId}`, { token, payload: payload as any, headers: { 'content-type': contentType } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.mainImageUrl;
}

const served = async (url: string) => (await h.req('GET', url.slice(BASE.length))).statusCode;
/**
 * A dropped upload is deleted by the upload-purge job once the grace has passed on the service clock
 * (C12.1): the grace passes, the job runs (C12.2). Every check of a file after a drop comes after
 * this, so "kept" means kept by the reference rule, not by the wait.
 */
const purge = async () => {
  await h.advance(UPLOAD_RELEASE_GRACE_MS / 1000);
  await h.deps.jobs.run(UPLOAD_PURGE_JOB);
};
const setVariantImage = async (token: string, variantId: string, mainImageUrl: string | null) => {
  const res = await h.req('PATCH', `/variants/update-single-variant/${variantId}`, { token, body: { mainImageUrl } });
  expect(res.statusCode, res.body).toBe(200);
};
const putProduct = async (token: string, id: string, body: Record<string, unknown>) => {
  const res = await h.req('PUT', `/products/${id}`, { token, body });
  expect(res.statusCode, res.body).toBe(200);
};
const deleteProduct = async (token: string, id: string) => expect((await h.req('DELETE', `/products/${id}`, { token })).statusCode).toBe(200);

describe('deleting a product deletes the uploads only it referenced', () => {
  it('merchant DELETE /products/{id}: its variant\'s upload is deleted; App API DELETE likewise', async () => {
    const s = await store();
    const a = await product(s.merchant.token);
    const url = await upload(s.merchant.token, a.variantId);
    expect(await served(url)).toBe(200);
    await deleteProduct(s.merchant.token, a.id);
    await purge();
    expect(await served(url)).toBe(404);

    const b = await product(s.merchant.token);
    const other = await upload(s.merchant.token, b.variantId);
    const res = await h.req('DELETE', `/api/v1/products/${b.id}.json`, { token: s.accessToken });
    expect(res.statusCode, res.body).toBe(200);
    await purge();
    expect(await served(other)).toBe(404);
  });

  it('an upload another product of the store also uses survives, until that product goes too', async () => {
    const s = await store();
    const a = await product(s.merchant.token);
    const url = await upload(s.merchant.token, a.variantId);
    const byImages = await product(s.merchant.token, { images: [url] });
    await deleteProduct(s.merchant.token, a.id);
    await purge();
    expect(await served(url)).toBe(200);
    await deleteProduct(s.merchant.token, byImages.id);
    await purge();
    expect(await served(url)).toBe(404);
  });

  it('an upload another variant, a description, a collection or a page of the store uses survives', async () => {
    const s = await store();
    const t = s.merchant.token;
    const holders: Array<[string, (url: string) => Promise<unknown>]> = [
      ['another variant', async (url) => setVariantImage(t, (await product(t)).variantId, url)],
      ['a product description', (url) => product(t, { body_html: `<p><img src="${url}"></p>` })],
      ['a collection image', async (url) => expect((await h.req('POST', '/collections', { token: t, body: { title: 'C', image: url } })).statusCode).toBe(201)],
      ['a page\'s social image', async (url) => expect((await h.req('POST', '/pages', { token: t, body: { title: 'P', seoImage: url } })).statusCode).toBe(201)],
    ];
    for (const [holder, hold] of holders) {
      const a = await product(t);
      const url = await upload(t, a.variantId);
      await hold(url);
      await deleteProduct(t, a.id);
      await purge();
      expect(await served(url), holder).toBe(200);
    }
  });

  it("another store's upload named by URL in the deleted product's images stays", async () => {
    const owner = await store();
    const other = await store();
    const mine = await product(owner.merchant.token);
    const url = await upload(owner.merchant.token, mine.variantId);
    await setVariantImage(owner.merchant.token, mine.variantId, null);
    // Cleared by the owner: nothing of the owner's store uses it any more, so it goes.
    await purge();
    expect(await served(url)).toBe(404);
    const again = await upload(owner.merchant.token, mine.variantId);
    const theirs = await product(other.merchant.token, { images: [again] });
    await deleteProduct(other.merchant.token, theirs.id);
    await purge();
    expect(await served(again)).toBe(200);
  });

  it('two products sharing an upload, deleted at once: the file goes with the last of them', async () => {
    const s = await store();
    for (let round = 0; round < 5; round++) {
      const a = await product(s.merchant.token);
      const url = await upload(s.merchant.token, a.variantId);
      const b = await product(s.merchant.token, { images: [url] });
      const res = await Promise.all([a, b].map((p) => h.req('DELETE', `/products/${p.id}`, { token: s.merchant.token })));
      for (const r of res) expect(r.statusCode, r.body).toBe(200);
      await purge();
      expect(await served(url), `round ${round}`).toBe(404);
    }
  });
});

describe('a variant image copied to a product image (or the reverse) within a store: one reference rule', () => {
  it('the variant replacing or clearing its upload keeps the file while the product\'s images still show it', async () => {
    const s = await store();
    const t = s.merchant.token;
    const p = await product(t);
    const url = await upload(t, p.variantId);
    await putProduct(t, p.id, { images: [url] });
    // Replaced by a new upload: the product's image still uses the old one.
    const next = await upload(t, p.variantId);
    await purge();
    expect(await served(url)).toBe(200);
    // Cleared: likewise.
    await putProduct(t, p.id, { images: [url, next] });
    await setVariantImage(t, p.variantId, null);
    await purge();
    expect(await served(url)).toBe(200);
    expect(await served(next)).toBe(200);
    // The product's images dropping them is the last reference of each: both go.
    await putProduct(t, p.id, { images: [] });
    await purge();
    expect(await served(url)).toBe(404);
    expect(await served(next)).toBe(404);
  });

  it('a product image copied from the variant, dropped from the images, keeps the file the variant uses', async () => {
    const s = await store();
    const t = s.merchant.token;
    const p = await product(t);
    const url = await upload(t, p.variantId);
    await putProduct(t, p.id, { images: [url] });
    await putProduct(t, p.id, { images: ['https://example.com/other.png'] });
    await purge();
    expect(await served(url)).toBe(200);
    // A merchant PUT changing the variant's image through `variants` drops the last reference.
    await putProduct(t, p.id, { variants: [{ varientId: p.variantId, mainImageUrl: null }] });
    await purge();
    expect(await served(url)).toBe(404);
  });

  // Review: the menu side of the rule (docs/decisions.md Content, merchant DELETE /menus/{id}).
  it("a menu item's link keeps the upload; deleting the menu (the last use) deletes it", async () => {
    const s = await store();
    const t = s.merchant.token;
    const p = await product(t);
    const url = await upload(t, p.variantId);
    const made = await h.req('POST', '/menus', { token: t, body: { name: 'Main', child: [{ name: 'Look', child: [{ name: 'Book', url }] }] } });
    expect(made.statusCode, made.body).toBe(201);
    await setVariantImage(t, p.variantId, null);
    await purge();
    expect(await served(url)).toBe(200);
    const res = await h.req('DELETE', `/menus/${made.json().data.menuId}`, { token: t });
    expect(res.statusCode, res.body).toBe(200);
    await purge();
    expect(await served(url)).toBe(404);
  });

  it('a variant image copied onto a second variant survives the first one replacing it', async () => {
    const s = await store();
    const t = s.merchant.token;
    const first = await product(t);
    const second = await product(t);
    const url = await upload(t, first.variantId);
    await setVariantImage(t, second.variantId, url);
    await upload(t, first.variantId);
    await purge();
    expect(await served(url)).toBe(200);
    await setVariantImage(t, second.variantId, 'https://example.com/x.png');
    await purge();
    expect(await served(url)).toBe(404);
  });
});

/** The name's characters, each percent-encoded (`%30%31...`): the route decodes them back. */
const percentEncoded = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');

describe('a reference is anything in the store that names the same file, however the URL is written', () => {
  // Each form names the upload's file: the route serves it (where it is a path on this service) or
  // a browser reading the field would reach it. Each must keep the file once the variant lets go.
  type Form = { form: string; make: (url: string) => string; served?: boolean; url?: boolean };
  const forms: Form[] = [
    { form: 'a query string', make: (u) => `${u}?v=2`, served: true, url: true },
    { form: 'a fragment', make: (u) => `${u}#x`, served: true, url: true },
    { form: 'a query and a fragment', make: (u) => `${u}?w=300&h=200#top`, served: true, url: true },
    { form: 'the host and scheme in upper case', make: (u) => u.replace('http://svc.test', 'HTTP://SVC.TEST'), url: true },
    { form: 'the default port written out', make: (u) => u.replace('svc.test', 'svc.test:80'), url: true },
    { form: 'https', make: (u) => u.replace('http:', 'https:'), url: true },
    { form: 'another host reaching the service', make: (u) => u.replace('svc.test', '127.0.0.1:3000'), url: true },
    { form: 'the file name percent-encoded', make: (u) => u.replace(/[^/]+$/, (name) => percentEncoded(name)), served: true, url: true },
    { form: 'the dot percent-encoded', make: (u) => u.replace(/\.png$/, '%2Epng'), served: true, url: true },
    { form: 'the slashes percent-encoded', make: (u) => u.replace(/\/(?=[^/]+\/[^/]+$)|\/(?=[^/]+$)/g, '%2F'), served: true, url: true },
    { form: 'the name in upper case', make: (u) => u.replace(/[^/]+$/, (name) => name.toUpperCase()), url: true },
    { form: 'a dot-segment a browser resolves', make: (u) => u.replace('/variants/', '/variants/x/../'), url: true },
    { form: 'a path without host', make: (u) => u.slice(BASE.length), served: true },
    { form: 'a scheme-relative URL', make: (u) => u.slice('http:'.length) },
    { form: 'HTML character references', make: (u) => u.replace(/\.png$/, '&#46;png').replace(/\/([0-9a-f])([^/]*)$/, (_m, c, rest) => `/&#x${c.charCodeAt(0).toString(16)};${rest}`) },
    { form: 'a percent sign written as a reference', make: (u) => u.replace(/\.png$/, '&percnt;2Epng') },
  ];

  it('the route serves the same file under each form that is a path on the service', async () => {
    const s = await store();
    const url = await upload(s.merchant.token, (await product(s.merchant.token)).variantId);
    for (const { form, make } of forms.filter((f) => f.served)) {
      const res = await h.req('GET', make(url).slice(make(url).indexOf('/uploads/')));
      expect(res.statusCode, form).toBe(200);
    }
  });

  it('each form, in a product\'s images, another variant or a description, keeps the upload the variant let go', async () => {
    const s = await store();
    const t = s.merchant.token;
    const holders: Array<[string, (ref: string) => Promise<unknown>, (f: Form) => boolean]> = [
      ['a product image', (ref) => product(t, { images: [ref] }), (f) => Boolean(f.url)],
      ['another variant', async (ref) => setVariantImage(t, (await product(t)).variantId, ref), (f) => Boolean(f.url)],
      ['a description', (ref) => product(t, { body_html: `<p><img src="${ref}" alt=""></p>` }), () => true],
    ];
    for (const [holder, hold, takes] of holders) {
      for (const f of forms.filter(takes)) {
        const a = await product(t);
        const url = await upload(t, a.variantId);
        await hold(f.make(url));
        await setVariantImage(t, a.variantId, null);
        await purge();
        expect(await served(url), `${f.form} in ${holder}`).toBe(200);
      }
    }
  });

  it('a URL of another file is no reference: the dropped upload goes', async () => {
    const s = await store();
    const t = s.merchant.token;
    const a = await product(t);
    const url = await upload(t, a.variantId);
    // The same URL but for the name's first character.
    const other = url.replace(/\/([0-9a-f])([^/]*)$/, (_m, c, rest) => `/${c === '0' ? '1' : '0'}${rest}`);
    expect(other).not.toBe(url);
    await product(t, { images: [`${other}?v=2`], body_html: `<img src="${other}">` });
    await setVariantImage(t, a.variantId, null);
    await purge();
    expect(await served(url)).toBe(404);
  });

  it('a reference dropped in another form than the upload\'s own URL lets the file go too', async () => {
    const s = await store();
    const t = s.merchant.token;
    const a = await product(t);
    const url = await upload(t, a.variantId);
    await setVariantImage(t, a.variantId, `${url.replace('http://svc.test', 'HTTPS://SVC.TEST')}?v=2`);
    await purge();
    expect(await served(url)).toBe(200); // the variant still shows it, in the other form
    await setVariantImage(t, a.variantId, null);
    await purge();
    expect(await served(url)).toBe(404);
  });
});

describe('a dropped upload is deleted by the upload-purge job after the grace, never under a reference', () => {
  it('kept through the grace; a copy of the URL written after the last reference was dropped keeps it', async () => {
    const s = await store();
    const t = s.merchant.token;
    const a = await product(t);
    const b = await product(t);
    const url = await upload(t, a.variantId);
    // The last reference goes; a write that read the URL before (an editor's open form, an app's
    // sync) commits its copy just after.
    await setVariantImage(t, a.variantId, null);
    await setVariantImage(t, b.variantId, url);
    await purge();
    expect(await served(url)).toBe(200);
    // With no copy, the file stays through the grace and goes after it.
    await setVariantImage(t, b.variantId, null);
    await h.advance(UPLOAD_RELEASE_GRACE_MS / 1000 - 1);
    await h.deps.jobs.run(UPLOAD_PURGE_JOB);
    expect(await served(url)).toBe(200);
    await h.advance(1);
    const res = await h.req('POST', `/apps/admin/jobs/${UPLOAD_PURGE_JOB}/run`, { token: await operatorToken(h) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.processed).toBeGreaterThanOrEqual(1);
    expect(await served(url)).toBe(404);
  });

  it('a change rolled back records nothing; two runs at once both finish and the file goes once', async () => {
    const s = await store();
    const t = s.merchant.token;
    const a = await product(t);
    const url = await upload(t, a.variantId);
    const storeId = (await h.db.query<{ store_id: string }>('SELECT store_id FROM variants WHERE id = $1', [a.variantId])).rows[0].store_id;
    await expect(h.db.transaction(async (tx) => {
      await tx.query('UPDATE variants SET main_image_url = NULL WHERE id = $1', [a.variantId]);
      await releaseUploads(tx, h.config, storeId, [url], h.clock.now());
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    const releases = async () => (await h.db.query('SELECT name FROM upload_releases WHERE store_id = $1', [storeId])).rows;
    expect(await releases()).toEqual([]);

    await setVariantImage(t, a.variantId, null);
    expect(await releases()).toHaveLength(1);
    await h.advance(UPLOAD_RELEASE_GRACE_MS / 1000);
    await Promise.all([h.deps.jobs.run(UPLOAD_PURGE_JOB), h.deps.jobs.run(UPLOAD_PURGE_JOB)]);
    expect(await releases()).toEqual([]);
    expect(await served(url)).toBe(404);
  });
});
