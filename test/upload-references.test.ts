// A store's uploaded images live while the store uses them (docs/decisions.md Catalog, "An upload
// lives while its store uses it"; C7.3): deleting a product deletes the uploads only it referenced,
// and an image dropped from one place (a variant, a product's images) is deleted only when nothing
// else of the store references it: another product, another variant, a description.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';
import { multipartBody, pngBytes } from './helpers/catalog.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
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
    expect(await served(url)).toBe(404);

    const b = await product(s.merchant.token);
    const other = await upload(s.merchant.token, b.variantId);
    const res = await h.req('DELETE', `/api/v1/products/${b.id}.json`, { token: s.accessToken });
    expect(res.statusCode, res.body).toBe(200);
    expect(await served(other)).toBe(404);
  });

  it('an upload another product of the store also uses survives, until that product goes too', async () => {
    const s = await store();
    const a = await product(s.merchant.token);
    const url = await upload(s.merchant.token, a.variantId);
    const byImages = await product(s.merchant.token, { images: [url] });
    await deleteProduct(s.merchant.token, a.id);
    expect(await served(url)).toBe(200);
    await deleteProduct(s.merchant.token, byImages.id);
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
      expect(await served(url), holder).toBe(200);
    }
  });

  it("another store's upload named by URL in the deleted product's images stays", async () => {
    const owner = await store();
    const other = await store();
    const mine = await product(owner.merchant.token);
    const url = await upload(owner.merchant.token, mine.variantId);
    await setVariantImage(owner.merchant.token, mine.variantId, null);
    // Cleared by the owner: nothing of the owner's store uses it any more, so it is gone already.
    expect(await served(url)).toBe(404);
    const again = await upload(owner.merchant.token, mine.variantId);
    const theirs = await product(other.merchant.token, { images: [again] });
    await deleteProduct(other.merchant.token, theirs.id);
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
    expect(await served(url)).toBe(200);
    // Cleared: likewise.
    await putProduct(t, p.id, { images: [url, next] });
    await setVariantImage(t, p.variantId, null);
    expect(await served(url)).toBe(200);
    expect(await served(next)).toBe(200);
    // The product's images dropping them is the last reference of each: both go.
    await putProduct(t, p.id, { images: [] });
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
    expect(await served(url)).toBe(200);
    // A merchant PUT changing the variant's image through `variants` drops the last reference.
    await putProduct(t, p.id, { variants: [{ varientId: p.variantId, mainImageUrl: null }] });
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
    expect(await served(url)).toBe(200);
    const res = await h.req('DELETE', `/menus/${made.json().data.menuId}`, { token: t });
    expect(res.statusCode, res.body).toBe(200);
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
    expect(await served(url)).toBe(200);
    await setVariantImage(t, second.variantId, 'https://example.com/x.png');
    expect(await served(url)).toBe(404);
  });
});
