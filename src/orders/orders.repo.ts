// Orders' SQL. A read is one statement: the order row with its line items, customer, transactions
// and metafields as JSON, so the App API's single-order read is one round trip (named, so planned
// once per connection, db.ts). Lists are one statement for the page, newest first. Writes name
// their columns (src/db/sql.ts): an order row is written from an object, not thirty-one `$n`s.
import type { Queryable } from '../db/db.js';
import { insertRow, updateRow } from '../db/sql.js';
import type { LineJson, OrderRow } from './order-view.js';

/** A timestamptz as ISO 8601 in UTC with milliseconds, as the API shows it (no Date round trip). */
const ts = (column: string, as = column.replace(/^\w+\./, '')) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${as}`;

const ORDER_COLUMNS = `o.id, o.store_id, o.order_number, o.email, o.phone, o.status, o.financial_status, o.fulfillment_status,
  ${ts('o.cancelled_at')}, o.cancel_reason, o.currency, o.subtotal_minor, o.tax_minor, o.tax_rate::text AS tax_rate, o.shipping_minor,
  o.discount_minor, o.total_minor, o.refunded_minor, o.paid_minor, o.payment_method, o.discount, o.automatic_discounts, o.shipping_address,
  o.billing_address, o.shipping_line, o.attributes, o.note, o.tags, o.courier_name, o.tracking_number, o.tracking_url,
  o.digital_data, ${ts('o.delivery_date')}, ${ts('o.shipped_date')}, o.staff_id, o.confirmation_number, ${ts('o.processed_at')},
  ${ts('o.created_at')}, ${ts('o.updated_at')}, s.slug`;

const CUSTOMER = `(SELECT json_build_object('id', c.id, 'email', c.email, 'name', c.name, 'first_name_length', c.first_name_length, 'phone', c.phone)
     FROM customers c WHERE c.id = o.customer_id) AS customer`;

const LINE_ITEMS = `COALESCE((SELECT json_agg(li ORDER BY li.position) FROM (
     SELECT id, product_id, variant_id, product_num_id, variant_num_id, title, variant_title, sku, quantity, price_minor,
            total_discount_minor, properties, requires_shipping, taxable, stock_deducted, fulfilled_quantity, position
       FROM order_line_items WHERE order_id = o.id) li), '[]') AS line_items`;

const TRANSACTIONS = `COALESCE((SELECT json_agg(t ORDER BY t.at, t.id) FROM (
     SELECT id, kind, status, gateway, amount_minor, created_at AS at, ${ts('created_at')}
       FROM order_transactions WHERE order_id = o.id) t), '[]') AS transactions`;

const METAFIELDS = `COALESCE((SELECT json_agg(json_build_array(m.namespace, m.key, m.type, m.value) ORDER BY m.namespace, m.key)
     FROM metafields m WHERE m.store_id = o.store_id AND m.owner_type = 'order' AND m.owner_id = o.id::text), '[]') AS metafields`;

/**
 * The row comes back as one JSON value: the driver parses one column instead of forty, which is most
 * of what a single-order read costs the service beyond its gate.
 */
const FULL_SQL = `SELECT row_to_json(x) AS o FROM (
  SELECT ${ORDER_COLUMNS}, ${CUSTOMER}, ${LINE_ITEMS}, ${TRANSACTIONS}, ${METAFIELDS}
    FROM orders o JOIN stores s ON s.id = o.store_id WHERE o.id = $1::uuid AND o.store_id = $2::uuid) x`;

const FULL_ANY_STORE_SQL = `SELECT row_to_json(x) AS o FROM (
  SELECT ${ORDER_COLUMNS}, ${CUSTOMER}, ${LINE_ITEMS}, ${TRANSACTIONS}, ${METAFIELDS}
    FROM orders o JOIN stores s ON s.id = o.store_id WHERE o.id = $1::uuid) x`;

/** The order with everything the full view shows; null when it is not the store's. */
export async function findOrder(q: Queryable, storeId: string, id: string): Promise<OrderRow | null> {
  const { rows } = await q.query<{ o: OrderRow }>(FULL_SQL, [id, storeId], { name: 'orders_get_full' });
  return rows[0]?.o ?? null;
}

export async function findOrderAnyStore(q: Queryable, id: string): Promise<OrderRow | null> {
  const { rows } = await q.query<{ o: OrderRow }>(FULL_ANY_STORE_SQL, [id], { name: 'orders_get_full_any' });
  return rows[0]?.o ?? null;
}

export interface OrderListFilter {
  /** Merchant statuses (C7.2 mapping of the App API filter). */
  statuses?: string[];
  sinceId?: string;
  ids?: string[];
}

/**
 * Newest first; one row more than asked tells whether a next page exists. Each combination of
 * filters is its own named statement (at most eight), values passed as text so that the same
 * statement serves both drivers (the embedded one writes parameters as SQL literals).
 */
export async function listOrders(q: Queryable, storeId: string, f: OrderListFilter, page: { limit: number; offset: number }) {
  const params: unknown[] = [storeId, page.limit + 1, page.offset];
  const where = ['o.store_id = $1::uuid'];
  let name = 'orders_list';
  if (f.statuses) {
    params.push(f.statuses.join(','));
    where.push(f.statuses.length === 1 ? `o.status = $${params.length}::text` : `o.status = ANY(string_to_array($${params.length}::text, ','))`);
    name += f.statuses.length === 1 ? '_s' : '_sm';
  }
  if (f.sinceId) {
    params.push(f.sinceId);
    where.push(`o.id > $${params.length}::uuid`);
    name += '_since';
  }
  if (f.ids) {
    params.push(f.ids.join(','));
    where.push(`o.id = ANY(string_to_array($${params.length}::text, ',')::uuid[])`);
    name += '_ids';
  }
  const { rows } = await q.query<{ o: OrderRow }>(
    `SELECT row_to_json(x) AS o FROM (
       SELECT ${ORDER_COLUMNS}, o.created_at AS at, ${CUSTOMER}, ${LINE_ITEMS}
         FROM orders o JOIN stores s ON s.id = o.store_id
        WHERE ${where.join(' AND ')}
        ORDER BY o.created_at DESC, o.id DESC LIMIT $2::int OFFSET $3::bigint) x
      ORDER BY x.at DESC, x.id DESC`,
    params,
    { name },
  );
  return { rows: rows.slice(0, page.limit).map((r) => r.o), hasNext: rows.length > page.limit };
}

/** The order row locked for the rest of the transaction: every change of an order starts here. */
export async function lockOrder(q: Queryable, id: string): Promise<{ id: string; store_id: string } | null> {
  const { rows } = await q.query<{ id: string; store_id: string }>('SELECT id, store_id FROM orders WHERE id = $1::uuid FOR UPDATE', [id]);
  return rows[0] ?? null;
}

export async function lineItemsOf(q: Queryable, orderId: string): Promise<LineJson[]> {
  const { rows } = await q.query<LineJson>(
    `SELECT id, product_id, variant_id, product_num_id, variant_num_id, title, variant_title, sku, quantity, price_minor,
            total_discount_minor, properties, requires_shipping, taxable, stock_deducted, fulfilled_quantity, position
       FROM order_line_items WHERE order_id = $1 ORDER BY position`,
    [orderId],
  );
  return rows;
}

export async function insertTransaction(
  q: Queryable,
  t: { id: string; orderId: string; storeId: string; kind: 'sale' | 'refund'; status: 'pending' | 'success'; gateway: string | null; amountMinor: number; now: Date },
): Promise<void> {
  await insertRow(q, 'order_transactions', {
    id: t.id, order_id: t.orderId, store_id: t.storeId, kind: t.kind, status: t.status, gateway: t.gateway, amount_minor: t.amountMinor, created_at: t.now,
  }, { name: true });
}

export async function recordChange(
  q: Queryable,
  c: { id: string; orderId: string; storeId: string; action: string; userId: string | null; staffId: string | null; changes: unknown; now: Date },
): Promise<void> {
  await insertRow(q, 'order_changes', {
    id: c.id, order_id: c.orderId, store_id: c.storeId, action: c.action, user_id: c.userId, staff_id: c.staffId, changes: c.changes ?? {}, created_at: c.now,
  }, { casts: { changes: 'jsonb' } });
}

// ---- writes ------------------------------------------------------------------------------------

/** Casts of the order columns that need one: JSON documents, and the tax rate's exact decimal. */
const ORDER_CASTS = {
  tax_rate: 'numeric', discount: 'jsonb', automatic_discounts: 'jsonb', shipping_address: 'jsonb', billing_address: 'jsonb', shipping_line: 'jsonb', tags: 'jsonb', attributes: 'jsonb',
};

/** An automatic discount of C11.3 as the order keeps it. */
export interface StoredAutomaticDiscount {
  title: string;
  value: string;
  value_type: 'percentage' | 'fixed_amount';
  amount_minor: number;
}

/** A new order row (C7.1), column by column. */
export interface NewOrderRow {
  id: string;
  store_id: string;
  order_number: number;
  customer_id: string | null;
  email: string | null;
  phone: string | null;
  status: string;
  financial_status: string;
  fulfillment_status: string;
  currency: string;
  subtotal_minor: number;
  tax_minor: number;
  /** Decimal text, e.g. `0.0825`. */
  tax_rate: string | null;
  shipping_minor: number;
  discount_minor: number;
  total_minor: number;
  refunded_minor: number;
  paid_minor: number;
  payment_method: string;
  discount_code: string | null;
  discount: unknown;
  automatic_discounts: StoredAutomaticDiscount[];
  shipping_address: unknown;
  billing_address: unknown;
  shipping_line: unknown;
  note: string | null;
  tags: unknown;
  attributes: unknown;
  confirmation_number: string;
  processed_at: Date;
  created_at: Date;
  updated_at: Date;
}

export async function insertOrder(q: Queryable, row: NewOrderRow): Promise<void> {
  await insertRow(q, 'orders', { ...row }, { casts: ORDER_CASTS, name: true });
}

/**
 * `UPDATE orders SET <columns>, updated_at` of one order: every change of an order ends here. JSON
 * columns take their values as objects (null is SQL NULL).
 */
export async function setOrder(q: Queryable, id: string, columns: Record<string, unknown>, now: Date): Promise<void> {
  await updateRow(q, 'orders', { id }, { ...columns, updated_at: now }, { casts: ORDER_CASTS });
}

/**
 * Takes the store's next order number under the store row's lock (numbers are per store and never
 * reused), with the store's currency. Null when there is no such store.
 */
export async function takeOrderNumber(q: Queryable, storeId: string): Promise<{ n: number; currency: string } | null> {
  const { rows } = await q.query<{ n: number; currency: string }>(
    'UPDATE stores SET next_order_number = next_order_number + 1 WHERE id = $1 RETURNING next_order_number - 1 AS n, currency',
    [storeId],
    { name: 'orders_take_number' },
  );
  return rows[0] ?? null;
}

/**
 * The store's greatest order id, read after `takeOrderNumber` has locked the store's counter: in
 * its own statement, whose snapshot sees the order committed by the transaction that held the lock
 * before (a subquery of the UPDATE would not, under READ COMMITTED).
 */
export async function lastOrderId(q: Queryable, storeId: string): Promise<string | null> {
  const { rows } = await q.query<{ id: string }>('SELECT id FROM orders WHERE store_id = $1 ORDER BY id DESC LIMIT 1', [storeId], { name: 'orders_last_id' });
  return rows[0]?.id ?? null;
}

/**
 * The store's orders that used the discount and belong to the customer (by id or email,
 * case-insensitively). An order names the discount by the id in its snapshot: a code can be renamed
 * (`PUT /discounts/{id}`) and a freed code given to another discount, and `usesPerCustomer` counts
 * the uses of the discount, not of a code text (C14.4). Orders taken before the snapshot held the id
 * are matched by their code, as before.
 */
export async function discountUsesBy(q: Queryable, storeId: string, discount: { id: string; code: string }, customer: { id: string | null; email: string | null }): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM orders
      WHERE store_id = $1 AND (discount->>'id' = $5 OR (discount->>'id' IS NULL AND lower(discount_code) = lower($2)))
        AND (customer_id = $3::uuid OR lower(email) = lower($4::text))`,
    [storeId, discount.code, customer.id, customer.email, discount.id],
  );
  return rows[0].n;
}

/** A line item row as written (order-lines.ts builds it). */
export interface NewLineItemRow {
  id: string;
  order_id: string;
  product_id: string | null;
  variant_id: string | null;
  product_num_id: number | null;
  variant_num_id: number | null;
  title: string;
  variant_title: string | null;
  sku: string | null;
  quantity: number;
  price_minor: number;
  total_discount_minor: number;
  properties: unknown;
  requires_shipping: boolean;
  stock_deducted: boolean;
  position: number;
}

export async function insertLineItem(q: Queryable, row: NewLineItemRow): Promise<void> {
  await insertRow(q, 'order_line_items', { ...row }, { casts: { properties: 'jsonb' }, name: true });
}

export async function deleteLineItems(q: Queryable, orderId: string): Promise<void> {
  await q.query('DELETE FROM order_line_items WHERE order_id = $1', [orderId]);
}

/** A refund row (refunds.ts); `refund_line_items` is the JSON list the refunds/create payload shows. */
export interface NewRefundRow {
  id: string;
  order_id: string;
  store_id: string;
  reason: string | null;
  pos: boolean;
  restock: boolean;
  amount_minor: number;
  transaction_id: string;
  refund_line_items: unknown;
  staff_id: string | null;
  created_at: Date;
}

export async function insertRefund(q: Queryable, row: NewRefundRow): Promise<void> {
  await insertRow(q, 'refunds', { ...row }, { casts: { refund_line_items: 'jsonb' } });
}

/** What fulfillments cover of a line item (fulfillments.service.ts keeps it in step). */
export async function setFulfilledQuantity(q: Queryable, lineItemId: string, quantity: number): Promise<void> {
  await q.query('UPDATE order_line_items SET fulfilled_quantity = $2 WHERE id = $1', [lineItemId, quantity]);
}
