// The rules of changing an existing order (C7.1, C7.2; app-api.md Order status), and what the
// other order changes (refunds, fulfillments) share. Each change runs in one transaction that starts
// by locking the order and writes its events there too (C8.1): orders/updated on every change,
// orders/paid when the order becomes paid, orders/cancelled when it becomes canceled. Taking a new
// order is order-create.ts; line items are order-lines.ts.
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { badRequest, forbidden, notFound } from '../http/errors.js';
import { isUuid, uuidv7 } from '../ids.js';
import { emit } from '../outbox/emit.js';
import { splitName } from '../customers/customer-fields.js';
import { assertFitsCurrency, CASH_OR_OFFLINE, readOrderUpdate, type LineInput, type OrderUpdateInput } from './order-input.js';
import { hundredthsStep } from '../currencies.js';
import { merchantOrderRecord, orderView, shippingOriginalMinor, type OrderRow } from './order-view.js';
import { deleteLineItems, findOrderAnyStore, insertTransaction, lockOrder, recordChange, setOrder } from './orders.repo.js';
import { fulfillmentCount } from '../fulfillments/fulfillments.repo.js';
import { computeTotals, parseTaxRate, TOTAL_TOO_LARGE, totalsTooLarge } from './pricing.js';
import { deductStock, lockStock, restockOrder, stockToReturn } from './stock.js';
import { insertLines, resolveLines, stockLines } from './order-lines.js';
import { refundTransactions } from './refund-gateways.js';

/** Who is acting, for the audit trail and C7.1's store check. */
export interface Actor {
  userId: string | null;
  /** Throws 403 when the caller may not touch a resource of that store. */
  assertAccess(storeId: string): void;
}

/** Order statuses from which a fulfillment moves the order on (app-api.md Order status). */
export const MOVABLE_STATUSES = ['pending', 'confirmed', 'paid', 'partial', 'shipped'];

export const orderNotFound = () => notFound('Order not found');

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

/**
 * Re-reads the order and writes the events of a change: `orders/updated` always, then the
 * lifecycle topics that apply, all with the order after the change (full REST view, C8.8).
 */
export async function emitOrderEvents(deps: Deps, tx: Queryable, orderId: string, extra: ('orders/paid' | 'orders/cancelled' | 'orders/fulfilled')[], now: Date): Promise<OrderRow> {
  const row = (await findOrderAnyStore(tx, orderId))!;
  const payload = orderView(row, deps.config.baseUrl, 'withheld');
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

    // C7.2: a cash or offline payment method moves an order that owes money to paid. What is owed is read
    // after replacement products of the same request (a paid order they made dearer owes the rest).
    if (input.paymentMethod !== undefined) {
      set.payment_method = input.paymentMethod;
      const financial = (set.financial_status as string | undefined) ?? order.financial_status;
      const paid = (set.paid_minor as number | undefined) ?? order.paid_minor;
      const owing = ['pending', 'partially_paid'].includes(financial);
      if ((CASH_OR_OFFLINE as readonly string[]).includes(input.paymentMethod) && owing) {
        if (order.status === 'canceled') throw badRequest('The order is canceled; it cannot be paid');
        // Nor can the update that cancels it: the order would be canceled with the money taken.
        if (input.status === 'canceled') throw badRequest('The order is canceled by this update; it cannot be paid as well');
        const total = (set.total_minor as number | undefined) ?? order.total_minor;
        const due = total - paid;
        if (due > 0) {
          await insertTransaction(tx, { id: uuidv7(now.getTime()), orderId: order.id, storeId: order.store_id, kind: 'sale', status: 'success', gateway: input.paymentMethod, amountMinor: due, now });
        }
        set.paid_minor = paid + Math.max(due, 0);
        set.financial_status = 'paid';
        // app-api.md's Order status table: any order moves to `paid`, but a delivered one, which its
        // first row holds final (a cash-on-delivery order paid at the door stays delivered).
        if (status !== 'delivered') status = 'paid';
        extra.push('orders/paid');
      }
    }

    // orders/paid whenever the order becomes paid: also when replacement products leave a partly
    // paid order costing no more than was paid.
    if (set.financial_status === 'paid' && order.financial_status !== 'paid' && !extra.includes('orders/paid')) extra.push('orders/paid');

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
  // Each code follows the field it codes: a state or country sent anew makes the old code wrong
  // (an order moved from Oregon, OR, to Ontario kept `province_code` OR, and apps route on codes).
  // A value that is itself a code (ISO 3166: two letters for a country, up to three for a
  // subdivision) is its own code; a name leaves the code unknown.
  if (input.state !== undefined) a.province_code = input.state && /^[A-Za-z]{2,3}$/.test(input.state) ? input.state.toUpperCase() : null;
  if (input.country !== undefined) a.country_code = input.country && /^[A-Za-z]{2}$/.test(input.country) ? input.country.toUpperCase() : null;
  return a;
}

/**
 * Replacement `products`: the old line items give their stock back, the new ones take theirs, and
 * the totals are computed again with the order's own discount (not checked again: it was used at
 * checkout), tax rate and shipping line; a checkout's automatic discounts (C11.3), computed by its
 * functions for the old lines, are dropped. Not once the order is canceled, refunded or (partly)
 * fulfilled: refunds and fulfillments name the line items they cover.
 */
async function replaceProducts(tx: Queryable, order: OrderRow, products: LineInput[], set: Record<string, unknown>, now: Date): Promise<void> {
  if (order.status === 'canceled' || order.cancelled_at) throw badRequest('The order is canceled; its products can no longer change');
  if (order.refunded_minor > 0) throw badRequest('The order has refunds; its products can no longer change');
  if ((await fulfillmentCount(tx, order.id)) > 0) throw badRequest('The order has fulfillments; its products can no longer change');

  assertFitsCurrency(order.currency, products);
  const lines = await resolveLines(tx, order.store_id, products, order.currency);
  // Every stock row the change gives back to or takes from, locked once in the fixed order first.
  await lockStock(tx, [...stockToReturn(order.line_items.filter((l) => l.stock_deducted)), ...stockLines(lines)]);
  await restockOrder(tx, order.id, { rowsLocked: true });
  await deleteLineItems(tx, order.id);
  const totals = computeTotals(
    lines.map((l) => ({ productId: l.productId, unitMinor: l.unitMinor, quantity: l.input.quantity, taxable: true })),
    shippingOriginalMinor(order),
    order.discount,
    order.tax_rate === null ? null : parseTaxRate(order.tax_rate),
    hundredthsStep(order.currency),
  );
  if (totalsTooLarge(totals)) throw badRequest(TOTAL_TOO_LARGE);
  await deductStock(tx, stockLines(lines), { rowsLocked: true });
  await insertLines(tx, order.id, lines, totals.lines.map((l) => l.discountMinor), now);
  Object.assign(set, {
    subtotal_minor: totals.subtotalMinor,
    tax_minor: totals.taxMinor,
    shipping_minor: totals.shippingMinor,
    discount_minor: totals.totalDiscountMinor,
    total_minor: totals.totalMinor,
    // The automatic discounts of a checkout's functions (C11.3) were amounts off the old lines; the
    // new totals leave them out, so `discount_applications` no longer lists them either.
    automatic_discounts: [],
  });
  // What was paid toward the order against its new total (nothing is refunded yet: see above). A
  // total that grew leaves the difference owed (`partially_paid`). A total below what was paid gives
  // the excess back at once, as a `refund` transaction on the order's gateway, and what was paid
  // toward the order becomes the new total: the lower `total_price` already shows the change, so
  // `total_refunded_amount` (refunds of the order, the refund route's) stays within `total_price`,
  // `total_net_amount` never goes negative, and a later full refund gives back what is left.
  const paid = paidAmount(order);
  if (paid <= 0) {
    // Nothing was paid toward it: a free order (total 0, `paid` as it was taken) made dearer owes its
    // whole new total, and is `pending` until paid. Left `paid` with nothing taken, a later full
    // refund gave back the new total as if it had been paid (paidAmount's fallback for old rows).
    if (order.financial_status === 'paid' && totals.totalMinor > 0) {
      set.paid_minor = 0;
      set.financial_status = 'pending';
    }
    return;
  }
  // The excess goes back where it was taken (refund-gateways.ts), not on the order's last method.
  if (paid > totals.totalMinor) await refundTransactions(tx, order, paid - totals.totalMinor, now);
  set.paid_minor = Math.min(paid, totals.totalMinor);
  set.financial_status = totals.totalMinor > paid ? 'partially_paid' : 'paid';
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
