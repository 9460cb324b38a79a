// Fulfillments (app-api.md Fulfillment; `POST /api/v1/orders/{orderId}/fulfillments.json`,
// `PUT /api/v1/fulfillments/{fulfillment_id}.json`) and what they do to the order (app-api.md Order status):
//
// - Coverage is cumulative (C14.3): a line item is covered by the quantities of the order's
//   fulfillments in a shipped state (`success`, and its progressions `shipped` and `delivered`).
//   Every line covered -> `fulfillment_status` `fulfilled` and the order `shipped`; some -> `partial`.
// - A fulfillment claims its quantities while it is not `cancelled`, `error` or `failure`, so two
//   fulfillments can never cover more than the order has (a quantity above what is left is a 400).
// - Update to `delivered` -> the order `delivered`.
// - The customer is emailed when the order moves into `shipped` or `partial` and the fulfillment's
//   `notify_customer` is true; the email is recorded in the change's transaction and sent after it.
// Events: fulfillments/create or fulfillments/update; orders/updated when the order changed;
// orders/fulfilled when it became fully fulfilled.
//
// Reading the body is fulfillments.input.ts, the views fulfillments.view.ts, the SQL fulfillments.repo.ts.
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { badRequest, notFound } from '../http/errors.js';
import { isUuid, uuidv7 } from '../ids.js';
import { emit } from '../outbox/emit.js';
import { fieldError } from '../content/fields.js';
import { deliverLater, recordMail, type MailEntry } from '../mail/mail.js';
import type { OrderRow } from '../orders/order-view.js';
import { findOrder, lockOrder, setFulfilledQuantity, setOrder } from '../orders/orders.repo.js';
import { emitOrderEvents, MOVABLE_STATUSES } from '../orders/orders.service.js';
import { readCreate, readUpdate, type Qty } from './fulfillments.input.js';
import { fulfillmentsOf, insertFulfillment, orderIdOfFulfillment, updateFulfillmentRow, type FulfillmentRow } from './fulfillments.repo.js';
import { fulfillmentView, shippingEmail, type FulfillmentView } from './fulfillments.view.js';

/** States whose quantities count as shipped (coverage). */
const SHIPPED = new Set(['success', 'shipped', 'delivered']);
/** States that no longer hold their quantities. */
const RELEASED = new Set(['cancelled', 'error', 'failure']);

// ---- coverage and the order -------------------------------------------------------------------

const isCanceled = (order: OrderRow) => order.status === 'canceled' || order.cancelled_at !== null;
const canceledOrder = () => badRequest('The order is canceled; it cannot be fulfilled');

function sumBy(rows: FulfillmentRow[], keep: (f: FulfillmentRow) => boolean): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of rows) if (keep(f)) for (const c of f.covered) out.set(c.id, (out.get(c.id) ?? 0) + c.quantity);
  return out;
}

/** What is left to fulfil of each line item of the order, by id: its quantity less what `others` still hold. */
function leftToFulfil(order: OrderRow, others: FulfillmentRow[]): Map<string, number> {
  const claimed = sumBy(others, (f) => !RELEASED.has(f.status));
  return new Map(order.line_items.map((l) => [l.id, Math.max(l.quantity - (claimed.get(l.id) ?? 0), 0)]));
}

/**
 * What a fulfillment naming `requested` covers: the named quantities, checked against what is left
 * of each line item (unknown id or more than is left -> 400); or, when nothing is named, everything
 * that is left (nothing left -> 400).
 */
function resolveCovered(order: OrderRow, others: FulfillmentRow[], requested: Qty[]): Qty[] {
  const left = leftToFulfil(order, others);
  if (requested.length === 0) {
    const all = order.line_items.map((l) => ({ id: l.id, quantity: left.get(l.id)! })).filter((q) => q.quantity > 0);
    if (!all.length) throw badRequest('Every line item of the order is fulfilled already');
    return all;
  }
  // Quantities of one line item named twice add up; the entry that goes over is the one named.
  const merged = new Map<string, number>();
  for (const [i, r] of requested.entries()) {
    if (!left.has(r.id)) throw fieldError(`line_items[${i}].id`, 'is not a line item of this order');
    const total = (merged.get(r.id) ?? 0) + r.quantity;
    if (total > left.get(r.id)!) throw fieldError(`line_items[${i}].quantity`, `is more than the ${left.get(r.id)} left to fulfil of this line item`);
    merged.set(r.id, total);
  }
  return [...merged].map(([id, quantity]) => ({ id, quantity }));
}

interface OrderEffect {
  extra: ('orders/fulfilled')[];
  changed: boolean;
  mail: MailEntry | null;
}

/**
 * After a fulfillment was written: line items' covered quantities, the order's
 * `fulfillment_status`, its status per app-api.md's table, its tracking details, and the email.
 * `shippedNow` says whether this change put the fulfillment into a shipped state.
 */
async function applyToOrder(deps: Deps, tx: Queryable, order: OrderRow, f: FulfillmentRow, shippedNow: boolean, now: Date): Promise<OrderEffect> {
  const all = await fulfillmentsOf(tx, order.id);
  const covered = sumBy(all, (x) => SHIPPED.has(x.status));
  let full = order.line_items.length > 0;
  let any = false;
  // A line item's covered quantity is its `fulfillment_status` in the order's view: changing it
  // changes the order, even when the order's own fields stay (a second partial shipment).
  let linesChanged = false;
  for (const l of order.line_items) {
    const q = Math.min(covered.get(l.id) ?? 0, l.quantity);
    if (q !== l.fulfilled_quantity) {
      await setFulfilledQuantity(tx, l.id, q);
      linesChanged = true;
    }
    if (q < l.quantity) full = false;
    if (q > 0) any = true;
  }
  const fulfillmentStatus = full ? 'fulfilled' : any ? 'partial' : 'unfulfilled';
  const set: Record<string, unknown> = {};
  if (fulfillmentStatus !== order.fulfillment_status) set.fulfillment_status = fulfillmentStatus;

  let status = order.status;
  if (f.status === 'delivered' && MOVABLE_STATUSES.includes(order.status)) {
    status = 'delivered';
    if (!order.delivery_date) set.delivery_date = now;
  } else if (shippedNow && any && MOVABLE_STATUSES.includes(order.status)) {
    status = full ? 'shipped' : 'partial';
  }
  if (status !== order.status) {
    set.status = status;
    if ((status === 'shipped' || status === 'delivered') && !order.shipped_date) set.shipped_date = now;
  }
  if (SHIPPED.has(f.status)) {
    if (f.tracking_number && f.tracking_number !== order.tracking_number) set.tracking_number = f.tracking_number;
    if (f.tracking_url && f.tracking_url !== order.tracking_url) set.tracking_url = f.tracking_url;
    if (f.tracking_company && f.tracking_company !== order.courier_name) set.courier_name = f.tracking_company;
  }
  const changed = Object.keys(set).length > 0 || linesChanged;
  if (changed) await setOrder(tx, order.id, set, now);

  let mail: MailEntry | null = null;
  const movedIn = status !== order.status && (status === 'shipped' || status === 'partial');
  if (movedIn && f.notify_customer && order.email) mail = await recordMail(tx, deps.config, shippingEmail(order, f, status), now);
  return { extra: fulfillmentStatus === 'fulfilled' && order.fulfillment_status !== 'fulfilled' ? ['orders/fulfilled'] : [], changed, mail };
}

async function finish(deps: Deps, tx: Queryable, order: OrderRow, f: FulfillmentRow, topic: 'fulfillments/create' | 'fulfillments/update', effect: OrderEffect, now: Date) {
  await emit(tx, { storeId: order.store_id, topic, payload: fulfillmentView(f), now });
  if (effect.changed) await emitOrderEvents(deps, tx, order.id, effect.extra, now);
  return { fulfillment: fulfillmentView(f), mail: effect.mail };
}

// ---- create and update -------------------------------------------------------------------------

export async function createFulfillment(deps: Deps, storeId: string, orderId: string, body: unknown): Promise<FulfillmentView> {
  const input = readCreate(body);
  const { fulfillment, mail } = await deps.db.transaction(async (tx) => {
    const locked = isUuid(orderId) ? await lockOrder(tx, orderId) : null;
    if (!locked || locked.store_id !== storeId) throw notFound('Order not found');
    const order = (await findOrder(tx, storeId, locked.id))!;
    if (isCanceled(order)) throw canceledOrder();
    const others = await fulfillmentsOf(tx, order.id);
    const covered = RELEASED.has(input.status!) ? resolveCoveredLoose(order, input.lineItems!) : resolveCovered(order, others, input.lineItems!);
    const now = deps.clock.now();
    const f = await insertFulfillment(tx, {
      id: uuidv7(now.getTime()), order_id: order.id, store_id: storeId, status: input.status!, service_id: input.serviceId ?? null,
      tracking_number: input.trackingNumber ?? null, tracking_url: input.trackingUrl ?? null, tracking_company: input.trackingCompany ?? null,
      line_items: input.lineItems!, covered, notify_customer: input.notifyCustomer!, created_at: now,
    });
    const effect = await applyToOrder(deps, tx, order, f, SHIPPED.has(f.status), now);
    return finish(deps, tx, order, f, 'fulfillments/create', effect, now);
  });
  if (mail) deliverLater(deps, [mail]);
  return fulfillment;
}

/**
 * A fulfillment created already released (cancelled, error, failure) claims nothing, so it is only
 * checked for naming the order's line items within their quantities.
 */
function resolveCoveredLoose(order: OrderRow, requested: Qty[]): Qty[] {
  return resolveCovered(order, [], requested.length ? requested : []);
}

/**
 * A released fulfillment coming back claims again what it covered: each quantity must still be
 * left, as other fulfillments may have claimed it meanwhile. A PUT takes no line items, so the
 * refusal names the line item, not a `line_items[i]` the request never had.
 */
function assertStillFree(order: OrderRow, others: FulfillmentRow[], f: FulfillmentRow) {
  const leftOf = leftToFulfil(order, others);
  for (const c of f.covered) {
    // A line item no longer on the order (its lines were replaced) has nothing left.
    const left = leftOf.get(c.id) ?? 0;
    if (c.quantity > left) {
      throw badRequest(`The fulfillment cannot come back: it covers ${c.quantity} of line item ${c.id}, which has ${left} left to fulfil`);
    }
  }
}

export async function updateFulfillment(deps: Deps, storeId: string, fulfillmentId: string, body: unknown): Promise<FulfillmentView> {
  const input = readUpdate(body);
  const { fulfillment, mail } = await deps.db.transaction(async (tx) => {
    const orderId = isUuid(fulfillmentId) ? await orderIdOfFulfillment(tx, storeId, fulfillmentId) : null;
    if (!orderId) throw notFound('Fulfillment not found');
    // The order first, then the fulfillment: the same lock order as every other change of the order.
    await lockOrder(tx, orderId);
    const order = (await findOrder(tx, storeId, orderId))!;
    const all = await fulfillmentsOf(tx, order.id);
    const current = all.find((x) => x.id === fulfillmentId.toLowerCase())!;
    const next = input.status ?? current.status;
    const claimsAgain = RELEASED.has(current.status) && !RELEASED.has(next);
    // A canceled order cannot be fulfilled, by an update any more than by a create: no fulfillment
    // of it may claim its items again or enter a shipped state. Tracking changes, a release, and
    // the progress of a shipment that left before the cancellation (success -> delivered) stay allowed.
    if (isCanceled(order) && (claimsAgain || (SHIPPED.has(next) && !SHIPPED.has(current.status)))) throw canceledOrder();
    if (claimsAgain) assertStillFree(order, all.filter((x) => x.id !== current.id), current);
    const now = deps.clock.now();
    const f = await updateFulfillmentRow(tx, current.id, {
      status: next,
      tracking_number: input.trackingNumber !== undefined ? input.trackingNumber : current.tracking_number,
      tracking_url: input.trackingUrl !== undefined ? input.trackingUrl : current.tracking_url,
      tracking_company: input.trackingCompany !== undefined ? input.trackingCompany : current.tracking_company,
      updated_at: now,
    });
    const effect = await applyToOrder(deps, tx, order, f, SHIPPED.has(f.status) && !SHIPPED.has(current.status), now);
    return finish(deps, tx, order, f, 'fulfillments/update', effect, now);
  });
  if (mail) deliverLater(deps, [mail]);
  return fulfillment;
}
