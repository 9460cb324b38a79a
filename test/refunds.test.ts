// Refunds and cancellation (C7.1 `POST /orders/{id}/refund` `{ reason?, restock?, pos? }`,
// `POST /orders/{id}/cancel` `{ reason?, restock? }`; C14.3 reason -> cancel_reason; app-api.md
// Which operation emits which event, plus orders/updated on every order change; Refund body with
// refund_line_items[] and transactions[]).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { uuidv7 } from '../src/ids.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { eventsOf } from './helpers/events.js';
import { insertProduct, orderBody, orderStore, stockOf, takeOrder, variantStock } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const refund = (token: string, id: string, body?: unknown) => h.req('POST', `/orders/${id}/refund`, { token, body });
const cancel = (token: string, id: string, body?: unknown) => h.req('POST', `/orders/${id}/cancel`, { token, body });
const full = async (token: string, id: string) => (await h.req('GET', `/api/v1/orders/${id}.json`, { token })).json().order;

async function paidOrder(paymentMethod = 'card') {
  const s = await orderStore(h);
  const plain = await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 10 });
  const tee = await insertProduct(h, s.merchant.storeId, { variants: [{ value: 'S', price: 2000, stock: 5 }] });
  const o = await takeOrder(h, s.merchant.token, orderBody(null, {
    line_items: [{ product_id: plain.id, quantity: 2 }, { product_id: tee.id, variant_id: tee.variants[0].id, quantity: 1 }],
    shipping_line: { title: 'Std', code: 'std', price: '5.00' }, paymentMethod,
  }));
  const stock = async () => [await stockOf(h, plain), await variantStock(h, tee.variants[0])];
  expect(await stock()).toEqual([8, 4]);
  return { s, o, stock };
}

describe('full refund (C7.1)', () => {
  it('refunded and canceled, totals, reason, restock; refunds/create, orders/updated, orders/cancelled', async () => {
    const { s, o, stock } = await paidOrder();
    let res: any;
    const evs = await eventsOf(h, s.merchant.storeId, async () => {
      res = await refund(s.merchant.token, o.orderId, { reason: 'customer', restock: true });
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ orderId: o.orderId, status: 'canceled', financialStatus: 'refunded', totalPrice: '50.00' });
    expect(evs.map((e) => e.topic)).toEqual(['refunds/create', 'orders/updated', 'orders/cancelled']);
    expect(await stock()).toEqual([10, 5]);

    const view = await full(s.accessToken, o.orderId);
    expect(view).toMatchObject({
      financial_status: 'refunded', cancelled: true, cancelled_at: expect.any(String), cancel_reason: 'customer',
      total_price: '50.00', total_refunded_amount: '50.00', total_net_amount: '0.00',
    });
    expect(view.transactions.map((t: any) => [t.kind, t.status, t.amount, t.gateway])).toEqual([['sale', 'success', '50.00', 'card'], ['refund', 'success', '50.00', 'card']]);
    expect(evs[1].payload).toEqual(view);
    expect(evs[2].payload).toEqual(view);

    const body = evs[0].payload;
    expect(body).toMatchObject({ id: expect.any(String), order_id: o.orderId, note: 'customer', restock: true, created_at: expect.any(String) });
    expect(body.refund_line_items).toEqual([
      { id: expect.any(String), line_item_id: view.line_items[0].id, quantity: 2, restock_type: 'cancel', subtotal: '25.00', line_item: view.line_items[0] },
      { id: expect.any(String), line_item_id: view.line_items[1].id, quantity: 1, restock_type: 'cancel', subtotal: '20.00', line_item: view.line_items[1] },
    ]);
    expect(body.transactions).toEqual([{
      id: view.transactions[1].id, order_id: o.orderId, amount: '50.00', kind: 'refund', status: 'success', gateway: 'card', currency: 'USD', created_at: body.created_at,
    }]);
  });

  it('without restock the stock stays; refunding again is a 400 and changes nothing', async () => {
    const { s, o, stock } = await paidOrder();
    expect((await refund(s.merchant.token, o.orderId)).statusCode).toBe(200);
    expect(await stock()).toEqual([8, 4]);
    const again = await eventsOf(h, s.merchant.storeId, async () => expectEnvelopeError(await refund(s.merchant.token, o.orderId, { restock: true }), 400, 'refunded already'));
    expect(again).toEqual([]);
    expect(await stock()).toEqual([8, 4]);
  });

  it('a pending (unpaid) order has nothing to refund: 400', async () => {
    const { s, o } = await paidOrder('cod');
    expectEnvelopeError(await refund(s.merchant.token, o.orderId), 400, 'not been paid');
  });

  it('an order canceled earlier is refunded without a second orders/cancelled', async () => {
    const { s, o } = await paidOrder();
    expect((await cancel(s.merchant.token, o.orderId, { reason: 'fraud' })).statusCode).toBe(200);
    const evs = await eventsOf(h, s.merchant.storeId, () => refund(s.merchant.token, o.orderId));
    expect(evs.map((e) => e.topic)).toEqual(['refunds/create', 'orders/updated']);
    expect((await full(s.accessToken, o.orderId)).cancel_reason).toBe('fraud');
  });
});

describe('point-of-sale refund (pos: true)', () => {
  it('refunds without canceling: refunds/create only (app-api.md Events table)', async () => {
    const { s, o, stock } = await paidOrder();
    let res: any;
    const evs = await eventsOf(h, s.merchant.storeId, async () => {
      res = await refund(s.merchant.token, o.orderId, { pos: true, restock: true, reason: 'returned in store' });
    });
    expect(res.json().data).toMatchObject({ status: 'paid', financialStatus: 'refunded' });
    expect(evs.map((e) => e.topic)).toEqual(['refunds/create']);
    expect(evs[0].payload.refund_line_items.map((r: any) => r.restock_type)).toEqual(['return', 'return']);
    expect(await stock()).toEqual([10, 5]);
    const view = await full(s.accessToken, o.orderId);
    expect(view).toMatchObject({ cancelled: false, cancelled_at: null, cancel_reason: null, total_refunded_amount: '50.00', total_net_amount: '0.00' });
  });
});

describe('cancel (C7.1)', () => {
  it('canceled with cancel_reason, restock once; orders/updated and orders/cancelled', async () => {
    const { s, o, stock } = await paidOrder('cod');
    let res: any;
    const evs = await eventsOf(h, s.merchant.storeId, async () => {
      res = await cancel(s.merchant.token, o.orderId, { reason: 'inventory', restock: true });
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'canceled', financialStatus: 'pending' });
    expect(evs.map((e) => e.topic)).toEqual(['orders/updated', 'orders/cancelled']);
    expect(evs[1].payload).toMatchObject({ cancelled: true, cancel_reason: 'inventory' });
    expect(await stock()).toEqual([10, 5]);
    // Twice: a 400, nothing more given back, no event.
    const again = await eventsOf(h, s.merchant.storeId, async () => expectEnvelopeError(await cancel(s.merchant.token, o.orderId, { restock: true }), 400, 'canceled already'));
    expect(again).toEqual([]);
    expect(await stock()).toEqual([10, 5]);
  });

  it('concurrent cancels with restock: one wins, stock back once', async () => {
    const { s, o, stock } = await paidOrder();
    const results = await Promise.all(Array.from({ length: 4 }, () => cancel(s.merchant.token, o.orderId, { restock: true })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400, 400, 400]);
    expect(await stock()).toEqual([10, 5]);
  });

  it('concurrent refund and cancel with restock: stock back once', async () => {
    const { s, o, stock } = await paidOrder();
    const results = await Promise.all([refund(s.merchant.token, o.orderId, { restock: true }), cancel(s.merchant.token, o.orderId, { restock: true })]);
    expect(results.some((r) => r.statusCode === 200)).toBe(true);
    expect(await stock()).toEqual([10, 5]);
  });

  it('no body is fine; a delivered order cannot be canceled; 404 and 403 as for updates', async () => {
    const { s, o } = await paidOrder();
    const other = await orderStore(h);
    expectEnvelopeError(await cancel(other.merchant.token, o.orderId), 403);
    expectEnvelopeError(await refund(other.merchant.token, o.orderId), 403);
    expectEnvelopeError(await cancel(s.merchant.token, uuidv7()), 404);
    expectEnvelopeError(await refund(s.merchant.token, uuidv7()), 404);
    expectEnvelopeError(await cancel(s.merchant.token, o.orderId, { restock: 'yes' }), 400, 'restock');
    await h.db.query(`UPDATE orders SET status = 'delivered' WHERE id = $1`, [o.orderId]);
    expectEnvelopeError(await cancel(s.merchant.token, o.orderId), 400, 'delivered');
    await h.db.query(`UPDATE orders SET status = 'paid' WHERE id = $1`, [o.orderId]);
    const res = await cancel(s.merchant.token, o.orderId);
    expect(res.statusCode).toBe(200);
    expect((await full(s.accessToken, o.orderId)).cancel_reason).toBeNull();
  });
});
