// C7.1 `POST /orders`: an order taken by the merchant. One transaction locks the store's order
// counter, checks the discount as at checkout, takes stock, creates a new customer, and writes
// orders/create (and orders/paid when it is paid at once) in the outbox (C8.1).
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { randomBytes } from 'node:crypto';
import { badRequest } from '../http/errors.js';
import { uuidv7 } from '../ids.js';
import { parseMoney } from '../money.js';
import { emit } from '../outbox/emit.js';
import { isUniqueViolation } from '../db/errors.js';
import { fieldError } from '../content/fields.js';
import { createCustomerInTx, readCustomerPatch } from '../customers/customers.service.js';
import { isActiveAt } from '../discounts/discounts.service.js';
import type { DiscountRow } from '../discounts/discounts.repo.js';
import { assertFitsCurrency, PAID_AT_ONCE, readNewOrder } from './order-input.js';
import { hundredthsStep } from '../currencies.js';
import { merchantOrderRecord, orderCreatePayload, orderView } from './order-view.js';
import { findOrder, insertTransaction } from './orders.repo.js';
import { computeTotals, eligible, formatTaxRate, percentToBp, type AppliedDiscount } from './pricing.js';
import { deductStock } from './stock.js';
import { insertLines, resolveLines, stockLines } from './order-lines.js';

// ---- discounts at checkout ---------------------------------------------------------------------

/**
 * C7.1: a discount code checked as at checkout, under the discount's row lock (so that the last use
 * cannot be taken twice): it exists in the store, is active on the service clock (`isActiveAt`, the
 * list filter's rule, both boundary instants included), the order reaches its minimum, it has uses
 * left in total and for this customer, and it applies to a product of the order. The use is counted.
 */
async function applyCheckoutDiscount(
  tx: Queryable,
  storeId: string,
  code: string,
  ctx: { itemsMinor: number; lines: { productId: string | null }[]; customerId: string | null; email: string | null; now: Date },
): Promise<AppliedDiscount> {
  const { rows } = await tx.query<DiscountRow>('SELECT * FROM discounts WHERE store_id = $1 AND lower(code) = lower($2) FOR UPDATE', [storeId, code]);
  const d = rows[0];
  const refuse = (problem: string) => fieldError('discount_code', problem);
  if (!d) throw refuse('is not a discount code of this store');
  if (!isActiveAt(d, ctx.now)) {
    if (d.status !== 'Active') throw refuse('is disabled');
    throw refuse(d.start_date.getTime() > ctx.now.getTime() ? 'is not active yet' : 'has expired');
  }
  if (d.type !== 'Percentage' && d.type !== 'Flat' && d.type !== 'FreeShipping') throw refuse(`is a ${d.type} discount, which merchant orders cannot apply`);
  const minimum = parseMoney(d.min_order_total) ?? 0;
  if (ctx.itemsMinor < minimum) throw refuse(`needs an order total of at least ${(minimum / 100).toFixed(2)}`);
  if (d.total_coupons > 0 && d.used_count >= d.total_coupons) throw refuse('has no uses left');
  if (d.uses_per_customer !== null) {
    if (!ctx.customerId && !ctx.email) throw refuse('is limited per customer and the order has no customer email');
    const { rows: used } = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM orders
        WHERE store_id = $1 AND lower(discount_code) = lower($2) AND (customer_id = $3::uuid OR lower(email) = lower($4::text))`,
      [storeId, d.code, ctx.customerId, ctx.email],
    );
    if (used[0].n >= d.uses_per_customer) throw refuse('has already been used by this customer as often as allowed');
  }
  const applied: AppliedDiscount = {
    code: d.code,
    type: d.type,
    percentBp: d.type === 'Percentage' ? percentToBp(d.discount_percentage) : null,
    amountMinor: d.type === 'Flat' ? parseMoney(d.discount_amount) : null,
    applyOn: d.apply_on_products ?? [],
  };
  if (!ctx.lines.some((l) => eligible(l, applied))) throw refuse('does not apply to any product of the order');
  await tx.query('UPDATE discounts SET used_count = used_count + 1 WHERE id = $1', [d.id]);
  return applied;
}

// ---- create ------------------------------------------------------------------------------------

const CONFIRMATION_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
function confirmationNumber(): string {
  const bytes = randomBytes(9);
  return Array.from(bytes, (b) => CONFIRMATION_ALPHABET[b % CONFIRMATION_ALPHABET.length]).join('');
}

async function existingCustomerId(tx: Queryable, storeId: string, email: string): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>('SELECT id FROM customers WHERE store_id = $1 AND lower(email) = lower($2)', [storeId, email]);
  return rows[0]?.id ?? null;
}

/** C7.1 `POST /orders`: the merchant record of the new order. */
export async function createOrder(deps: Deps, storeId: string, body: unknown) {
  const input = readNewOrder(body);
  // A new customer email raced by another request: the unique index decides, and one retry then
  // finds the customer the other request created.
  for (let attempt = 1; ; attempt++) {
    try {
      return await deps.db.transaction((tx) => createOrderInTx(deps, tx, storeId, input));
    } catch (err) {
      if (attempt < 2 && isUniqueViolation(err, 'customers_store_email_key')) continue;
      throw err;
    }
  }
}

async function createOrderInTx(deps: Deps, tx: Queryable, storeId: string, input: ReturnType<typeof readNewOrder>) {
  const now = deps.clock.now();
  // The store's order counter, locked: order numbers are per store and never reused.
  const { rows: stores } = await tx.query<{ n: number; currency: string }>(
    'UPDATE stores SET next_order_number = next_order_number + 1 WHERE id = $1 RETURNING next_order_number - 1 AS n, currency',
    [storeId],
  );
  if (!stores.length) throw badRequest('storeId names no store');
  const orderNumber = stores[0].n;
  const currency = input.currency ?? stores[0].currency;
  assertFitsCurrency(currency, input.lines, input.shippingMinor);
  const lines = await resolveLines(tx, storeId, input.lines);

  let customerId: string | null = null;
  const customerEmail = input.customer?.email ?? input.email;
  if (customerEmail) {
    customerId = await existingCustomerId(tx, storeId, customerEmail);
    if (!customerId) {
      // The new customer's address is the order's shipping address unless the body gives one.
      const raw = { addresses: [input.shippingAddress], ...(input.customer?.raw ?? {}), email: customerEmail };
      customerId = (await createCustomerInTx(tx, storeId, readCustomerPatch(raw, true), now)).id;
    }
  }

  const itemsMinor = lines.reduce((s, l) => s + l.unitMinor * l.input.quantity, 0);
  const discount = input.discountCode
    ? await applyCheckoutDiscount(tx, storeId, input.discountCode, { itemsMinor, lines, customerId, email: input.email ?? customerEmail, now })
    : null;
  const totals = computeTotals(
    lines.map((l) => ({ productId: l.productId, unitMinor: l.unitMinor, quantity: l.input.quantity, taxable: true })),
    input.shippingMinor,
    discount,
    input.taxRatePpm,
    hundredthsStep(currency),
  );
  await deductStock(tx, stockLines(lines));

  const paid = (PAID_AT_ONCE as readonly string[]).includes(input.paymentMethod);
  const id = uuidv7(now.getTime());
  await tx.query(
    `INSERT INTO orders (id, store_id, order_number, customer_id, email, phone, status, financial_status, fulfillment_status, currency,
       subtotal_minor, tax_minor, tax_rate, shipping_minor, discount_minor, total_minor, refunded_minor, paid_minor, payment_method,
       discount_code, discount, shipping_address, billing_address, shipping_line, note, tags, attributes, confirmation_number,
       processed_at, created_at, updated_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,'unfulfilled',$9,$10,$11,$12::numeric,$13,$14,$15,0,$16,$17,$18,$19::jsonb,$20::jsonb,$21::jsonb,$22::jsonb,
             $23,$24::jsonb,$25::jsonb,$26,$27,$27,$27)`,
    [
      id, storeId, orderNumber, customerId, input.email ?? customerEmail, input.phone, paid ? 'paid' : 'pending', paid ? 'paid' : 'pending',
      currency, totals.subtotalMinor, totals.taxMinor, input.taxRatePpm === null ? null : formatTaxRate(input.taxRatePpm),
      totals.shippingMinor, totals.totalDiscountMinor, totals.totalMinor, paid ? totals.totalMinor : 0, input.paymentMethod,
      discount?.code ?? null, discount ? JSON.stringify(discount) : null, JSON.stringify(input.shippingAddress),
      JSON.stringify(input.billingAddress ?? input.shippingAddress), input.shippingLine ? JSON.stringify(input.shippingLine) : null,
      input.note, JSON.stringify(input.tags), JSON.stringify(input.attributes), confirmationNumber(), now,
    ],
  );
  await insertLines(tx, id, lines, totals.lines.map((l) => l.discountMinor), now);
  if (paid) {
    await insertTransaction(tx, { id: uuidv7(now.getTime()), orderId: id, storeId, kind: 'sale', status: 'success', gateway: input.paymentMethod, amountMinor: totals.totalMinor, now });
  }
  const row = (await findOrder(tx, storeId, id))!;
  await emit(tx, { storeId, topic: 'orders/create', payload: orderCreatePayload(row), now });
  if (paid) await emit(tx, { storeId, topic: 'orders/paid', payload: orderView(row, deps.config.baseUrl), now });
  return merchantOrderRecord(row);
}

