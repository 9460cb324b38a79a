// Products carry their variants and images as JSON maintained by triggers (migration 0008): every
// writer, including ones that touch the tables directly (orders moving stock), keeps it current.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';
import { uuidv7 } from '../src/ids.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

async function listed(token: string) {
  const res = await h.req('GET', '/api/v1/products.json', { token });
  expect(res.statusCode).toBe(200);
  return res.json().products[0];
}

describe('product children cache', () => {
  it('follows inserts, updates, moves and deletes of variants and images', async () => {
    const s = await storeWithApp(h);
    const storeId = s.merchant.storeId;
    const now = h.clock.now();
    const [a, b] = [uuidv7(), uuidv7()];
    for (const id of [a, b]) {
      await h.db.query(`INSERT INTO products (id, store_id, title, handle, created_at, updated_at) VALUES ($1, $2, 'P', $3, $4, $4)`, [id, storeId, `p-${id}`, now]);
    }
    const v1 = uuidv7();
    await h.db.query(`INSERT INTO variants (id, product_id, store_id, name, value, price_minor, stock, position, created_at, updated_at) VALUES ($1, $2, $3, 'Size', 'S', 1000, 5, 1, $4, $4)`, [v1, b, storeId, now]);
    await h.db.query(`INSERT INTO product_images (product_id, src, position) VALUES ($1, 'https://cdn.example.com/1.jpg', 1)`, [b]);
    let p = await listed(s.accessToken);
    expect(p.product_id).toBe(b);
    expect(p.variants).toMatchObject([{ title: 'Size / S', price: '10.00', inventory_quantity: 5, available: true }]);
    expect(p.images).toMatchObject([{ src: 'https://cdn.example.com/1.jpg', position: 1 }]);

    await h.db.query('UPDATE variants SET stock = 0 WHERE id = $1', [v1]);
    p = await listed(s.accessToken);
    expect(p.variants[0]).toMatchObject({ inventory_quantity: 0, available: false });

    await h.db.query('UPDATE variants SET product_id = $1 WHERE id = $2', [a, v1]);
    const both = (await h.req('GET', '/api/v1/products.json', { token: s.accessToken })).json().products;
    expect(both.find((x: any) => x.product_id === b).variants).toEqual([]);
    expect(both.find((x: any) => x.product_id === a).variants).toHaveLength(1);

    await h.db.query('DELETE FROM variants WHERE id = $1', [v1]);
    await h.db.query('DELETE FROM product_images WHERE product_id = $1', [b]);
    p = await listed(s.accessToken);
    expect(p.variants).toEqual([]);
    expect(p.images).toEqual([]);
  });

  it('a rolled-back variant change leaves the cache as it was', async () => {
    const s = await storeWithApp(h);
    const id = uuidv7();
    const now = h.clock.now();
    await h.db.query(`INSERT INTO products (id, store_id, title, handle, created_at, updated_at) VALUES ($1, $2, 'P', $3, $4, $4)`, [id, s.merchant.storeId, `p-${id}`, now]);
    await h.db.transaction(async (tx) => {
      await tx.query(`INSERT INTO variants (id, product_id, store_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)`, [uuidv7(), id, s.merchant.storeId, now]);
      throw new Error('rollback');
    }).catch(() => {});
    expect((await listed(s.accessToken)).variants).toEqual([]);
  });
});
