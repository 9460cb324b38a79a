// The platform's own side of erasure (issue 6): once every app notified of a customers/redact
// request has completed or failed it, the store's copy of that customer's personal data goes too.
// The customer keeps its row (order history and totals still point at it) with the name, email,
// phone, address and note emptied; the customer's orders lose email, phone and the personal parts
// of their addresses, and so do its checkouts, with whatever their functions echoed of those
// values in their stored results (and the orders' copies of that text: the shipping line's and the
// automatic discounts' titles). Totals, line items, transactions and the addresses' region
// (province and country, which tax and sales-by-region accounting need) stay. The function runs
// that saw the customer's data go (C11.5), and so do the customer's metafields and the email kept
// of its payment-processor subscriptions (C13).
import type { Queryable } from '../db/db.js';
import { emailKey } from '../email.js';
import { eraseRunsAtCheckouts, eraseRunsNaming } from '../functions/function-runs.repo.js';
import { deleteOwnedMetafields } from '../metafields/metafields.repo.js';
import { erasedValuesPattern, personalAddressValues, REGION_KEYS, scrubFunctionResultsText, scrubOrderText, scrubShippingRate } from './erased-text.js';

/** The address without what identifies a person: only the region (REGION_KEYS) is kept. */
const REGION_ONLY = (col: string) => `CASE WHEN ${col} IS NULL OR jsonb_typeof(${col}) <> 'object' THEN NULL ELSE
  jsonb_strip_nulls(jsonb_build_object(${REGION_KEYS.map((k) => `'${k}', ${col}->'${k}'`).join(', ')})) END`;

/**
 * SET clauses for a checkout's scrubbed text (`scrubbedText`), read from `changes`, a jsonb
 * expression holding only the keys whose text changed: the others keep their value.
 */
const SET_SCRUBBED_TEXT = (changes: string) =>
  `function_results = CASE WHEN ${changes} ? 'function_results' THEN NULLIF(${changes}->'function_results', 'null'::jsonb) ELSE function_results END,
   shipping_rate = CASE WHEN ${changes} ? 'shipping_rate' THEN NULLIF(${changes}->'shipping_rate', 'null'::jsonb) ELSE shipping_rate END`;

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
    [t.storeId, t.customerId, t.customerEmail === null ? null : emailKey(t.customerEmail)],
  );
  const customer = found[0] ?? null;
  const emails = [...new Set([t.customerEmail, customer?.email].filter((e): e is string => !!e).map(emailKey))];
  // The orders are read first (locked): what the checkout's functions and shipping apps echoed of the
  // buyer was copied into the order at completion (the shipping line's title, the automatic
  // discounts' titles), and goes with the values the erasure empties, read before they go.
  const { rows: erasedOrders } = await tx.query<ErasedOrder>(
    `SELECT id, email, phone, shipping_address, billing_address, shipping_line, automatic_discounts FROM orders
     WHERE store_id = $1 AND (
       ($2::uuid IS NOT NULL AND customer_id = $2::uuid)
       OR id IN (SELECT jsonb_array_elements_text($3::jsonb)::uuid)
       OR (customer_id IS NULL AND lower(email) IN (SELECT jsonb_array_elements_text($4::jsonb))))
     ORDER BY id FOR UPDATE`,
    [t.storeId, customer?.id ?? null, JSON.stringify(t.orderIds), JSON.stringify(emails)],
  );
  const orders = await tx.query(
    `UPDATE orders o SET email = NULL, phone = NULL,
       shipping_address = ${REGION_ONLY('o.shipping_address')}, billing_address = ${REGION_ONLY('o.billing_address')}, updated_at = $3,
       shipping_line = CASE WHEN s.value ? 'shipping_line' THEN NULLIF(s.value->'shipping_line', 'null'::jsonb) ELSE o.shipping_line END,
       automatic_discounts = CASE WHEN s.value ? 'automatic_discounts' THEN s.value->'automatic_discounts' ELSE o.automatic_discounts END
     FROM jsonb_array_elements($2::jsonb) AS s(value)
     WHERE o.store_id = $1 AND o.id = (s.value->>'id')::uuid`,
    [t.storeId, JSON.stringify(erasedOrders.map((o) => ({ id: o.id, ...scrubOrderText(o, erasedValuesPattern(orderErasedValues(o, emails))) }))), now],
  );
  // What the platform keeps of the customer's payment-processor subscriptions (C13): the email,
  // which later subscription events (they carry none) would otherwise send to the apps again.
  await tx.query(
    `UPDATE payment_subscriptions SET customer_email = NULL, updated_at = $4
      WHERE store_id = $1 AND customer_email IS NOT NULL
        AND (lower(customer_email) IN (SELECT jsonb_array_elements_text($2::jsonb)) OR order_id IN (SELECT jsonb_array_elements_text($3::jsonb)))`,
    [t.storeId, JSON.stringify(emails), JSON.stringify(erasedOrders.map((o) => o.id)), now],
  );
  // Stripe events held until their subscription's create arrives (stripe.service.ts) keep the
  // email they came with, to be sent when released: it goes as from the subscription itself. A
  // held event that named no store may be this store's: its email goes too (released, the event
  // takes the email its create recorded, so erasing one of another store's loses nothing).
  await tx.query(
    `UPDATE stripe_held_events SET facts = jsonb_set(facts, '{customerEmail}', 'null'::jsonb)
      WHERE (facts->>'storeId' = $1::text OR facts->>'storeId' IS NULL) AND facts->>'customerEmail' IS NOT NULL
        AND (lower(facts->>'customerEmail') IN (SELECT jsonb_array_elements_text($2::jsonb)) OR facts->>'orderId' IN (SELECT jsonb_array_elements_text($3::jsonb)))`,
    [t.storeId, JSON.stringify(emails), JSON.stringify(erasedOrders.map((o) => o.id))],
  );
  // The customer's checkouts (C15.1) hold the same personal data: those with its email, and those
  // that made the redacted orders, keep their lines and totals and lose email, address and note
  // (and the hash of the rate request made from the address). What their functions (and shipping
  // apps) wrote from those values goes too (erased-text.ts): the values are read before they go.
  const { rows: checkouts } = await tx.query<ErasedCheckout>(
    `SELECT id, email, note, shipping_address, line_items, function_results, shipping_rate FROM checkouts
     WHERE store_id = $1 AND (lower(email) IN (SELECT jsonb_array_elements_text($2::jsonb))
       OR order_id IN (SELECT id FROM orders WHERE store_id = $1 AND id IN (SELECT jsonb_array_elements_text($3::jsonb)::uuid))
       OR ($4::uuid IS NOT NULL AND order_id IN (SELECT id FROM orders WHERE store_id = $1 AND customer_id = $4::uuid)))
     ORDER BY id FOR UPDATE`,
    [t.storeId, JSON.stringify(emails), JSON.stringify(t.orderIds), customer?.id ?? null],
  );
  if (checkouts.length) {
    await tx.query(
      `UPDATE checkouts c SET email = NULL, note = NULL, shipping_address = ${REGION_ONLY('c.shipping_address')}, rate_body_sha256 = NULL, updated_at = $3,
         ${SET_SCRUBBED_TEXT('s.value')}
       FROM jsonb_array_elements($2::jsonb) AS s(value)
       WHERE c.store_id = $1 AND c.id = (s.value->>'id')::uuid`,
      [t.storeId, JSON.stringify(checkouts.map((c) => ({ id: c.id, ...withoutPersonalText(c, emails) }))), now],
    );
  }
  // Function runs at those checkouts (C11.5) hold the checkout in their input, and may echo it in
  // their output: both go (found by the ids read above, as the email is gone now).
  await eraseRunsAtCheckouts(tx, t.storeId, checkouts.map((c) => c.id));
  // And the runs made while a checkout had the email, at checkouts whose email changed since.
  await eraseRunsNaming(tx, t.storeId, emails);
  await scrubFunctionResults(tx, t.storeId, emails, now);
  let customers = 0;
  if (customer) {
    // The email is unique per store and required: an address no one can receive (RFC 2606 .invalid).
    const res = await tx.query(
      `UPDATE customers SET name = '', first_name_length = NULL, email = 'redacted-' || id::text || '@redacted.invalid', phone = NULL, address = NULL,
         note = NULL, accepts_marketing = false, updated_at = $2 WHERE id = $1`,
      [customer.id, now],
    );
    customers = res.rowCount;
    // Apps and merchants keep what they like about a customer in metafields: personal data as
    // likely as the note. They go whole, as when the customer is deleted (docs/decisions.md, GDPR).
    await deleteOwnedMetafields(tx, t.storeId, 'customer', customer.id, now);
  }
  return { customers, orders: orders.rowCount };
}

interface ErasedOrder {
  id: string;
  email: string | null;
  phone: string | null;
  shipping_address: unknown;
  billing_address: unknown;
  shipping_line: unknown;
  automatic_discounts: unknown;
}

/** The values the erasure empties on one order (its email, phone, the addresses but their region), and the redacted emails. */
function orderErasedValues(o: ErasedOrder, emails: readonly string[]): (string | null)[] {
  return [o.email, o.phone, ...emails, ...personalAddressValues(o.shipping_address), ...personalAddressValues(o.billing_address)];
}

interface ErasedCheckout {
  id: string;
  email: string | null;
  note: string | null;
  shipping_address: Record<string, unknown> | null;
  line_items: unknown;
  function_results: unknown;
  shipping_rate: unknown;
}

/** The checkout's line ids: in a discount's `lineIds` they are codes, not text. */
function lineIdsOf(lineItems: unknown): Set<string> {
  const ids = new Set<string>();
  if (Array.isArray(lineItems)) for (const l of lineItems) if (l && typeof l === 'object' && typeof l.id === 'string') ids.add(l.id);
  return ids;
}

/**
 * An erased checkout's function results and chosen rate without the values the erasure empties
 * (its email, note, and the personal parts of its address) nor the redacted emails: only the keys
 * whose text changed, for the UPDATE to set.
 */
function withoutPersonalText(c: ErasedCheckout, emails: readonly string[]): { function_results?: unknown; shipping_rate?: unknown } {
  return scrubbedText(c, erasedValuesPattern([c.email, c.note, ...emails, ...personalAddressValues(c.shipping_address)]));
}

function scrubbedText(c: Pick<ErasedCheckout, 'line_items' | 'function_results' | 'shipping_rate'>, pattern: RegExp | null) {
  const out: { function_results?: unknown; shipping_rate?: unknown } = {};
  if (!pattern) return out;
  const results = scrubFunctionResultsText(c.function_results, pattern, lineIdsOf(c.line_items));
  if (JSON.stringify(results) !== JSON.stringify(c.function_results)) out.function_results = results;
  const rate = scrubShippingRate(c.shipping_rate, pattern);
  if (JSON.stringify(rate) !== JSON.stringify(c.shipping_rate)) out.shipping_rate = rate;
  return out;
}

/**
 * A checkout's `function_results` (C11.4: what its cart functions last gave) are the functions'
 * outputs, and a function may put the buyer's email into a validation error, a payment method's
 * title or a discount's message (and a delivery function into the chosen rate's title). The
 * store's checkouts whose results or chosen rate name one of `emails` (any case; whatever the
 * checkout's email is now) get every occurrence replaced in that text (erased-text.ts). Only the
 * text changes: the payment methods, errors and discounts stay, so the checkout's totals and its
 * GET stay as they were. The next change or completion runs the functions again anyway.
 */
async function scrubFunctionResults(tx: Queryable, storeId: string, emails: readonly string[], now: Date): Promise<void> {
  const pattern = erasedValuesPattern(emails);
  if (!pattern) return;
  // Searched as jsonb text, where a string is JSON-escaped; the candidates are then scrubbed as values.
  const { rows } = await tx.query<{ id: string } & Pick<ErasedCheckout, 'line_items' | 'function_results' | 'shipping_rate'>>(
    `SELECT id, line_items, function_results, shipping_rate FROM checkouts
      WHERE store_id = $1 AND (function_results IS NOT NULL OR shipping_rate IS NOT NULL)
        AND EXISTS (SELECT 1 FROM unnest($2::text[]) AS n(json)
                     WHERE strpos(lower(function_results::text), lower(n.json)) > 0 OR strpos(lower(shipping_rate::text), lower(n.json)) > 0)
      ORDER BY id FOR UPDATE`,
    [storeId, emails.map((e) => JSON.stringify(e).slice(1, -1))],
  );
  const changed = rows.map((row) => ({ id: row.id, ...scrubbedText(row, pattern) })).filter((c) => 'function_results' in c || 'shipping_rate' in c);
  if (!changed.length) return;
  await tx.query(
    `UPDATE checkouts c SET ${SET_SCRUBBED_TEXT('s.value')}, updated_at = $3
       FROM jsonb_array_elements($2::jsonb) AS s(value)
      WHERE c.store_id = $1 AND c.id = (s.value->>'id')::uuid`,
    [storeId, JSON.stringify(changed), now],
  );
}
