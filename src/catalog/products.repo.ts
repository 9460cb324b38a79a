import type { Queryable } from '../db/db.js';
import type { ProductRow } from './product-view.js';

/** Variants and images come back inside the product row, so a page is one round trip. */
const PRODUCT_COLUMNS = `p.*,
  COALESCE((SELECT json_agg(v ORDER BY v.position, v.num_id) FROM (
     SELECT num_id, name, value, price_minor, discount_price_minor, sku, stock, stock_status, position
       FROM variants WHERE product_id = p.id) v), '[]') AS variants,
  COALESCE((SELECT json_agg(i ORDER BY i.position) FROM (
     SELECT num_id, src, position FROM product_images WHERE product_id = p.id) i), '[]') AS images`;

export const PRODUCT_STATUSES = ['active', 'draft', 'archived'] as const;

/** Newest first; one row more than asked tells whether a next page exists. */
export async function listProducts(q: Queryable, storeId: string, opts: { status?: string; limit: number; offset: number }) {
  const params: unknown[] = [storeId, opts.limit + 1, opts.offset];
  let filter = '';
  if (opts.status) {
    params.push(opts.status);
    filter = `AND p.status = $4`;
  }
  const { rows } = await q.query<ProductRow>(
    `SELECT ${PRODUCT_COLUMNS} FROM products p WHERE p.store_id = $1 ${filter}
      ORDER BY p.created_at DESC, p.id DESC LIMIT $2 OFFSET $3`,
    params,
  );
  return { rows: rows.slice(0, opts.limit), hasNext: rows.length > opts.limit };
}

/** By UUID or numeric id (C6.1), within the store only. */
export async function findProduct(q: Queryable, storeId: string, id: string) {
  const byNum = /^\d{1,15}$/.test(id);
  const { rows } = await q.query<ProductRow>(
    `SELECT ${PRODUCT_COLUMNS} FROM products p WHERE p.store_id = $1 AND ${byNum ? 'p.num_id = $2::bigint' : 'p.id = $2::uuid'}`,
    [storeId, id],
  );
  return rows[0] ?? null;
}
