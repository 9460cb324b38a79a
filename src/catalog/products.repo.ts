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

export async function productById(q: Queryable, id: string): Promise<ProductRow> {
  const { rows } = await q.query<ProductRow>(`SELECT ${PRODUCT_COLUMNS} FROM products p WHERE p.id = $1`, [id]);
  return rows[0];
}

export interface LockedProduct {
  id: string;
  store_id: string;
  num_id: number;
  inventory_quantity: number;
  sku: string | null;
}

/**
 * Locks the product (UUID or numeric id; within `storeId` when given) for the rest of the
 * transaction, so concurrent updates see each other's stock.
 */
export async function lockProduct(q: Queryable, id: string, storeId?: string): Promise<LockedProduct | null> {
  const byNum = /^\d{1,15}$/.test(id);
  const { rows } = await q.query<LockedProduct>(
    `SELECT id, store_id, num_id, inventory_quantity, sku FROM products
      WHERE ${byNum ? 'num_id = $1::bigint' : 'id = $1::uuid'} AND ($2::uuid IS NULL OR store_id = $2::uuid) FOR UPDATE`,
    [id, storeId ?? null],
  );
  return rows[0] ?? null;
}

/** Whether another product of the store already uses `handle`. */
export async function handleTaken(q: Queryable, storeId: string, handle: string, exceptId?: string): Promise<boolean> {
  const { rows } = await q.query(
    'SELECT 1 FROM products WHERE store_id = $1 AND handle = $2 AND ($3::uuid IS NULL OR id <> $3::uuid) LIMIT 1',
    [storeId, handle, exceptId ?? null],
  );
  return rows.length > 0;
}

/** `base` when free in the store, else the first free `base-N` (N >= 2). */
export async function freeHandle(q: Queryable, storeId: string, base: string): Promise<string> {
  const pattern = `${base.replace(/[\\%_]/g, (c) => `\\${c}`)}-%`;
  const { rows } = await q.query<{ handle: string }>(
    'SELECT handle FROM products WHERE store_id = $1 AND (handle = $2 OR handle LIKE $3)',
    [storeId, base, pattern],
  );
  const used = new Set(rows.map((r) => r.handle));
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) if (!used.has(`${base}-${n}`)) return `${base}-${n}`;
}
