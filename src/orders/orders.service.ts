// The rules of orders taken and changed by the merchant (C7.1, C7.2; app-api.md Order status). Each
// change runs in one transaction that starts by locking the order (or, for a new order, the store's
// order counter), and writes its events there too (C8.1): orders/create; orders/paid when the order
// becomes paid; orders/updated on every change of an existing order; orders/cancelled when it
// becomes canceled.
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { randomBytes } from 'node:crypto';
import { badRequest, forbidden, notFound } from '../http/errors.js';
import { isUuid, uuidv7 } from '../ids.js';
import { parseMoney } from '../money.js';
import { emit } from '../outbox/emit.js';
import { isUniqueViolation } from '../slug.js';
import { fieldError } from '../content/fields.js';
import { createCustomerInTx, readCustomerPatch, splitName } from '../customers/customers.service.js';
import { isActiveAt } from '../discounts/discounts.service.js';
import type { DiscountRow } from '../discounts/discounts.repo.js';
import { findProduct } from '../catalog/products.repo.js';
import { findVariantAnyStore } from '../catalog/variants.repo.js';
import {
  CASH_OR_OFFLINE, PAID_AT_ONCE, readNewOrder, readOrderUpdate, type LineInput, type OrderUpdateInput,
} from './order-input.js';
import { merchantOrderRecord, orderCreatePayload, orderView, shippingOriginalMinor, type OrderRow } from './order-view.js';
import { findOrder, findOrderAnyStore, insertTransaction, lockOrder, recordChange } from './orders.repo.js';
import { computeTotals, eligible, formatTaxRate, parseTaxRate, percentToBp, type AppliedDiscount } from './pricing.js';
import { deductStock, restockOrder, type StockLine } from './stock.js';

/** Who is acting, for the audit trail and C7.1's store check. */
export interface Actor {
  userId: string | null;
  /** Throws 403 when the caller may not touch a resource of that store. */
  assertAccess(storeId: string): void;
}

/** Order statuses from which a fulfillment moves the order on (app-api.md Order status). */
export const MOVABLE_STATUSES = ['pending', 'confirmed', 'paid', 'partial', 'shipped'];

export const orderNotFound = () => notFound('Order not found');

// ---- line items --------------------------------------------------------------------------------

export interface ResolvedLine {
  input: LineInput;
  productId: string | null;
  variantId: string | null;
  productNumId: number | null;
  variantNumId: number | null;
  title: string;
  variantTitle: string | null;
  sku: string | null;
  unitMinor: number;
}

const variantTitle = (v: { name: string; value: string }) => [v.name, v.value].filter(Boolean).join(' / ') || 'Default';
/** The selling price of a variant (product-view.ts: the lower discount price when there is one). */
const sellingPrice = (v: { price_minor: number; discount_price_minor: number | null }) =>
  v.discount_price_minor !== null && v.discount_price_minor < v.price_minor ? v.discount_price_minor : v.price_minor;

/** Each line's product and variant in the store, and its price (a given price wins, C7.1 `products` pricing). */
export async function resolveLines(tx: Queryable, storeId: string, inputs: LineInput[]): Promise<ResolvedLine[]> {
  const products = new Map<string, Awaited<ReturnType<typeof findProduct>>>();
  const out: ResolvedLine[] = [];
  for (const input of inputs) {
    if (input.productRef === null) {
      out.push({ input, productId: null, variantId: null, productNumId: null, variantNumId: null, title: input.title!, variantTitle: null, sku: null, unitMinor: input.priceMinor! });
      continue;
    }
    const productField = input.label.startsWith('products') ? `${input.label}.productId` : `${input.label}.product_id`;
    const variantField = input.label.startsWith('products') ? `${input.label}.varientId` : `${input.label}.variant_id`;
    if (!products.has(input.productRef)) products.set(input.productRef, await findProduct(tx, storeId, input.productRef));
    const product = products.get(input.productRef);
    if (!product) throw fieldError(productField, 'is not a product of this store');
    if (input.variantRef !== null) {
      const v = await findVariantAnyStore(tx, input.variantRef);
      if (!v || v.product_id !== product.id) throw fieldError(variantField, 'is not a variant of this product');
      out.push({
        input, productId: product.id, variantId: v.id, productNumId: product.num_id, variantNumId: v.num_id, title: product.title,
        variantTitle: variantTitle(v), sku: v.sku ?? product.sku, unitMinor: input.priceMinor ?? sellingPrice(v),
      });
      continue;
    }
    if (product.variants.length > 0) throw fieldError(variantField, "can't be blank: the product has variants");
    const unit = input.priceMinor ?? product.price_minor;
    if (unit === null) throw fieldError(productField, 'names a product without a price');
    out.push({
      input, productId: product.id, variantId: null, productNumId: product.num_id, variantNumId: null, title: product.title,
      variantTitle: null, sku: product.sku, unitMinor: unit,
    });
  }
  return out;
}

const stockLines = (lines: ResolvedLine[]): StockLine[] =>
  lines.map((l) => ({ productId: l.productId, variantId: l.variantId, quantity: l.input.quantity, label: l.input.label }));

async function insertLines(tx: Queryable, orderId: string, lines: ResolvedLine[], discounts: number[], now: Date): Promise<void> {
  for (const [i, l] of lines.entries()) {
    await tx.query(
      `INSERT INTO order_line_items (id, order_id, product_id, variant_id, product_num_id, variant_num_id, title, variant_title, sku,
                                     quantity, price_minor, total_discount_minor, properties, stock_deducted, position)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13::jsonb,$14,$15)`,
      [uuidv7(now.getTime()), orderId, l.productId, l.variantId, l.productNumId, l.variantNumId, l.title, l.variantTitle, l.sku,
        l.input.quantity, l.unitMinor, discounts[i], JSON.stringify(l.input.properties), l.productId !== null, i + 1],
    );
  }
}

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
      input.currency ?? stores[0].currency, totals.subtotalMinor, totals.taxMinor, input.taxRatePpm === null ? null : formatTaxRate(input.taxRatePpm),
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

// ---- changes of an existing order -------------------------------------------------------------

/**
 * Locks the order, checks the caller's access (C7.1: another store's order is 403) and reads it:
 * the first step of every change. A non-UUID or unknown id is 404.
 */
export async function lockForChange(tx: Queryable, orderId: string, actor: Actor): Promise<OrderRow> {
  const locked = isUuid(orderId) ? await lockOrder(tx, orderId) : null;
  if (!locked) throw orderNotFound();
  actor.assertAccess(locked.store_id);
  return (await findOrderAnyStore(tx, locked.id))!;
}

const JSON_COLUMNS = new Set(['shipping_address', 'billing_address', 'discount', 'tags', 'attributes']);

/** `UPDATE orders SET ...` for the columns given, plus `updated_at`. */
export async function setOrder(tx: Queryable, id: string, columns: Record<string, unknown>, now: Date): Promise<void> {
  const sets: string[] = [];
  const params: unknown[] = [];
  for (const [column, value] of Object.entries(columns)) {
    if (!/^[a-z_]+$/.test(column)) throw new Error(`bad column ${column}`);
    params.push(JSON_COLUMNS.has(column) && value !== null ? JSON.stringify(value) : value);
    sets.push(`${column} = $${params.length}${JSON_COLUMNS.has(column) ? '::jsonb' : ''}`);
  }
  params.push(now, id);
  await tx.query(`UPDATE orders SET ${[...sets, `updated_at = $${params.length - 1}`].join(', ')} WHERE id = $${params.length}`, params);
}

/**
 * Re-reads the order and writes the events of a change: `orders/updated` always, then the
 * lifecycle topics that apply, all with the order after the change (full REST view, C8.8).
 */
export async function emitOrderEvents(deps: Deps, tx: Queryable, orderId: string, extra: ('orders/paid' | 'orders/cancelled' | 'orders/fulfilled')[], now: Date): Promise<OrderRow> {
  const row = (await findOrderAnyStore(tx, orderId))!;
  const payload = orderView(row, deps.config.baseUrl);
  await emit(tx, { storeId: row.store_id, topic: 'orders/updated', payload, now });
  for (const topic of extra) await emit(tx, { storeId: row.store_id, topic, payload, now });
  return row;
}

/** What the order has been paid (a paid order inserted without transactions counts as paid in full). */
export function paidAmount(o: Pick<OrderRow, 'paid_minor' | 'financial_status' | 'total_minor'>): number {
  if (o.paid_minor > 0) return o.paid_minor;
  return ['paid', 'partially_refunded', 'refunded'].includes(o.financial_status) ? o.total_minor : 0;
}

const FROZEN = ['delivered', 'canceled'];

/**
 * app-api.md `PUT /orders/update/{orderId}` and `PATCH /orders/update-signle-order/{orderId}`:
 * every field of the body, with the transitions of app-api.md's Order status table.
 */
export async function updateOrder(deps: Deps, orderId: string, body: unknown, actor: Actor) {
  const input = readOrderUpdate(body);
  return deps.db.transaction(async (tx) => {
    const order = await lockForChange(tx, orderId, actor);
    const now = deps.clock.now();
    const set: Record<string, unknown> = {};
    const extra: ('orders/paid' | 'orders/cancelled')[] = [];
    let status = order.status;

    if (input.status !== undefined && input.status !== order.status && FROZEN.includes(order.status)) {
      throw badRequest(`The order is ${order.status}; its status can no longer change`);
    }
    if (input.products) await replaceProducts(tx, order, input.products, set, now);

    // C7.2: a cash or offline payment method moves a pending order to paid.
    if (input.paymentMethod !== undefined) {
      set.payment_method = input.paymentMethod;
      const owing = ['pending', 'partially_paid'].includes(order.financial_status);
      if ((CASH_OR_OFFLINE as readonly string[]).includes(input.paymentMethod) && owing) {
        if (order.status === 'canceled') throw badRequest('The order is canceled; it cannot be paid');
        const total = (set.total_minor as number | undefined) ?? order.total_minor;
        const due = total - order.paid_minor;
        if (due > 0) {
          await insertTransaction(tx, { id: uuidv7(now.getTime()), orderId: order.id, storeId: order.store_id, kind: 'sale', status: 'success', gateway: input.paymentMethod, amountMinor: due, now });
        }
        set.paid_minor = order.paid_minor + Math.max(due, 0);
        set.financial_status = 'paid';
        if (status === 'pending' || status === 'confirmed') status = 'paid';
        extra.push('orders/paid');
      }
    }

    if (input.status !== undefined) status = input.status;
    if (status !== order.status) {
      set.status = status;
      if (status === 'canceled') {
        set.cancelled_at = order.cancelled_at ?? now;
        extra.push('orders/cancelled');
      }
      if (status === 'shipped' && !order.shipped_date) set.shipped_date = now;
      if (status === 'delivered' && input.deliveryDate === undefined && !order.delivery_date) set.delivery_date = now;
    }
    // A return or cancellation with `restock: true` puts the stock back, once per line item.
    if (input.restock === true && (status === 'returned' || status === 'canceled')) await restockOrder(tx, order.id);

    const direct: [keyof OrderUpdateInput, string][] = [
      ['courierName', 'courier_name'], ['trackingNumber', 'tracking_number'], ['digitaldata', 'digital_data'], ['deliveryDate', 'delivery_date'],
      ['notes', 'note'], ['email', 'email'], ['mobileNumber', 'phone'], ['staffId', 'staff_id'],
    ];
    for (const [key, column] of direct) if (input[key] !== undefined) set[column] = input[key];
    const address = addressChanges(order, input);
    if (address) set.shipping_address = address;

    await setOrder(tx, order.id, set, now);
    await recordChange(tx, {
      id: uuidv7(now.getTime()), orderId: order.id, storeId: order.store_id, action: 'update', userId: actor.userId, staffId: input.staffId ?? null,
      changes: { fields: Object.keys(input), ...(status !== order.status ? { status: { from: order.status, to: status } } : {}) }, now,
    });
    return merchantOrderRecord(await emitOrderEvents(deps, tx, order.id, extra, now));
  });
}

/** The merchant record's contact fields live on the shipping address (order-view.ts). */
function addressChanges(order: OrderRow, input: OrderUpdateInput): Record<string, string | null> | null {
  const keys: [keyof OrderUpdateInput, string][] = [['address', 'address1'], ['city', 'city'], ['state', 'province'], ['country', 'country'], ['pinCode', 'zip']];
  if (input.clientName === undefined && keys.every(([k]) => input[k] === undefined)) return null;
  const a: Record<string, string | null> = { ...((order.shipping_address ?? {}) as Record<string, string | null>) };
  if (input.clientName !== undefined) {
    const { first_name, last_name } = splitName(input.clientName ?? '');
    a.first_name = first_name;
    a.last_name = last_name;
  }
  for (const [k, column] of keys) if (input[k] !== undefined) a[column] = input[k] as string | null;
  if (input.country !== undefined) a.country_code = input.country && /^[A-Za-z]{2}$/.test(input.country) ? input.country.toUpperCase() : null;
  return a;
}

/**
 * Replacement `products`: the old line items give their stock back, the new ones take theirs, and
 * the totals are computed again with the order's own discount (not checked again: it was used at
 * checkout), tax rate and shipping line. Not once the order is canceled, refunded or (partly)
 * fulfilled: refunds and fulfillments name the line items they cover.
 */
async function replaceProducts(tx: Queryable, order: OrderRow, products: LineInput[], set: Record<string, unknown>, now: Date): Promise<void> {
  if (order.status === 'canceled' || order.cancelled_at) throw badRequest('The order is canceled; its products can no longer change');
  if (order.refunded_minor > 0) throw badRequest('The order has refunds; its products can no longer change');
  const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM fulfillments WHERE order_id = $1', [order.id]);
  if (rows[0].n > 0) throw badRequest('The order has fulfillments; its products can no longer change');

  await restockOrder(tx, order.id);
  await tx.query('DELETE FROM order_line_items WHERE order_id = $1', [order.id]);
  const lines = await resolveLines(tx, order.store_id, products);
  const totals = computeTotals(
    lines.map((l) => ({ productId: l.productId, unitMinor: l.unitMinor, quantity: l.input.quantity, taxable: true })),
    shippingOriginalMinor(order),
    order.discount,
    order.tax_rate === null ? null : parseTaxRate(order.tax_rate),
  );
  await deductStock(tx, stockLines(lines));
  await insertLines(tx, order.id, lines, totals.lines.map((l) => l.discountMinor), now);
  Object.assign(set, {
    subtotal_minor: totals.subtotalMinor,
    tax_minor: totals.taxMinor,
    shipping_minor: totals.shippingMinor,
    discount_minor: totals.totalDiscountMinor,
    total_minor: totals.totalMinor,
  });
  // A paid order whose total grew owes the difference.
  if (order.paid_minor > 0) set.financial_status = totals.totalMinor > order.paid_minor ? 'partially_paid' : 'paid';
}

/** The caller as an Actor (merchant admin routes). */
export function adminActor(user: { id: string; role: string; storeId: string | null } | undefined): Actor {
  return {
    userId: user?.id ?? null,
    assertAccess(storeId: string) {
      if (user?.role === 'SUPER_ADMIN') return;
      if (user?.storeId !== storeId) throw forbidden('This order belongs to another store');
    },
  };
}
