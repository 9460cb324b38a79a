// Discounts' SQL, with the list filters of C14.4 computed against a given instant (the service clock).
import type { Queryable } from '../db/db.js';

export const DISCOUNT_TYPES = ['Percentage', 'Flat', 'FreeShipping', 'BuyXGetY', 'Freebie'] as const;
export const DISCOUNT_STATUSES = ['Active', 'Inactive'] as const;
export type DiscountType = (typeof DISCOUNT_TYPES)[number];
export type DiscountStatus = (typeof DISCOUNT_STATUSES)[number];

export interface DiscountRow {
  id: string;
  store_id: string;
  code: string;
  type: DiscountType;
  status: DiscountStatus;
  discount_percentage: string | number | null;
  discount_amount: string | number | null;
  min_order_total: string | number;
  total_coupons: number;
  used_count: number;
  uses_per_customer: number | null;
  apply_on_products: string[];
  start_date: Date;
  end_date: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const STATUS_FILTERS = ['active', 'expired', 'scheduled', 'disabled'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

/**
 * C14.4 at instant `$now`. A discount works from its `startDate` through its `endDate`, both
 * instants included: it is scheduled while now < startDate, and expired once now > endDate
 * ("endDate before now"). `active` and `disabled` also look at the record's status; `expired` and
 * `scheduled` only at the dates, so an Inactive past discount is both expired and disabled.
 */
const STATUS_SQL: Record<StatusFilter, (now: string) => string> = {
  active: (now) => `status = 'Active' AND start_date <= ${now} AND (end_date IS NULL OR end_date >= ${now})`,
  expired: (now) => `end_date < ${now}`,
  scheduled: (now) => `start_date > ${now}`,
  disabled: () => `status = 'Inactive'`,
};

/**
 * `code` as a LIKE pattern that matches the text literally: %, _ and \ lose their meaning. Its case
 * is left to SQL (`lower(code) LIKE lower($n)`), as the code's unique index and `lockDiscountByCode`
 * compare: JavaScript's lower case is not PostgreSQL's ('İ' is 'i' + U+0307 here and 'i' there; PGlite
 * keeps 'Ⓐ' that both others lower-case), and a discount was not found by its own code.
 */
export const likeContains = (text: string) => `%${text.replace(/[\\%_]/g, '\\$&')}%`;

export async function listDiscounts(q: Queryable, storeId: string, opts: { status?: StatusFilter; code?: string; now: Date; limit: number; offset: number }) {
  const params: unknown[] = [storeId];
  const where = ['store_id = $1'];
  if (opts.status === 'disabled') where.push(STATUS_SQL.disabled(''));
  else if (opts.status) {
    // Only a filter that reads the instant gets it: an unused parameter has no type to infer.
    params.push(opts.now);
    where.push(STATUS_SQL[opts.status](`$${params.length}::timestamptz`));
  }
  if (opts.code) {
    params.push(likeContains(opts.code));
    where.push(`lower(code) LIKE lower($${params.length}) ESCAPE '\\'`);
  }
  const filter = where.join(' AND ');
  const [page, count] = await Promise.all([
    q.query<DiscountRow>(
      `SELECT * FROM discounts WHERE ${filter} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, opts.limit, opts.offset],
    ),
    q.query<{ n: number }>(`SELECT count(*)::int AS n FROM discounts WHERE ${filter}`, params),
  ]);
  return { rows: page.rows, total: count.rows[0].n };
}

export async function findDiscount(q: Queryable, id: string, lock = false): Promise<DiscountRow | null> {
  const { rows } = await q.query<DiscountRow>(`SELECT * FROM discounts WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0] ?? null;
}

/** The store's discount with this code (case-insensitively), locked: checkout counts its uses under this lock (C7.1). */
/** The store's discount with this code; locked (FOR UPDATE) unless `lock: false` (a checkout's preview). */
export async function lockDiscountByCode(q: Queryable, storeId: string, code: string, opts: { lock?: boolean } = {}): Promise<DiscountRow | null> {
  const lock = opts.lock === false ? '' : ' FOR UPDATE';
  const { rows } = await q.query<DiscountRow>(`SELECT * FROM discounts WHERE store_id = $1 AND lower(code) = lower($2)${lock}`, [storeId, code]);
  return rows[0] ?? null;
}

/** One more use of the discount (its row is locked by lockDiscountByCode). */
export async function countDiscountUse(q: Queryable, id: string): Promise<void> {
  await q.query('UPDATE discounts SET used_count = used_count + 1 WHERE id = $1', [id]);
}

export interface DiscountFields {
  code: string;
  type: string;
  status: string;
  discountPercentage: string | null;
  discountAmount: string | null;
  minOrderTotal: string;
  totalCoupons: number;
  usesPerCustomer: number | null;
  applyOnProducts: string[];
  startDate: Date;
  endDate: Date | null;
}

const values = (f: DiscountFields) => [
  f.code, f.type, f.status, f.discountPercentage, f.discountAmount, f.minOrderTotal, f.totalCoupons, f.usesPerCustomer,
  JSON.stringify(f.applyOnProducts), f.startDate, f.endDate,
];

export async function insertDiscount(q: Queryable, id: string, storeId: string, f: DiscountFields, now: Date): Promise<DiscountRow> {
  const { rows } = await q.query<DiscountRow>(
    `INSERT INTO discounts (code, type, status, discount_percentage, discount_amount, min_order_total, total_coupons, uses_per_customer,
                            apply_on_products, start_date, end_date, id, store_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, $13, $14, $14) RETURNING *`,
    [...values(f), id, storeId, now],
  );
  return rows[0];
}

export async function updateDiscountRow(q: Queryable, id: string, f: DiscountFields, now: Date): Promise<DiscountRow> {
  const { rows } = await q.query<DiscountRow>(
    `UPDATE discounts SET code = $1, type = $2, status = $3, discount_percentage = $4, discount_amount = $5, min_order_total = $6,
            total_coupons = $7, uses_per_customer = $8, apply_on_products = $9::jsonb, start_date = $10, end_date = $11, updated_at = $12
      WHERE id = $13 RETURNING *`,
    [...values(f), now, id],
  );
  return rows[0];
}

/** The ids among `ids` that are products of the store. */
export async function storeProductIds(q: Queryable, storeId: string, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const { rows } = await q.query<{ id: string }>('SELECT id FROM products WHERE store_id = $1 AND id = ANY($2::uuid[])', [storeId, ids]);
  return new Set(rows.map((r) => r.id));
}
