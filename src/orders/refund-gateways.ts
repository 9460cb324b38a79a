// Which payment gateways a refund goes back through. A refund gives back money where it was taken:
// the order's successful sales, less what was refunded through each gateway already. The order's
// `payment_method` is only the method of its last merchant update (an update to a method that
// collects nothing just overwrites it), so refunding on it told every app that a card payment
// went back as cash on delivery, and an order paid partly by card and partly in cash had the whole
// of it refunded in cash (a review of 2026-11-28).
import type { Queryable } from '../db/db.js';
import { uuidv7 } from '../ids.js';
import type { OrderRow } from './order-view.js';
import { insertTransaction } from './orders.repo.js';

export interface GatewayHolding {
  gateway: string | null;
  /** What the gateway still holds of the order's money, in minor units. */
  heldMinor: number;
}

export interface RefundPart {
  gateway: string | null;
  amountMinor: number;
}

/** What each gateway holds of the order's money, the gateway of the latest sale first. */
export async function heldByGateway(q: Queryable, orderId: string): Promise<GatewayHolding[]> {
  const { rows } = await q.query<{ gateway: string | null; held: string }>(
    `SELECT gateway, sum(CASE kind WHEN 'sale' THEN amount_minor ELSE -amount_minor END)::text AS held
       FROM order_transactions WHERE order_id = $1 AND status = 'success'
      GROUP BY gateway
     HAVING count(*) FILTER (WHERE kind = 'sale') > 0
      ORDER BY max(created_at) FILTER (WHERE kind = 'sale') DESC, gateway`,
    [orderId],
    { name: 'order_held_by_gateway' },
  );
  return rows.map((r) => ({ gateway: r.gateway, heldMinor: Number(r.held) })).filter((h) => h.heldMinor > 0);
}

/**
 * A refund of `amountMinor` split over the gateways holding the money, the latest sale's first
 * (last in, first out), each no more than it holds. What no recorded sale covers (orders taken
 * before sales were recorded per gateway) goes back on `fallback`, the order's payment method.
 */
export function refundParts(held: readonly GatewayHolding[], amountMinor: number, fallback: string | null): RefundPart[] {
  const parts: RefundPart[] = [];
  let left = amountMinor;
  for (const h of held) {
    if (left <= 0) break;
    const take = Math.min(h.heldMinor, left);
    parts.push({ gateway: h.gateway, amountMinor: take });
    left -= take;
  }
  if (left > 0) {
    const same = parts.find((p) => p.gateway === fallback);
    if (same) same.amountMinor += left;
    else parts.push({ gateway: fallback, amountMinor: left });
  }
  return parts;
}

/** One transaction of a refund: the part given back through one gateway. */
export interface RefundTransaction extends RefundPart {
  id: string;
}

/**
 * Record a refund of `amountMinor` on the order, split over the gateways that hold the money (the
 * latest sale's first); each part is a `refund` transaction. At least one (the amount is positive).
 */
export async function refundTransactions(tx: Queryable, order: Pick<OrderRow, 'id' | 'store_id' | 'payment_method'>, amountMinor: number, now: Date): Promise<RefundTransaction[]> {
  const parts = refundParts(await heldByGateway(tx, order.id), amountMinor, order.payment_method);
  const transactions = parts.map((p) => ({ ...p, id: uuidv7(now.getTime()) }));
  for (const t of transactions) {
    await insertTransaction(tx, { id: t.id, orderId: order.id, storeId: order.store_id, kind: 'refund', status: 'success', gateway: t.gateway, amountMinor: t.amountMinor, now });
  }
  return transactions;
}
