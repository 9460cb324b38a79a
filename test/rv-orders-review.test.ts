// Review of the order area (rv-orders): replacement products against what was paid (C7.1, C7.2;
// app-api.md Order `total_refunded_amount`, `total_net_amount`, `transactions[]`), and the same
// update paying in cash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { eventsOf } from './helpers/events.js';
import { insertProduct, orderBody, orderStore, takeOrder } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const put = (token: string, id: string, body: unknown) => h.req('PUT', `/orders/update/${id}`, { token, body });
const full = async (token: string, id: string) => (await h.req('GET', `/api/v1/orders/${id}.json`, { token })).json().order;
const txs = (view: any) => view.transactions.map((t: any) => [t.kind, t.amount, t.gateway]);

async function paidOrder(quantity: number) {
  const s = await orderStore(h);
  const a = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
  const o = await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ product_id: a.id, quantity }], paymentMethod: 'card' }));
  return { s, a, o };
}

describe('C7.1 replacement products that make a paid order cheaper', () => {
  it('give the difference back at once: paid what it costs, refunds never exceed total_price, net never negative', async () => {
    const { s, a, o } = await paidOrder(3);
    const res = await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 1 }] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ financialStatus: 'paid', totalPrice: '10.00' });
    let view = await full(s.accessToken, o.orderId);
    expect(view).toMatchObject({ financial_status: 'paid', total_price: '10.00', total_refunded_amount: '0.00', total_net_amount: '10.00' });
    // The 20.00 paid beyond the new total went back to the customer, on the order's gateway.
    expect(txs(view)).toEqual([['sale', '30.00', 'card'], ['refund', '20.00', 'card']]);

    // The full refund gives back what the customer still has in the order: 10.00, not 30.00.
    const r = await h.req('POST', `/orders/${o.orderId}/refund`, { token: s.merchant.token, body: {} });
    expect(r.statusCode, r.body).toBe(200);
    view = await full(s.accessToken, o.orderId);
    expect(view).toMatchObject({ financial_status: 'refunded', total_price: '10.00', total_refunded_amount: '10.00', total_net_amount: '0.00' });
    expect(txs(view)).toEqual([['sale', '30.00', 'card'], ['refund', '20.00', 'card'], ['refund', '10.00', 'card']]);
    const sales = view.transactions.filter((t: any) => t.kind === 'sale').reduce((n: number, t: any) => n + Number(t.amount), 0);
    const refunds = view.transactions.filter((t: any) => t.kind === 'refund').reduce((n: number, t: any) => n + Number(t.amount), 0);
    expect(sales - refunds).toBe(0);
  });

  it('a point-of-sale refund after it: the customer\'s total_spent is 0.00, never negative (C6.3 customer from the same figures)', async () => {
    const { s, a, o } = await paidOrder(3);
    await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 1 }] });
    const r = await h.req('POST', `/orders/${o.orderId}/refund`, { token: s.merchant.token, body: { pos: true } });
    expect(r.statusCode, r.body).toBe(200);
    const view = await full(s.accessToken, o.orderId);
    expect(view).toMatchObject({ financial_status: 'refunded', cancelled: false, total_refunded_amount: '10.00', total_net_amount: '0.00' });
    const customer = (await h.req('GET', `/api/v1/customers/${view.customer.id}.json`, { token: s.accessToken })).json().customer;
    expect(customer).toMatchObject({ orders_count: 1, total_spent: '0.00' });
  });

  it('a partially paid order made cheaper than what was paid is paid, the rest given back; cheaper but still above: partially_paid', async () => {
    const { s, a, o } = await paidOrder(1);
    expect((await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 4 }] })).json().data.financialStatus).toBe('partially_paid');
    expect((await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 2 }] })).json().data.financialStatus).toBe('partially_paid');
    const down = await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 1, price: '4.00' }] });
    expect(down.json().data).toMatchObject({ financialStatus: 'paid', totalPrice: '4.00' });
    const view = await full(s.accessToken, o.orderId);
    expect(txs(view)).toEqual([['sale', '10.00', 'card'], ['refund', '6.00', 'card']]);
    expect(view.total_net_amount).toBe('4.00');
  });
});

describe('C7.2 replacement products and a cash payment in one update', () => {
  it('a paid order that grows and is paid in cash in the same request is paid, with a sale for the difference', async () => {
    const { s, a, o } = await paidOrder(1);
    let res: any;
    const evs = await eventsOf(h, s.merchant.storeId, async () => {
      res = await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 3 }], paymentMethod: 'cash' });
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ financialStatus: 'paid', totalPrice: '30.00', paymentMethod: 'cash' });
    expect(evs.map((e) => e.topic)).toEqual(['orders/updated', 'orders/paid']);
    const view = await full(s.accessToken, o.orderId);
    expect(txs(view)).toEqual([['sale', '10.00', 'card'], ['sale', '20.00', 'cash']]);
  });
});

describe('C7.1 replacement products and the automatic discounts of a checkout (C11.3)', () => {
  it('the automatic discounts computed for the old lines no longer show once the totals leave them out', async () => {
    const { s, a, o } = await paidOrder(2);
    // As a checkout's completion writes them: 5.00 off the line by a function (C11.3).
    await h.db.query(
      `UPDATE orders SET automatic_discounts = $2::jsonb, discount_minor = 500, subtotal_minor = 1500, total_minor = 1500, paid_minor = 1500 WHERE id = $1`,
      [o.orderId, JSON.stringify([{ title: 'Bundle', value: '5.00', value_type: 'fixed_amount', amount_minor: 500 }])],
    );
    await h.db.query('UPDATE order_line_items SET total_discount_minor = 500 WHERE order_id = $1', [o.orderId]);
    expect((await full(s.accessToken, o.orderId)).discount_applications).toEqual([{ type: 'automatic', code: null, value: '5.00', value_type: 'fixed_amount', title: 'Bundle' }]);
    const res = await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 1 }] });
    expect(res.statusCode, res.body).toBe(200);
    const view = await full(s.accessToken, o.orderId);
    expect(view).toMatchObject({ total_discounts: '0.00', total_price: '10.00' });
    expect(view.line_items.map((l: any) => l.total_discount)).toEqual(['0.00']);
    expect(view.discount_applications).toEqual([]);
  });
});

describe('orders/paid when the order becomes paid (C7.2; decisions: an app acting on payment hears of every paid order)', () => {
  it('a partially paid order whose replacement products cost no more than was paid becomes paid: orders/updated, orders/paid', async () => {
    const { s, a, o } = await paidOrder(1);
    await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 3 }] });
    let res: any;
    const evs = await eventsOf(h, s.merchant.storeId, async () => {
      res = await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 1 }] });
    });
    expect(res.json().data.financialStatus).toBe('paid');
    expect(evs.map((e) => e.topic)).toEqual(['orders/updated', 'orders/paid']);
    expect(evs[1].payload.financial_status).toBe('paid');
    // An order that stays paid hears nothing more of payment.
    const again = await eventsOf(h, s.merchant.storeId, () => put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 1 }] }));
    expect(again.map((e) => e.topic)).toEqual(['orders/updated']);
  });
});
