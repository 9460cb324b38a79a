// The platform's own side of erasure (issue 6): once every app notified of a customers/redact
// request has completed or failed it, the store's copy of that customer's personal data goes too.
// The customer keeps its row (order history and totals still point at it) with the name, email,
// phone, address and note emptied; the customer's orders lose email, phone and the personal parts
// of their addresses, and so do its checkouts. Totals, line items, transactions and the addresses' region (province and
// country, which tax and sales-by-region accounting need) stay. The function runs that saw the
// customer's data go (C11.5), and so do the customer's metafields.
import type { Queryable } from '../db/db.js';
import { eraseRunsAtCheckouts, eraseRunsNaming } from '../functions/function-runs.repo.js';
import { deleteOwnedMetafields } from '../metafields/metafields.repo.js';

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
  // And the runs made while a checkout had the email, at checkouts whose email changed since.
  await eraseRunsNaming(tx, t.storeId, emails);
  await scrubFunctionResults(tx, t.storeId, emails, now);
  let customers = 0;
  if (customer) {
    // The email is unique per store and required: an address no one can receive (RFC 2606 .invalid).
    const res = await tx.query(
      `UPDATE customers SET name = '', email = 'redacted-' || id::text || '@redacted.invalid', phone = NULL, address = NULL,
         note = NULL, accepts_marketing = false, updated_at = $2 WHERE id = $1`,
      [customer.id, now],
    );
    customers = res.rowCount;
    // Apps and merchants keep what they like about a customer in metafields: personal data as
    // likely as the note. They go whole, as when the customer is deleted (docs/decisions.md, GDPR).
    await deleteOwnedMetafields(tx, t.storeId, 'customer', customer.id);
  }
  return { customers, orders: orders.rowCount };
}

/** What an erased email is replaced with in the text of a checkout's function results. */
const ERASED = '[redacted]';

/**
 * A checkout's `function_results` (C11.4: what its cart functions last gave) are the functions'
 * outputs, and a function may put the buyer's email into a validation error, a payment method's
 * title or a discount's message. The store's checkouts whose results name one of `emails` (any
 * case; whatever the checkout's email is now) get every occurrence replaced in those strings. Only
 * the text changes: the payment methods, errors and discounts stay, so the checkout's totals and
 * its GET stay as they were. The next change or completion runs the functions again anyway.
 */
async function scrubFunctionResults(tx: Queryable, storeId: string, emails: readonly string[], now: Date): Promise<void> {
  if (!emails.length) return;
  // Searched as jsonb text, where a string is JSON-escaped; the candidates are then scrubbed as values.
  const { rows } = await tx.query<{ id: string; function_results: unknown }>(
    `SELECT id, function_results FROM checkouts
      WHERE store_id = $1 AND function_results IS NOT NULL
        AND EXISTS (SELECT 1 FROM unnest($2::text[]) AS n(json) WHERE strpos(lower(function_results::text), lower(n.json)) > 0)
      ORDER BY id FOR UPDATE`,
    [storeId, emails.map((e) => JSON.stringify(e).slice(1, -1))],
  );
  const pattern = new RegExp(emails.map((e) => e.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gi');
  for (const row of rows) {
    const scrubbed = withoutMatches(row.function_results, pattern);
    if (JSON.stringify(scrubbed) === JSON.stringify(row.function_results)) continue;
    await tx.query('UPDATE checkouts SET function_results = $2::jsonb, updated_at = $3 WHERE id = $1', [row.id, JSON.stringify(scrubbed), now]);
  }
}

/** `value` with `pattern` replaced by ERASED in every string it holds (keys are the functions' fixed names). */
function withoutMatches(value: unknown, pattern: RegExp): unknown {
  if (typeof value === 'string') return value.replace(pattern, ERASED);
  if (Array.isArray(value)) return value.map((v) => withoutMatches(v, pattern));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutMatches(v, pattern)]));
  return value;
}
