// Fulfillments (app-api.md Fulfillment; `POST /api/v1/orders/{orderId}/fulfillments.json`,
// `PUT /api/v1/fulfillments/{id}.json`) and what they do to the order (app-api.md Order status):
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
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { badRequest, notFound } from '../http/errors.js';
import { isUuid, uuidv7 } from '../ids.js';
import { emit } from '../outbox/emit.js';
import { bodyObject, fieldError, has, optionalBoolean, unwrap, type Body } from '../content/fields.js';
import { deliverLater, recordMail, type MailEntry } from '../mail/mail.js';
import type { OrderRow } from '../orders/order-view.js';
import { findOrder, lockOrder } from '../orders/orders.repo.js';
import { emitOrderEvents, MOVABLE_STATUSES, setOrder } from '../orders/orders.service.js';

export const FULFILLMENT_STATUSES = ['pending', 'open', 'success', 'shipped', 'delivered', 'cancelled', 'error', 'failure'] as const;
/** app-api.md: what a create accepts. */
export const CREATE_STATUSES = ['pending', 'open', 'success', 'cancelled', 'error', 'failure'] as const;
/** States whose quantities count as shipped (coverage). */
const SHIPPED = new Set(['success', 'shipped', 'delivered']);
/** States that no longer hold their quantities. */
const RELEASED = new Set(['cancelled', 'error', 'failure']);

type Status = (typeof FULFILLMENT_STATUSES)[number];
interface Qty {
  id: string;
  quantity: number;
}

export interface FulfillmentRow {
  id: string;
  order_id: string;
  store_id: string;
  status: Status;
  service_id: string | null;
  tracking_number: string | null;
  tracking_url: string | null;
  tracking_company: string | null;
  line_items: Qty[];
  covered: Qty[];
  notify_customer: boolean;
  created_at: Date;
  updated_at: Date;
}

/** app-api.md Fulfillment (envelope `data.fulfillment`; also the fulfillments/* payload). */
export function fulfillmentView(f: FulfillmentRow) {
  return {
    fulfillmentId: f.id,
    orderId: f.order_id,
    status: f.status,
    serviceId: f.service_id,
    trackingNumber: f.tracking_number,
    trackingUrl: f.tracking_url,
    trackingCompany: f.tracking_company,
    lineItems: f.line_items,
    notifyCustomer: f.notify_customer,
    createdAt: f.created_at.toISOString(),
    updatedAt: f.updated_at.toISOString(),
  };
}
export type FulfillmentView = ReturnType<typeof fulfillmentView>;

// ---- input -------------------------------------------------------------------------------------

/**
 * A string field stored exactly as sent: the tracking fields are carrier labels "stored verbatim"
 * (app-api.md Fulfillment, and `tracking_company` "free text, stored verbatim"), so surrounding
 * spaces are kept. Only the empty string means "none" (null).
 */
function optionalString(body: Body, key: string, max = 255): string | null | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (v === null) return null;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') throw fieldError(key, 'must be a string');
  if (v.length > max) throw fieldError(key, `is too long (maximum ${max} characters)`);
  return v === '' ? null : v;
}

/** `tracking_url` must be a well-formed absolute http(s) URL. */
function trackingUrl(body: Body): string | null | undefined {
  const v = optionalString(body, 'tracking_url', 2048);
  if (v === undefined || v === null) return v;
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw fieldError('tracking_url', 'must be a well-formed URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) throw fieldError('tracking_url', 'must be a well-formed http or https URL');
  return v;
}

function status(body: Body, allowed: readonly string[]): Status | undefined {
  const v = body.status;
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !allowed.includes(v)) throw fieldError('status', `must be one of ${allowed.join(', ')}`);
  return v as Status;
}

function lineItems(value: unknown): Qty[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw fieldError('line_items', 'must be an array of { id, quantity }');
  if (value.length > 250) throw fieldError('line_items', 'has more than 250 items');
  return value.map((raw, i) => {
    const field = `line_items[${i}]`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw fieldError(field, 'must be an object { id, quantity }');
    const { id, quantity } = raw as Body;
    if (typeof id !== 'string' || id.trim() === '') throw fieldError(`${field}.id`, "can't be blank");
    if (typeof quantity !== 'number' || !Number.isInteger(quantity) || quantity < 1) throw fieldError(`${field}.quantity`, 'must be a whole number of at least 1');
    return { id: id.trim().toLowerCase(), quantity };
  });
}

export interface FulfillmentInput {
  status?: Status;
  trackingNumber?: string | null;
  trackingUrl?: string | null;
  trackingCompany?: string | null;
  serviceId?: string | null;
  notifyCustomer?: boolean;
  lineItems?: Qty[];
}

export function readCreate(raw: unknown): FulfillmentInput {
  const body = unwrap(raw, 'fulfillment');
  return {
    status: status(body, CREATE_STATUSES) ?? 'pending',
    trackingNumber: optionalString(body, 'tracking_number'),
    trackingUrl: trackingUrl(body),
    trackingCompany: optionalString(body, 'tracking_company'),
    serviceId: optionalString(body, 'service_id'),
    notifyCustomer: optionalBoolean(body, 'notify_customer') ?? true,
    lineItems: lineItems(body.line_items),
  };
}

export function readUpdate(raw: unknown): FulfillmentInput {
  const body = unwrap(bodyObject(raw), 'fulfillment');
  return {
    status: status(body, FULFILLMENT_STATUSES),
    trackingNumber: optionalString(body, 'tracking_number'),
    trackingUrl: trackingUrl(body),
    trackingCompany: has(body, 'tracking_company') ? optionalString(body, 'tracking_company') : undefined,
  };
}

// ---- coverage and the order -------------------------------------------------------------------

async function fulfillmentsOf(tx: Queryable, orderId: string): Promise<FulfillmentRow[]> {
  const { rows } = await tx.query<FulfillmentRow>('SELECT * FROM fulfillments WHERE order_id = $1 ORDER BY created_at, id', [orderId]);
  return rows;
}

function sumBy(rows: FulfillmentRow[], keep: (f: FulfillmentRow) => boolean): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of rows) if (keep(f)) for (const c of f.covered) out.set(c.id, (out.get(c.id) ?? 0) + c.quantity);
  return out;
}

/**
 * What a fulfillment naming `requested` covers: the named quantities, checked against what is left
 * of each line item (unknown id or more than is left -> 400); or, when nothing is named, everything
 * that is left (nothing left -> 400).
 */
function resolveCovered(order: OrderRow, others: FulfillmentRow[], requested: Qty[]): Qty[] {
  const claimed = sumBy(others, (f) => !RELEASED.has(f.status));
  const left = new Map(order.line_items.map((l) => [l.id, l.quantity - (claimed.get(l.id) ?? 0)]));
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
  for (const l of order.line_items) {
    const q = Math.min(covered.get(l.id) ?? 0, l.quantity);
    if (q !== l.fulfilled_quantity) await tx.query('UPDATE order_line_items SET fulfilled_quantity = $2 WHERE id = $1', [l.id, q]);
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
  const changed = Object.keys(set).length > 0;
  if (changed) await setOrder(tx, order.id, set, now);

  let mail: MailEntry | null = null;
  const movedIn = status !== order.status && (status === 'shipped' || status === 'partial');
  if (movedIn && f.notify_customer && order.email) mail = await recordMail(tx, deps.config, shippingEmail(order, f, status), now);
  return { extra: fulfillmentStatus === 'fulfilled' && order.fulfillment_status !== 'fulfilled' ? ['orders/fulfilled'] : [], changed, mail };
}

function shippingEmail(order: OrderRow, f: FulfillmentRow, status: string) {
  const name = `#${order.order_number}`;
  const partial = status === 'partial';
  const tracking = [
    f.tracking_company && `Carrier: ${f.tracking_company}`,
    f.tracking_number && `Tracking number: ${f.tracking_number}`,
    f.tracking_url && `Track it: ${f.tracking_url}`,
  ].filter(Boolean).join('\n');
  return {
    to: order.email!,
    storeId: order.store_id,
    template: partial ? 'order_partially_shipped' : 'order_shipped',
    subject: partial ? `Part of your order ${name} is on its way` : `Your order ${name} is on its way`,
    text: [
      partial ? `Some items of your order ${name} have shipped; the rest will follow.` : `Every item of your order ${name} has shipped.`,
      tracking,
    ].filter(Boolean).join('\n\n'),
  };
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
    if (order.status === 'canceled' || order.cancelled_at) throw badRequest('The order is canceled; it cannot be fulfilled');
    const others = await fulfillmentsOf(tx, order.id);
    const covered = RELEASED.has(input.status!) ? resolveCoveredLoose(order, input.lineItems!) : resolveCovered(order, others, input.lineItems!);
    const now = deps.clock.now();
    const { rows } = await tx.query<FulfillmentRow>(
      `INSERT INTO fulfillments (id, order_id, store_id, status, service_id, tracking_number, tracking_url, tracking_company, line_items, covered,
                                 notify_customer, created_at, updated_at)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9::jsonb,$10::jsonb,$11,$12,$12) RETURNING *`,
      [uuidv7(now.getTime()), order.id, storeId, input.status, input.serviceId ?? null, input.trackingNumber ?? null, input.trackingUrl ?? null,
        input.trackingCompany ?? null, JSON.stringify(input.lineItems), JSON.stringify(covered), input.notifyCustomer, now],
    );
    const f = rows[0];
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

export async function updateFulfillment(deps: Deps, storeId: string, fulfillmentId: string, body: unknown): Promise<FulfillmentView> {
  const input = readUpdate(body);
  const { fulfillment, mail } = await deps.db.transaction(async (tx) => {
    const found = isUuid(fulfillmentId)
      ? (await tx.query<{ order_id: string }>('SELECT order_id FROM fulfillments WHERE id = $1 AND store_id = $2', [fulfillmentId, storeId])).rows[0]
      : undefined;
    if (!found) throw notFound('Fulfillment not found');
    // The order first, then the fulfillment: the same lock order as every other change of the order.
    await lockOrder(tx, found.order_id);
    const order = (await findOrder(tx, storeId, found.order_id))!;
    const all = await fulfillmentsOf(tx, order.id);
    const current = all.find((x) => x.id === fulfillmentId.toLowerCase())!;
    const next = input.status ?? current.status;
    // Back from a released state: its quantities must still be free.
    if (RELEASED.has(current.status) && !RELEASED.has(next)) {
      resolveCovered(order, all.filter((x) => x.id !== current.id), current.covered);
    }
    const now = deps.clock.now();
    const { rows } = await tx.query<FulfillmentRow>(
      `UPDATE fulfillments SET status = $2, tracking_number = $3, tracking_url = $4, tracking_company = $5, updated_at = $6
        WHERE id = $1 RETURNING *`,
      [current.id, next,
        input.trackingNumber !== undefined ? input.trackingNumber : current.tracking_number,
        input.trackingUrl !== undefined ? input.trackingUrl : current.tracking_url,
        input.trackingCompany !== undefined ? input.trackingCompany : current.tracking_company, now],
    );
    const f = rows[0];
    const effect = await applyToOrder(deps, tx, order, f, SHIPPED.has(f.status) && !SHIPPED.has(current.status), now);
    return finish(deps, tx, order, f, 'fulfillments/update', effect, now);
  });
  if (mail) deliverLater(deps, [mail]);
  return fulfillment;
}
