// The merchant variant route `PATCH /variants/update-single-variant/{id}` (app-api.md merchant
// routes and Variant; C7.3, C14.2): multipart fields, the `mainImage` upload (type by bytes, 20 MB),
// where the file is kept and how it is served back under /uploads, the roles and errors, and the
// events of the change.
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { privateDatabase } from './fixtures/webhook-harness.js';
import { openPostgres } from '../src/db/postgres.js';
import { operatorToken, signupMerchant, signupPartner, type Merchant, staffToken } from './helpers/actors.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { events, newEvents } from './helpers/events.js';
import { type FilePart, gifBytes, jpegBytes, multipartBody, notImages, pngBytes, webpBytes } from './helpers/catalog.js';
import { uuidv7 } from '../src/ids.js';
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

const BASE = 'http://svc.test';
const MB20 = 20 * 1024 * 1024;

async function productWithVariants(m: Merchant) {
  const res = await h.req('POST', '/products', {
    token: m.token,
    body: {
      title: 'Linen Shirt',
      variants: [
        { name: 'Size', value: 'M', price: 25, discountPrice: 19.9, stock: 10, skuId: 'LS-M', weight: 0.3, weightUnit: 'kg' },
        { name: 'Size', value: 'L', price: 25, stock: 4, skuId: 'LS-L' },
      ],
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  const product = res.json().data;
  const { rows } = await h.db.query('SELECT * FROM variants WHERE product_id = $1 ORDER BY position', [product.product_id]);
  return { product, variants: rows };
}

function patch(id: string | number, token: string | undefined, fields: Record<string, string>, files: FilePart[] = []) {
  const { payload, contentType } = multipartBody(fields, files);
  const headers: Record<string, string> = { 'content-type': contentType };
  if (token) headers.authorization = `Bearer ${token}`;
  return h.app.inject({ method: 'PATCH', url: `/variants/update-single-variant/${id}`, headers, payload }) as unknown as Promise<Awaited<ReturnType<Harness['req']>>>;
}

const image = (data: Buffer, filename = 'photo.png', contentType = 'image/png'): FilePart => ({ name: 'mainImage', filename, contentType, data });

/** Files the uploads dir holds (recursively), staged ones included. */
function uploadedFiles(): string[] {
  const root = join(h.config.dataDir, 'uploads');
  if (!existsSync(root)) return [];
  return (readdirSync(root, { recursive: true, withFileTypes: true }) as any[]).filter((d) => d.isFile()).map((d) => join(d.parentPath ?? d.path, d.name));
}

const pathOf = (url: string) => url.slice(BASE.length);
/** The grace passes on the service clock (C12.1) and the upload-purge job runs (C12.2). */
const purgeUploads = async () => {
  await h.advance(UPLOAD_RELEASE_GRACE_MS / 1000);
  await h.deps.jobs.run(UPLOAD_PURGE_JOB);
};

describe('PATCH /variants/update-single-variant/{id}: fields (app-api.md Variant; C7.3)', () => {
  it('200 envelope, data = the merchant record, field by field; multipart text fields parsed; product-level values untouched', async () => {
    const m = await signupMerchant(h);
    const { product, variants: [v] } = await productWithVariants(m);
    const res = await patch(v.id, m.token, {
      name: 'Colour', value: 'Blue', price: '21.5', discountPrice: '18', stock: '7', stockStatus: 'LOW_STOCK', skuId: 'LS-BLUE', weight: '250', weightUnit: 'g', unknownField: 'ignored',
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      status: 200, state: 'success', message: null, count: null, pagination: null,
      data: {
        varientId: v.id, productId: product.product_id, name: 'Colour', value: 'Blue', price: 21.5, discountPrice: 18, stock: 7,
        stockStatus: 'LOW_STOCK', skuId: 'LS-BLUE', weight: 250, weightUnit: 'g', mainImageUrl: null, updatedAt: expect.stringMatching(/Z$/),
      },
    });
    const after = (await h.db.query('SELECT * FROM products WHERE id = $1', [product.product_id])).rows[0];
    expect([after.price_minor, after.compare_at_price_minor, after.inventory_quantity]).toEqual([1990, 2500, 10]);
  });

  it('all fields optional: an empty form changes nothing; discountPrice "" clears it; JSON bodies are accepted too', async () => {
    const m = await signupMerchant(h);
    const { variants: [v] } = await productWithVariants(m);
    const empty = await patch(v.id, m.token, {});
    expect(empty.statusCode).toBe(200);
    expect(empty.json().data).toMatchObject({ name: 'Size', value: 'M', price: 25, discountPrice: 19.9, stock: 10, stockStatus: 'IN_STOCK', skuId: 'LS-M', weight: 0.3, weightUnit: 'kg' });
    expect((await patch(v.id, m.token, { discountPrice: '' })).json().data.discountPrice).toBeNull();
    const json = await h.req('PATCH', `/variants/update-single-variant/${v.id}`, { token: m.token, body: { price: 30, stock: 1 } });
    expect(json.statusCode, json.body).toBe(200);
    expect(json.json().data).toMatchObject({ price: 30, stock: 1 });
  });

  it('the path id is the varientId (UUID) or the numeric id (C14.2)', async () => {
    const m = await signupMerchant(h);
    const { variants: [, v] } = await productWithVariants(m);
    const res = await patch(v.num_id, m.token, { name: 'By number' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ varientId: v.id, name: 'By number' });
  });

  it('an unknown or malformed id -> 400 envelope "Variant not found" (app-api.md Errors)', async () => {
    const m = await signupMerchant(h);
    for (const id of [uuidv7(), '99999999999', 'not-a-variant', '0']) expectEnvelopeError(await patch(id, m.token, { name: 'x' }), 400, /^Variant not found$/);
  });

  it('invalid values -> 400 envelope naming the field; nothing changed', async () => {
    const m = await signupMerchant(h);
    const { variants: [v] } = await productWithVariants(m);
    const cases: [Record<string, string>, RegExp][] = [
      [{ price: 'abc' }, /^price/], [{ price: '' }, /^price/], [{ price: '-1' }, /^price/], [{ discountPrice: '1.234' }, /^discountPrice/],
      [{ stock: '-1' }, /^stock/], [{ stock: '2.5' }, /^stock/], [{ weight: 'heavy' }, /^weight/], [{ weightUnit: 'ton' }, /^weightUnit/],
      [{ stockStatus: 'in stock!' }, /^stockStatus/],
    ];
    for (const [fields, message] of cases) expectEnvelopeError(await patch(v.id, m.token, fields), 400, message);
    const { rows } = await h.db.query('SELECT * FROM variants WHERE id = $1', [v.id]);
    expect(rows[0]).toEqual(v);
  });

  it('emits products/update (the product shows its variants), plus inventory_levels/update when the stock changes (C8.1)', async () => {
    const m = await signupMerchant(h);
    const { product, variants: [v] } = await productWithVariants(m);
    let before = await events(h, m.storeId);
    await patch(v.id, m.token, { stock: '3' });
    const current = (await h.req('PUT', `/products/${product.product_id}`, { token: m.token, body: {} })).json().data;
    const written = await newEvents(h, m.storeId, before);
    expect(written.map((e) => e.topic)).toEqual(['products/update', 'inventory_levels/update', 'products/update']);
    expect(written[0].payload.variants[0]).toMatchObject({ id: v.num_id, inventory_quantity: 3 });
    expect(written[0].payload.variants).toEqual(current.variants);
    expect(written[1].payload).toEqual({ product_id: product.id, variant_id: v.num_id, sku: 'LS-M', available: 3, updated_at: expect.any(String) });

    before = await events(h, m.storeId);
    await patch(v.id, m.token, { stock: '3', name: 'Same stock' });
    expect((await newEvents(h, m.storeId, before)).map((e) => e.topic)).toEqual(['products/update']);
  });

  // Found in review: `available` also required the status a variant was created with (OUT_OF_STOCK
  // at stock 0, never changed by a later stock change), so a restocked variant stayed unavailable
  // to apps for ever while checkouts sold it. It is whether it can be bought: stock above 0.
  it('`available` follows the stock, whatever the stock status label says (app-api.md Product variants[])', async () => {
    const m = await signupMerchant(h);
    const { product, variants: [v] } = await productWithVariants(m);
    const shown = async () => (await h.req('PUT', `/products/${product.product_id}`, { token: m.token, body: {} })).json().data.variants[0];
    await patch(v.id, m.token, { stock: '0' });
    expect(await shown()).toMatchObject({ inventory_quantity: 0, available: false });
    await patch(v.id, m.token, { stock: '10' });
    expect(await shown()).toMatchObject({ inventory_quantity: 10, available: true });
    await patch(v.id, m.token, { stockStatus: 'OUT_OF_STOCK' });
    expect(await shown()).toMatchObject({ inventory_quantity: 10, available: true });
    await patch(v.id, m.token, { stock: '0', stockStatus: 'IN_STOCK' });
    expect(await shown()).toMatchObject({ inventory_quantity: 0, available: false });
  });
});

describe('mainImage upload (C7.3): type by bytes, at most 20 MB, kept under the data dir, served at {base_url}/uploads', () => {
  it('png, jpeg, gif and webp are stored and served back byte for byte with their content type', async () => {
    const m = await signupMerchant(h);
    const { variants: [v] } = await productWithVariants(m);
    const cases: [Buffer, string, string, string][] = [
      [pngBytes(), 'a.png', 'png', 'image/png'],
      [jpegBytes(), 'b.jpeg', 'jpg', 'image/jpeg'],
      [jpegBytes(), 'c.jpg', 'jpg', 'image/jpeg'],
      [gifBytes(), 'd.gif', 'gif', 'image/gif'],
      [webpBytes(), 'e.webp', 'webp', 'image/webp'],
    ];
    for (const [data, filename, ext, type] of cases) {
      const res = await patch(v.id, m.token, { name: 'With image' }, [image(data, filename, type)]);
      expect(res.statusCode, `${filename}: ${res.body}`).toBe(200);
      const url: string = res.json().data.mainImageUrl;
      expect(url).toMatch(new RegExp(`^${BASE}/uploads/variants/${m.storeId}/[0-9a-f-]{36}\\.${ext}$`));
      expect((await h.db.query('SELECT main_image_url FROM variants WHERE id = $1', [v.id])).rows[0].main_image_url).toBe(url);
      const served = await h.app.inject({ method: 'GET', url: pathOf(url) });
      expect(served.statusCode).toBe(200);
      expect(served.headers['content-type']).toBe(type);
      expect(served.headers['x-content-type-options']).toBe('nosniff');
      expect(served.rawPayload.equals(data)).toBe(true);
      // The file is under {SVC_DATA_DIR}/uploads.
      expect(existsSync(join(h.config.dataDir, pathOf(url)))).toBe(true);
    }
    // Each replacement released the image it replaced, and the upload-purge job deletes it once the
    // grace has passed (docs/decisions.md Catalog): one file left, nothing staged. Clearing the image
    // removes the last one.
    await purgeUploads();
    const last = (await h.db.query('SELECT main_image_url FROM variants WHERE id = $1', [v.id])).rows[0].main_image_url;
    expect(uploadedFiles().filter((f) => f.includes(m.storeId))).toHaveLength(1);
    const cleared = await patch(v.id, m.token, { mainImageUrl: '' });
    expect(cleared.json().data.mainImageUrl).toBeNull();
    await purgeUploads();
    expect((await h.app.inject({ method: 'GET', url: pathOf(last) })).statusCode).toBe(404);
    expect(uploadedFiles().filter((f) => f.includes(m.storeId))).toHaveLength(0);
    expect(uploadedFiles().filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('the name and declared type do not matter, the bytes do: png bytes named notes.txt are a png; text named photo.png is refused', async () => {
    const m = await signupMerchant(h);
    const { variants: [v] } = await productWithVariants(m);
    const ok = await patch(v.id, m.token, {}, [image(pngBytes(), 'notes.txt', 'text/plain')]);
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.mainImageUrl).toMatch(/\.png$/);
    const filesBefore = uploadedFiles();

    for (const [data, filename] of [[notImages.text(), 'photo.png'], [notImages.svg(), 'icon.svg'], [notImages.pdf(), 'doc.jpg'], [notImages.zip(), 'a.gif'], [Buffer.alloc(0), 'empty.png']] as const) {
      const res = await patch(v.id, m.token, { name: 'Should not apply' }, [image(data, filename)]);
      expectEnvelopeError(res, 400, /^mainImage must be a jpg, jpeg, png, gif or webp image$/);
    }
    const { rows } = await h.db.query('SELECT name, main_image_url FROM variants WHERE id = $1', [v.id]);
    expect(rows[0]).toEqual({ name: 'Size', main_image_url: ok.json().data.mainImageUrl });
    expect(uploadedFiles()).toEqual(filesBefore);
  });

  it('exactly 20 MB is accepted; one byte more -> 400 envelope, nothing stored, the variant unchanged', async () => {
    const m = await signupMerchant(h);
    const { variants: [v] } = await productWithVariants(m);
    const before = uploadedFiles();
    const tooBig = await patch(v.id, m.token, { name: 'Too big' }, [image(pngBytes(MB20 + 1))]);
    expectEnvelopeError(tooBig, 400, /^mainImage must be at most 20 MB$/);
    expect(uploadedFiles()).toEqual(before);
    expect((await h.db.query('SELECT name, main_image_url FROM variants WHERE id = $1', [v.id])).rows[0]).toEqual({ name: 'Size', main_image_url: null });

    const exact = await patch(v.id, m.token, { name: 'Exactly 20 MB' }, [image(pngBytes(MB20))]);
    expect(exact.statusCode, exact.body).toBe(200);
    const served = await h.app.inject({ method: 'GET', url: pathOf(exact.json().data.mainImageUrl) });
    expect(served.rawPayload.length).toBe(MB20);
  });

  it('other file fields are ignored; an empty file part (a browser form with no file chosen) is no image', async () => {
    const m = await signupMerchant(h);
    const { variants: [v] } = await productWithVariants(m);
    const res = await patch(v.id, m.token, { name: 'Other files' }, [
      { name: 'attachment', filename: 'x.bin', data: notImages.zip() },
      { name: 'mainImage', filename: '', data: Buffer.alloc(0) },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ name: 'Other files', mainImageUrl: null });
    expect(uploadedFiles().filter((f) => f.includes(m.storeId))).toEqual([]);
  });

  it('a body that is not well-formed multipart, or breaks the form limits -> 400 envelope, nothing kept', async () => {
    const m = await signupMerchant(h);
    const { variants: [v] } = await productWithVariants(m);
    const before = uploadedFiles();
    const send = (contentType: string, payload: string | Buffer) =>
      h.app.inject({ method: 'PATCH', url: `/variants/update-single-variant/${v.id}`, headers: { authorization: `Bearer ${m.token}`, 'content-type': contentType }, payload });
    const png = pngBytes().toString('latin1');
    for (const [contentType, payload] of [
      ['multipart/form-data', 'no boundary'],
      ['multipart/form-data; boundary=xyz', 'garbage'],
      ['multipart/form-data; boundary=xyz', '--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\ncut off'],
      ['multipart/form-data; boundary=xyz', `--xyz\r\nContent-Disposition: form-data; name="mainImage"; filename="a.png"\r\n\r\n${png}`],
      ['multipart/form-data; boundary=xyz', '--xyz\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\nx\r\n--xyz--\r\n'],
      ['text/plain', 'name=x'],
    ]) {
      expectEnvelopeError(await send(contentType, payload) as any, 400);
    }
    const manyFiles = multipartBody({}, Array.from({ length: 5 }, (_, i) => ({ name: `f${i}`, filename: `${i}.bin`, data: Buffer.from('x') })));
    expectEnvelopeError(await send(manyFiles.contentType, manyFiles.payload) as any, 400);
    const longField = multipartBody({ name: 'x'.repeat(65 * 1024) });
    expectEnvelopeError(await send(longField.contentType, longField.payload) as any, 400, /^name is too long$/);
    expect(uploadedFiles()).toEqual(before);
    expect((await h.db.query('SELECT name FROM variants WHERE id = $1', [v.id])).rows[0].name).toBe('Size');
  });

  it('/uploads serves only files under the uploads dir: no traversal, no staged files, no symlinks out, no other types', async () => {
    const m = await signupMerchant(h);
    const { variants: [v] } = await productWithVariants(m);
    const url = (await patch(v.id, m.token, {}, [image(pngBytes())])).json().data.mainImageUrl as string;
    writeFileSync(join(h.config.dataDir, 'secret.png'), pngBytes());
    writeFileSync(join(h.config.dataDir, 'uploads', 'notes.txt'), 'not served');
    mkdirSync(join(h.config.dataDir, 'uploads', '.tmp'), { recursive: true });
    writeFileSync(join(h.config.dataDir, 'uploads', '.tmp', 'staged.png'), pngBytes());
    symlinkSync(join(h.config.dataDir, 'secret.png'), join(h.config.dataDir, 'uploads', 'link.png'));
    const dir = pathOf(url).split('/').slice(0, -1).join('/');
    for (const path of [
      '/uploads/../secret.png', '/uploads/%2e%2e/secret.png', '/uploads/variants/%2e%2e%2f%2e%2e%2fsecret.png', '/uploads/..%2fsecret.png',
      '/uploads/.tmp/staged.png', '/uploads/notes.txt', '/uploads/link.png', `${dir}/missing.png`, '/uploads/', '/uploads/variants',
      `${dir}/..%5c..%5csecret.png`,
    ]) {
      const res = await h.app.inject({ method: 'GET', url: path });
      expect(res.statusCode, path).toBe(404);
      expect(res.rawPayload.includes(pngBytes().subarray(0, 8))).toBe(false);
    }
    // A NUL in a path is refused before any route sees it (issue 10; src/http/input-guard.ts).
    expectEnvelopeError(await h.app.inject({ method: 'GET', url: '/uploads/%00.png' }) as any, 400);
    expect((await h.app.inject({ method: 'GET', url: pathOf(url) })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'HEAD', url: pathOf(url) })).statusCode).toBe(200);
  });
});

describe('PATCH /variants/update-single-variant/{id}: roles and stores (C7.1; app-api.md merchant routes)', () => {
  it('MERCHANT, STAFF_ADMIN, MANAGER and SUPER_ADMIN may; PARTNER 403; no or a bad token 401; another store\'s variant 403', async () => {
    const m = await signupMerchant(h);
    const other = await signupMerchant(h);
    const { variants: [v] } = await productWithVariants(m);
    const { variants: [foreign] } = await productWithVariants(other);
    const tokens = [m.token, await staffToken(h, m, 'STAFF_ADMIN'), await staffToken(h, m, 'MANAGER'), await operatorToken(h)];
    for (const [i, token] of tokens.entries()) {
      const res = await patch(v.id, token, { name: `Role ${i}` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.name).toBe(`Role ${i}`);
    }
    expectEnvelopeError(await patch(v.id, (await signupPartner(h)).token, { name: 'x' }), 403);
    expectEnvelopeError(await patch(v.id, undefined, { name: 'x' }), 401);
    expectEnvelopeError(await patch(v.id, 'not-a-jwt', { name: 'x' }), 401);
    expectEnvelopeError(await patch(foreign.id, m.token, { name: 'x' }), 403);
    expectEnvelopeError(await patch(foreign.num_id, await staffToken(h, m, 'MANAGER'), { name: 'x' }, [image(pngBytes())]), 403);
    expect((await h.db.query('SELECT name, main_image_url FROM variants WHERE id = $1', [foreign.id])).rows[0]).toEqual({ name: 'Size', main_image_url: null });
  });
});
