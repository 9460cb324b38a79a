// The platform's own side of erasure (issue 6): once every app notified of a customers/redact
// request has completed or failed it, the store's copy of that customer's personal data goes too.
// The customer keeps its row (order history and totals still point at it) with the name, email,
// phone, address and note emptied; the customer's orders lose email, phone and the personal parts
// of their addresses, and so do its checkouts. Totals, line items, transactions and the addresses' region (province and
// country, which tax and sales-by-region accounting need) stay.
import type { Queryable } from '../db/db.js';
import { eraseRunsAtCheckouts } from '../functions/function-runs.repo.js';

/** The address without what identifies a person: only the region is kept. */
const REGION_ONLY = (col: string) => `CASE WHEN ${col} IS NULL OR jsonb_typeof(${col}) <> 'object' THEN NULL ELSE
  jsonb_strip_nulls(jsonb_build_object('province', ${col}->'province', 'province_code', ${col}->'province_code',
    'country', ${col}->'country', 'country_code', ${col}->'country_code')) END`;

export interface RedactionTarget {
  storeId: string;
  customerId: string | null;
  customerEmail: string | null;
  /** The `orders_to_redact` sent to the apps. */
  orderIds: string[];
}

/**
 * Redacts inside the caller's transaction. The customer is the one named by id, else the one with
 * the email; its orders are those linked to it, those sent as `orders_to_redact`, and unlinked
 * orders with its email (orders of a deleted customer keep their email). Returns the counts.
 */
export async function redactCustomer(tx: Queryable, t: RedactionTarget, now: Date): Promise<{ customers: number; orders: number }> {
  const { rows: found } = await tx.query<{ id: string; email: string }>(
    `SELECT id, email FROM customers WHERE store_id = $1
       AND (id = $2::uuid OR ($2::uuid IS NULL AND $3::text IS NOT NULL AND lower(email) = lower($3::text)))`,
    [t.storeId, t.customerId, t.customerEmail],
  );
  const customer = found[0] ?? null;
  const emails = [...new Set([t.customerEmail, customer?.email].filter((e): e is string => !!e).map((e) => e.toLowerCase()))];
  const orders = await tx.query(
    `UPDATE orders SET email = NULL, phone = NULL,
       shipping_address = ${REGION_ONLY('shipping_address')}, billing_address = ${REGION_ONLY('billing_address')}, updated_at = $5
     WHERE store_id = $1 AND (
       ($2::uuid IS NOT NULL AND customer_id = $2::uuid)
       OR id IN (SELECT jsonb_array_elements_text($3::jsonb)::uuid)
       OR (customer_id IS NULL AND lower(email) IN (SELECT jsonb_array_elements_text($4::jsonb))))`,
    [t.storeId, customer?.id ?? null, JSON.stringify(t.orderIds), JSON.stringify(emails), now],
  );
  // The customer's checkouts (C15.1) hold the same personal data: those with its email, and those
  // that made the redacted orders, keep their lines and totals and lose email, address and note
  // (and the hash of the rate request made from the address).
  const checkouts = await tx.query<{ id: string }>(
    `UPDATE checkouts SET email = NULL, note = NULL, shipping_address = ${REGION_ONLY('shipping_address')}, rate_body_sha256 = NULL, updated_at = $4
     WHERE store_id = $1 AND (lower(email) IN (SELECT jsonb_array_elements_text($2::jsonb))
       OR order_id IN (SELECT id FROM orders WHERE store_id = $1 AND id IN (SELECT jsonb_array_elements_text($3::jsonb)::uuid))
       OR ($5::uuid IS NOT NULL AND order_id IN (SELECT id FROM orders WHERE store_id = $1 AND customer_id = $5::uuid)))
     RETURNING id`,
    [t.storeId, JSON.stringify(emails), JSON.stringify(t.orderIds), now, customer?.id ?? null],
  );
  // Function runs at those checkouts (C11.5) hold the checkout in their input, and may echo it in
  // their output: both go (found by the ids the update returns, as the email is gone now).
  await eraseRunsAtCheckouts(tx, t.storeId, checkouts.rows.map((c) => c.id));
  let customers = 0;
  if (customer) {
    // The email is unique per store and required: an address no one can receive (RFC 2606 .invalid).
    const res = await tx.query(
      `UPDATE customers SET name = '', email = 'redacted-' || id::text || '@redacted.invalid', phone = NULL, address = NULL,
         note = NULL, accepts_marketing = false, updated_at = $2 WHERE id = $1`,
      [customer.id, now],
    );
    customers = res.rowCount;
  }
  return { customers, orders: orders.rowCount };
}
