import type { Queryable } from '../db/db.js';
import type { ProductRow } from './product-view.js';

/**
 * Variants and images come back inside the product row (kept current by triggers, migration
 * 0008), so a page is one round trip and one index scan.
 */
const PRODUCT_COLUMNS = `p.id, p.num_id, p.store_id, p.title, p.handle, p.body_html, p.category, p.vendor, p.product_type,
  p.published_scope, p.status, p.tags, p.price_minor, p.compare_at_price_minor, p.inventory_quantity, p.sku,
  p.requires_shipping, p.created_at, p.updated_at, p.variants_json AS variants, p.images_json AS images`;

export const PRODUCT_STATUSES = ['active', 'draft', 'archived'] as const;

/**
 * Newest first; one row more than asked tells whether a next page exists (measured cheaper than a
 * separate look-up). A named statement per filter shape, planned once: this is the App API's
 * busiest read. Parameters are typed for PGlite's PREPARE.
 */
export async function listProducts(q: Queryable, storeId: string, opts: { status?: string; limit: number; offset: number }) {
  const byStatus = opts.status !== undefined;
  const params: unknown[] = [storeId, opts.limit + 1, opts.offset];
  if (byStatus) params.push(opts.status);
  const { rows } = await q.query<ProductRow>(
    `SELECT ${PRODUCT_COLUMNS} FROM products p WHERE p.store_id = $1::uuid ${byStatus ? 'AND p.status = $4::text' : ''}
      ORDER BY p.created_at DESC, p.id DESC LIMIT $2::bigint OFFSET $3::bigint`,
    params,
    { name: byStatus ? 'products_list_by_status' : 'products_list' },
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

/**
 * Serialises the choice of product handles in the store until the transaction ends. Handles are
 * checked, not constrained by an index (databases made before the rule may hold duplicates), so
 * without this two concurrent creates both find `slug` free and both take it. Under READ COMMITTED
 * the look-ups made after the lock see the handle the previous holder committed.
 */
export async function lockStoreHandles(q: Queryable, storeId: string): Promise<void> {
  await q.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`product-handles:${storeId}`]);
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

/** The id of the store's product named by `ref`, a UUID (it has dashes) or a numeric id; null when none. */
export async function storeProductId(q: Queryable, storeId: string, ref: string): Promise<string | null> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM products WHERE store_id = $1 AND ${ref.includes('-') ? 'id = $2::uuid' : 'num_id = $2::bigint'}`,
    [storeId, ref],
  );
  return rows[0]?.id ?? null;
}
