// Refunds and cancellation (C7.1 `POST /orders/{id}/refund`, `POST /orders/{id}/cancel`) with
// exactly the events of app-api.md's table:
//   full refund            refunds/create, orders/updated, orders/cancelled (the order becomes canceled)
//   point-of-sale refund   refunds/create only (the table lists nothing else; the order's status stays)
//   cancel                 orders/updated, orders/cancelled
// `restock: true` returns stock once per line item (stock.ts).
import type { Deps } from '../deps.js';
import { badRequest } from '../http/errors.js';
import { uuidv7 } from '../ids.js';
import { formatMinor } from '../money.js';
import { emit } from '../outbox/emit.js';
import { readRefundOrCancel } from './order-input.js';
import { hundredthsStep } from '../currencies.js';
import { lineItemView, merchantOrderRecord, type OrderRow } from './order-view.js';
import { findOrderAnyStore, insertRefund, insertTransaction, recordChange, setOrder } from './orders.repo.js';
import { emitOrderEvents, lockForChange, paidAmount, type Actor } from './orders.service.js';
import { restockOrder } from './stock.js';
import { refundTransactions, type RefundTransaction } from './refund-gateways.js';

/** One line of a refund: how much of an order's line item it gives back. */
export interface RefundLine {
  id: string;
  line_item_id: string;
  quantity: number;
  restock_type: 'return' | 'cancel' | 'no_restock';
  subtotal_minor: number;
}

/**
 * The `refunds/create` body (Payload conventions): snake_case with refund_line_items[] and
 * transactions[]; `lines` follow the order's line items, one for one. Also the test delivery's
 * sample (src/webhooks/samples.ts).
 */
export function refundPayload(
  order: Pick<OrderRow, 'id' | 'currency' | 'line_items'>,
  refund: { id: string; transactions: RefundTransaction[]; reason: string | null; restock: boolean; lines: RefundLine[]; at: Date },
) {
  const iso = refund.at.toISOString();
  return {
    id: refund.id,
    order_id: order.id,
    created_at: iso,
    processed_at: iso,
    note: refund.reason,
    restock: refund.restock,
    refund_line_items: refund.lines.map((r, i) => ({
      id: r.id, line_item_id: r.line_item_id, quantity: r.quantity, restock_type: r.restock_type,
      subtotal: formatMinor(r.subtotal_minor), line_item: lineItemView(order.line_items[i], hundredthsStep(order.currency)),
    })),
    transactions: refund.transactions.map((t) => ({
      id: t.id, order_id: order.id, amount: formatMinor(t.amountMinor), kind: 'refund', status: 'success', gateway: t.gateway,
      currency: order.currency, created_at: iso,
    })),
  };
}

/**
 * A full refund gives back everything paid and not yet refunded; the order's `financial_status`
 * becomes `refunded`. Without `pos` the order is canceled too (`cancel_reason` from `reason`).
 * An order with nothing to give back (not paid, or refunded already) is a 400.
 */
export async function refundOrder(deps: Deps, orderId: string, body: unknown, actor: Actor) {
  const input = readRefundOrCancel(body);
  return deps.db.transaction(async (tx) => {
    const order = await lockForChange(tx, orderId, actor);
    const now = deps.clock.now();
    const amount = paidAmount(order) - order.refunded_minor;
    if (amount <= 0) {
      throw badRequest(order.refunded_minor > 0 ? 'The order is refunded already' : 'The order has not been paid; there is nothing to refund');
    }
    const restocked = new Set(input.restock ? (await restockOrder(tx, order.id)).map((l) => l.id) : []);
    // Back where it was taken: one transaction per gateway holding the money (refund-gateways.ts).
    const transactions = await refundTransactions(tx, order, amount, now);

    const refundId = uuidv7(now.getTime());
    const refundLines: RefundLine[] = order.line_items.map((l) => ({
      id: uuidv7(now.getTime()),
      line_item_id: l.id,
      quantity: l.quantity,
      restock_type: restocked.has(l.id) ? (input.pos ? 'return' : 'cancel') : 'no_restock',
      subtotal_minor: l.price_minor * l.quantity - l.total_discount_minor,
    }));
    await insertRefund(tx, {
      id: refundId, order_id: order.id, store_id: order.store_id, reason: input.reason, pos: input.pos, restock: input.restock,
      amount_minor: amount, transaction_id: transactions[0].id, refund_line_items: refundLines, staff_id: actor.userId, created_at: now,
    });

    const set: Record<string, unknown> = { refunded_minor: order.refunded_minor + amount, financial_status: 'refunded' };
    const becomesCanceled = !input.pos && order.status !== 'canceled';
    if (!input.pos) {
      set.status = 'canceled';
      set.cancelled_at = order.cancelled_at ?? now;
      set.cancel_reason = input.reason ?? order.cancel_reason;
    }
    await setOrder(tx, order.id, set, now);
    await recordChange(tx, {
      id: uuidv7(now.getTime()), orderId: order.id, storeId: order.store_id, action: input.pos ? 'refund_pos' : 'refund', userId: actor.userId,
      staffId: null, changes: { amount: formatMinor(amount), restock: input.restock, reason: input.reason }, now,
    });

    await emit(tx, {
      storeId: order.store_id,
      topic: 'refunds/create',
      payload: refundPayload(order, {
        id: refundId, transactions, reason: input.reason, restock: input.restock, lines: refundLines, at: now,
      }),
      now,
    });
    // A point-of-sale refund emits refunds/create alone (app-api.md Events table); consumers
    // re-fetch the order on a refund event to see its new financial status.
    if (input.pos) return merchantOrderRecord((await findOrderAnyStore(tx, order.id))!);
    return merchantOrderRecord(await emitOrderEvents(deps, tx, order.id, becomesCanceled ? ['orders/cancelled'] : [], now));
  });
}

/**
 * The merchant cancels: status `canceled`, `cancelled_at`, `cancel_reason` from `reason`. A canceled
 * order cannot be canceled again, nor a delivered one (app-api.md Order status: their status no
 * longer changes). Payment is not given back here: that is the refund.
 */
export async function cancelOrder(deps: Deps, orderId: string, body: unknown, actor: Actor) {
  const input = readRefundOrCancel(body);
  return deps.db.transaction(async (tx) => {
    const order = await lockForChange(tx, orderId, actor);
    if (order.status === 'canceled') throw badRequest('The order is canceled already');
    if (order.status === 'delivered') throw badRequest('The order is delivered; it can no longer be canceled');
    const now = deps.clock.now();
    if (input.restock) await restockOrder(tx, order.id);
    await setOrder(tx, order.id, { status: 'canceled', cancelled_at: order.cancelled_at ?? now, cancel_reason: input.reason }, now);
    await recordChange(tx, {
      id: uuidv7(now.getTime()), orderId: order.id, storeId: order.store_id, action: 'cancel', userId: actor.userId, staffId: null,
      changes: { restock: input.restock, reason: input.reason }, now,
    });
    return merchantOrderRecord(await emitOrderEvents(deps, tx, order.id, ['orders/cancelled'], now));
  });
}
