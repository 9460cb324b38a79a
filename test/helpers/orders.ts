// The order area's factory: a store with an app holding the order scopes, catalog rows written
// directly (the catalog's own routes are tested elsewhere) and orders taken through C7.1.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Harness } from './harness.js';
import { storeWithApp } from './actors.js';
import { uuidv7 } from '../../src/ids.js';

export const uniq = () => randomBytes(4).toString('hex');
export const ORDER_SCOPES = ['read_orders', 'write_orders', 'read_analytics', 'read_customers'];

/** Enterprise tier: no test meets the rate limit. */
export const orderStore = (h: Harness, scopes = ORDER_SCOPES) => storeWithApp(h, { scopes, tier: 'enterprise' });

export interface TestProduct {
  id: string;
  numId: number;
  variants: { id: string; numId: number }[];
}

/** A product row (price in minor units); with `variants`, one variant row per entry. */
export async function insertProduct(
  h: Harness,
  storeId: string,
  o: { title?: string; price?: number | null; stock?: number; sku?: string; variants?: { name?: string; value: string; price: number; discountPrice?: number | null; stock: number; sku?: string }[] } = {},
): Promise<TestProduct> {
  const id = uuidv7();
  const now = new Date();
  const title = o.title ?? `Product ${uniq()}`;
  const { rows } = await h.db.query<{ num_id: number }>(
    `INSERT INTO products (id, store_id, title, handle, price_minor, inventory_quantity, sku, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING num_id`,
    [id, storeId, title, `p-${id}`, o.price === undefined ? 1000 : o.price, o.stock ?? 100, o.sku ?? null, now],
  );
  const variants: TestProduct['variants'] = [];
  for (const [i, v] of (o.variants ?? []).entries()) {
    const vid = uuidv7();
    const { rows: vr } = await h.db.query<{ num_id: number }>(
      `INSERT INTO variants (id, product_id, store_id, name, value, price_minor, discount_price_minor, stock, sku, position, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING num_id`,
      [vid, id, storeId, v.name ?? 'Size', v.value, v.price, v.discountPrice ?? null, v.stock, v.sku ?? null, i + 1, now],
    );
    variants.push({ id: vid, numId: vr[0].num_id });
  }
  return { id, numId: rows[0].num_id, variants };
}

export async function stockOf(h: Harness, p: { id: string }): Promise<number> {
  const { rows } = await h.db.query<{ n: number }>('SELECT inventory_quantity AS n FROM products WHERE id = $1', [p.id]);
  return rows[0].n;
}

export async function variantStock(h: Harness, v: { id: string }): Promise<number> {
  const { rows } = await h.db.query<{ n: number }>('SELECT stock AS n FROM variants WHERE id = $1', [v.id]);
  return rows[0].n;
}

export const address = {
  first_name: 'Ada', last_name: 'Lovelace', company: null, address1: '1 Main Street', address2: 'Apt 4', city: 'London',
  province: 'Greater London', province_code: 'LND', country: 'United Kingdom', country_code: 'GB', zip: 'N1 1AA', phone: '+442000000',
};

/** A POST /orders body: one line of `product` and the fields C7.1 requires. */
export function orderBody(product: TestProduct | null, extra: Record<string, unknown> = {}) {
  return {
    customer: { email: `c-${uniq()}@example.com`, first_name: 'Ada', last_name: 'Lovelace', phone: '+15550101' },
    line_items: product ? [{ product_id: product.id, quantity: 1 }] : [],
    shipping_address: address,
    paymentMethod: 'card',
    ...extra,
  };
}

export async function takeOrder(h: Harness, token: string, body: unknown): Promise<any> {
  const res = await h.req('POST', '/orders', { token, body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}
