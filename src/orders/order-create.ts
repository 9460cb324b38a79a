// C7.1 `POST /orders`: an order taken by the merchant. One transaction locks the store's order
// counter, checks the discount as at checkout, takes stock, creates a new customer, and writes
// orders/create (and orders/paid when it is paid at once) in the outbox (C8.1).
import type { Deps } from '../deps.js';
import type { Queryable, TransactionOptions } from '../db/db.js';
import { randomBytes } from 'node:crypto';
import { badRequest } from '../http/errors.js';
import { uuidv7, uuidv7After } from '../ids.js';
import { parseMoney } from '../money.js';
import { emit } from '../outbox/emit.js';
import { isUniqueViolation } from '../db/errors.js';
import { fieldError } from '../content/fields.js';
import { createCustomerInTx, readCustomerPatch } from '../customers/customers.service.js';
import { findCustomerIdByEmail, lockCustomerEmail } from '../customers/customers.repo.js';
import { isActiveAt } from '../discounts/discounts.service.js';
import { countDiscountUse, lockDiscountByCode, type DiscountRow } from '../discounts/discounts.repo.js';
import { assertFitsCurrency, PAID_AT_ONCE, readNewOrder, type NewOrderInput } from './order-input.js';
import { hundredthsStep } from '../currencies.js';
import { merchantOrderRecord, orderCreatePayload, orderView } from './order-view.js';
import { discountUsesBy, findOrder, insertOrder, insertTransaction, lastOrderId, takeOrderNumber } from './orders.repo.js';
import { computeTotals, eligible, formatTaxRate, percentToBp, TOTAL_TOO_LARGE, totalsTooLarge, type AppliedDiscount } from './pricing.js';
import { deductStock } from './stock.js';
import { insertLines, resolveLines, stockLines } from './order-lines.js';
import { withPlaceNames } from './address-names.js';

// ---- discounts at checkout ---------------------------------------------------------------------

/**
 * C7.1: a discount code checked as at checkout, under the discount's row lock (so that the last use
 * cannot be taken twice): it exists in the store, is active on the service clock (`isActiveAt`, the
 * list filter's rule, both boundary instants included), the order reaches its minimum, it has uses
 * left in total and for this customer, and it applies to a product of the order. The use is counted.
 */
export async function checkDiscountCode(
  tx: Queryable,
  storeId: string,
  code: string,
  ctx: { itemsMinor: number; lines: { productId: string | null }[]; customerId: string | null; email: string | null; now: Date },
  /**
   * `checkout`: a storefront checkout's code, whose buyer may give the email after it (C15.1).
   * 'sent' (the code as the buyer sends it): without an email the per-customer limit is not
   * checked yet; 'shown' (the checkout as shown): it is a problem until the email comes.
   */
  opts: { lock?: boolean; checkout?: 'sent' | 'shown' } = { lock: false },
): Promise<AppliedDiscount & { id: string }> {
  const d = await lockDiscountByCode(tx, storeId, code, opts);
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
    if (!ctx.customerId && !ctx.email) {
      if (opts.checkout === 'sent') return applicable(d, d.type, ctx, refuse);
      throw refuse(opts.checkout === 'shown' ? 'is limited per customer: it applies once the checkout has an email' : 'is limited per customer and the order has no customer email');
    }
    const used = await discountUsesBy(tx, storeId, d, { id: ctx.customerId, email: ctx.email });
    if (used >= d.uses_per_customer) throw refuse('has already been used by this customer as often as allowed');
  }
  return applicable(d, d.type, ctx, refuse);
}

/** The discount as it applies to the order's lines; a refusal when it applies to none of them. */
function applicable(d: DiscountRow, type: AppliedDiscount['type'], ctx: { lines: { productId: string | null }[] }, refuse: (problem: string) => Error): AppliedDiscount & { id: string } {
  const applied: AppliedDiscount = {
    code: d.code,
    type,
    percentBp: type === 'Percentage' ? percentToBp(d.discount_percentage) : null,
    amountMinor: type === 'Flat' ? parseMoney(d.discount_amount) : null,
    applyOn: d.apply_on_products ?? [],
  };
  if (!ctx.lines.some((l) => eligible(l, applied))) throw refuse('does not apply to any product of the order');
  return { ...applied, id: d.id };
}

/**
 * The discount code checked under its row lock, and its use counted: an order is being taken. The
 * order keeps the discount's id in its snapshot (`orders.discount`), so a customer's uses are those
 * of this discount whatever its code is called later (discountUsesBy).
 */
async function applyCheckoutDiscount(tx: Queryable, storeId: string, code: string, ctx: Parameters<typeof checkDiscountCode>[3]): Promise<AppliedDiscount & { id: string }> {
  const applied = await checkDiscountCode(tx, storeId, code, ctx, { lock: true });
  await countDiscountUse(tx, applied.id);
  return applied;
}

// ---- create ------------------------------------------------------------------------------------

const CONFIRMATION_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
function confirmationNumber(): string {
  const bytes = randomBytes(9);
  return Array.from(bytes, (b) => CONFIRMATION_ALPHABET[b % CONFIRMATION_ALPHABET.length]).join('');
}

/**
 * How an order's transaction runs (`POST /orders` and checkout completion): its statements planned
 * once, not at every order (src/db/db.ts `planOnce`; the order's full view was re-planned each time).
 */
export const ORDER_TRANSACTION: TransactionOptions = { planOnce: true };

/** C7.1 `POST /orders`: the merchant record of the new order. */
export async function createOrder(deps: Deps, storeId: string, body: unknown) {
  const input = readNewOrder(body);
  return merchantOrderRecord(await retryingNewCustomer(() => deps.db.transaction((tx) => placeOrderInTx(deps, tx, storeId, input), ORDER_TRANSACTION)));
}

/**
 * Runs a transaction that may create a customer: a new customer email raced by another request
 * fails on the unique index, and one retry then finds the customer the other request created.
 */
export async function retryingNewCustomer<T>(transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (err) {
      if (attempt < 2 && isUniqueViolation(err, 'customers_store_email_key')) continue;
      throw err;
    }
  }
}

/** The automatic discounts' total per line (C11.3), in the order of the order's lines. */
function automaticLineMinor(input: NewOrderInput, lineCount: number): number[] {
  const sums = new Array<number>(lineCount).fill(0);
  for (const a of input.automaticDiscounts ?? []) a.lineAmountsMinor.forEach((n, i) => { if (i < lineCount) sums[i] += n; });
  return sums;
}

/**
 * Takes the order inside the caller's transaction and returns its row: `POST /orders` (C7.1) and
 * a checkout's completion (C15.1) both come here, so an order is taken one way only.
 */
export async function placeOrderInTx(deps: Deps, tx: Queryable, storeId: string, input: NewOrderInput) {
  // The store's order counter, locked to the commit: order numbers are per store and never reused,
  // and the order's id and time are taken under it, so both follow commit order (uuidv7After).
  const store = await takeOrderNumber(tx, storeId);
  if (!store) throw badRequest('storeId names no store');
  const now = deps.clock.now();
  const id = uuidv7After(await lastOrderId(tx, storeId), now.getTime());
  const orderNumber = store.n;
  const currency = input.currency ?? store.currency;
  assertFitsCurrency(currency, input.lines, input.shippingMinor);
  const lines = await resolveLines(tx, storeId, input.lines, currency);

  // The names beside the codes (address-names.ts), whoever gave the address: a merchant's order, a
  // buyer's checkout (also one changed before the names were filled in).
  const shippingAddress = input.shippingAddress && withPlaceNames(input.shippingAddress);
  let customerId: string | null = null;
  const customerEmail = input.customer?.email ?? input.email;
  if (customerEmail) {
    customerId = await findCustomerIdByEmail(tx, storeId, customerEmail, { forReference: true });
    if (!customerId) {
      // A customer created meanwhile by another request (a create, an email change) is this
      // order's: once the email is ours, look again (customers.repo.ts lockCustomerEmail).
      await lockCustomerEmail(tx, storeId, customerEmail);
      customerId = await findCustomerIdByEmail(tx, storeId, customerEmail, { forReference: true });
    }
    if (!customerId) {
      // The new customer's address is the order's shipping address unless the body gives one.
      const raw = { ...(shippingAddress ? { addresses: [shippingAddress] } : {}), ...(input.customer?.raw ?? {}), email: customerEmail };
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
    automaticLineMinor(input, lines.length),
  );
  if (totalsTooLarge(totals)) throw badRequest(TOTAL_TOO_LARGE);
  await deductStock(tx, stockLines(lines));

  const paid = (PAID_AT_ONCE as readonly string[]).includes(input.paymentMethod);
  await insertOrder(tx, {
    id,
    store_id: storeId,
    order_number: orderNumber,
    customer_id: customerId,
    email: input.email ?? customerEmail ?? null,
    phone: input.phone ?? null,
    status: paid ? 'paid' : 'pending',
    financial_status: paid ? 'paid' : 'pending',
    fulfillment_status: 'unfulfilled',
    currency,
    subtotal_minor: totals.subtotalMinor,
    tax_minor: totals.taxMinor,
    tax_rate: input.taxRatePpm === null ? null : formatTaxRate(input.taxRatePpm),
    shipping_minor: totals.shippingMinor,
    discount_minor: totals.totalDiscountMinor,
    total_minor: totals.totalMinor,
    refunded_minor: 0,
    paid_minor: paid ? totals.totalMinor : 0,
    payment_method: input.paymentMethod,
    discount_code: discount?.code ?? null,
    discount: discount ?? null,
    automatic_discounts: (input.automaticDiscounts ?? []).map((a) => ({
      title: a.title, value: a.value, value_type: a.valueType, amount_minor: a.lineAmountsMinor.reduce((s, x) => s + x, 0),
    })),
    shipping_address: shippingAddress,
    billing_address: input.billingAddress ? withPlaceNames(input.billingAddress) : shippingAddress,
    shipping_line: input.shippingLine ?? null,
    note: input.note ?? null,
    tags: input.tags,
    attributes: input.attributes,
    confirmation_number: confirmationNumber(),
    processed_at: now,
    created_at: now,
    updated_at: now,
  });
  await insertLines(tx, id, lines, totals.lines.map((l) => l.discountMinor), now);
  if (paid) {
    await insertTransaction(tx, { id: uuidv7(now.getTime()), orderId: id, storeId, kind: 'sale', status: 'success', gateway: input.paymentMethod, amountMinor: totals.totalMinor, now });
  }
  const row = (await findOrder(tx, storeId, id))!;
  await emit(tx, { storeId, topic: 'orders/create', payload: orderCreatePayload(row), now });
  if (paid) await emit(tx, { storeId, topic: 'orders/paid', payload: orderView(row, deps.config.baseUrl, 'withheld'), now });
  return row;
}

