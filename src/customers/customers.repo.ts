// Customers' SQL. `orders_count` and `total_spent` are never stored: every read computes them from
// the customer's orders (one indexed aggregate per customer, inside the same statement).
import type { Queryable } from '../db/db.js';

export interface StoredAddress {
  address1: string | null;
  city: string | null;
  province: string | null;
  country: string | null;
  zip: string | null;
  phone: string | null;
}

export interface CustomerRow {
  id: string;
  store_id: string;
  email: string;
  name: string;
  /** Where the first name ends in `name` (customer-fields.ts StoredName); null on rows written before it was kept. */
  first_name_length?: number | null;
  phone: string | null;
  accepts_marketing: boolean;
  note: string | null;
  address: StoredAddress | null;
  created_at: Date;
  updated_at: Date;
  orders_count: number;
  /** The exact text of SQL's numeric sum, in hundredths: past 2^53 a number rounded it, and past int8 a cast failed (a 500). */
  total_spent_minor: string;
}

export interface CustomerFields {
  email: string;
  /** Built by `storedName` (customer-fields.ts) only, with the length beside it. */
  name: string;
  firstNameLength: number;
  phone: string | null;
  acceptsMarketing: boolean;
  note: string | null;
  address: StoredAddress | null;
}

/**
 * Every order of the customer counts in `orders_count`; `total_spent` is what the customer paid
 * and kept: order totals less refunds, cancelled orders left out (docs/decisions.md). The sum is
 * read as numeric text, as the sales analytics' sums are: one order may come to 2^53 - 1 hundredths.
 */
const WITH_TOTALS = `c.*, o.orders_count, o.total_spent_minor
  FROM customers c
  CROSS JOIN LATERAL (
    SELECT count(*)::int AS orders_count,
           COALESCE(sum(total_minor - refunded_minor) FILTER (WHERE cancelled_at IS NULL AND status <> 'canceled'), 0)::text AS total_spent_minor
      FROM orders WHERE customer_id = c.id) o`;

export async function findCustomer(q: Queryable, storeId: string, id: string, lock = false): Promise<CustomerRow | null> {
  if (lock) await q.query('SELECT 1 FROM customers WHERE id = $1 AND store_id = $2 FOR UPDATE', [id, storeId]);
  const { rows } = await q.query<CustomerRow>(`SELECT ${WITH_TOTALS} WHERE c.id = $1 AND c.store_id = $2`, [id, storeId]);
  return rows[0] ?? null;
}

/** Newest first; one row more than asked tells whether a next page exists. */
export async function listCustomers(q: Queryable, storeId: string, opts: { limit: number; offset: number }) {
  const { rows } = await q.query<CustomerRow>(
    `SELECT ${WITH_TOTALS} WHERE c.store_id = $1 ORDER BY c.created_at DESC, c.id DESC LIMIT $2 OFFSET $3`,
    [storeId, opts.limit + 1, opts.offset],
  );
  return { rows: rows.slice(0, opts.limit), hasNext: rows.length > opts.limit };
}

export async function insertCustomer(q: Queryable, id: string, storeId: string, f: CustomerFields, now: Date): Promise<void> {
  await q.query(
    `INSERT INTO customers (id, store_id, email, name, first_name_length, phone, accepts_marketing, note, address, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $10, $5, $6, $7, $8::jsonb, $9, $9)`,
    [id, storeId, f.email, f.name, f.phone, f.acceptsMarketing, f.note, f.address === null ? null : JSON.stringify(f.address), now, f.firstNameLength],
  );
}

export async function updateCustomerRow(q: Queryable, id: string, f: CustomerFields, now: Date): Promise<void> {
  await q.query(
    `UPDATE customers SET email = $2, name = $3, first_name_length = $9, phone = $4, accepts_marketing = $5, note = $6, address = $7::jsonb, updated_at = $8
      WHERE id = $1`,
    [id, f.email, f.name, f.phone, f.acceptsMarketing, f.note, f.address === null ? null : JSON.stringify(f.address), now, f.firstNameLength],
  );
}

/** Orders outlive their customer: they keep their own email and addresses and lose the link. */
export async function deleteCustomerRow(q: Queryable, id: string): Promise<void> {
  await q.query('UPDATE orders SET customer_id = NULL WHERE customer_id = $1', [id]);
  await q.query('DELETE FROM customers WHERE id = $1', [id]);
}

export async function emailTaken(q: Queryable, storeId: string, email: string, exceptId?: string): Promise<boolean> {
  const { rows } = await q.query(
    'SELECT 1 FROM customers WHERE store_id = $1 AND lower(email) = lower($2) AND ($3::uuid IS NULL OR id <> $3::uuid)',
    [storeId, email, exceptId ?? null],
  );
  return rows.length > 0;
}

/**
 * Serialises, until the transaction ends, the writers that may give a customer of the store this
 * email (case-insensitively, as the unique index `customers_store_email_key`): a create, an email
 * change, an order with a new customer's email. Each checks the email is free after taking it, so
 * of two at once the second sees the first's customer instead of failing on the index (a 500).
 */
export async function lockCustomerEmail(q: Queryable, storeId: string, email: string): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtext('customer-email:' || $1 || ':' || lower($2)))", [storeId, email], { name: 'customer_email_lock' });
}

/**
 * The store's customer with this email (case-insensitively), or null. With `forReference` (an
 * order about to point at the customer) the row is held with `FOR KEY SHARE` until the transaction
 * ends: a delete of that customer running meanwhile either waits for the order, which it then
 * unlinks as it unlinks every order, or has committed first, and the row is not found. Without the
 * lock the order's foreign key would meet the deleted row and fail (a 500).
 */
export async function findCustomerIdByEmail(q: Queryable, storeId: string, email: string, opts: { forReference?: boolean } = {}): Promise<string | null> {
  const { rows } = opts.forReference
    ? await q.query<{ id: string }>('SELECT id FROM customers WHERE store_id = $1 AND lower(email) = lower($2) FOR KEY SHARE', [storeId, email], { name: 'customer_id_by_email_for_reference' })
    : await q.query<{ id: string }>('SELECT id FROM customers WHERE store_id = $1 AND lower(email) = lower($2)', [storeId, email], { name: 'customer_id_by_email' });
  return rows[0]?.id ?? null;
}
