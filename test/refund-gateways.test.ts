// A refund goes back through the gateways that took the money (app-api.md Order `transactions[]`,
// the refunds/create body's `transactions[]`; C7.1 refund, C7.2 update), not through the order's
// `payment_method`, which is only the method of the merchant's last update: a card payment was
// shown going back as cash on delivery, and a card-and-cash order was refunded wholly in cash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { eventsOf } from './helpers/events.js';
import { insertProduct, orderBody, orderStore, takeOrder } from './helpers/orders.js';
import { refundParts } from '../src/orders/refund-gateways.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const put = (token: string, id: string, body: unknown) => h.req('PUT', `/orders/update/${id}`, { token, body });
const refund = (token: string, id: string) => h.req('POST', `/orders/${id}/refund`, { token, body: {} });
const full = async (token: string, id: string) => (await h.req('GET', `/api/v1/orders/${id}.json`, { token })).json().order;
const moves = (view: { transactions: { kind: string; amount: string; gateway: string }[] }) => view.transactions.map((t) => `${t.kind}:${t.amount}:${t.gateway}`);

describe('C7.1 a refund goes back where the money was taken', () => {
  it('a card order whose method was later set to cod (nothing collected) is refunded by card, in the order and in refunds/create', async () => {
    const s = await orderStore(h);
    const a = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const o = await takeOrder(h, s.merchant.token, orderBody(a, { paymentMethod: 'card' }));
    expect((await put(s.merchant.token, o.orderId, { paymentMethod: 'cod' })).statusCode).toBe(200);
    const evs = await eventsOf(h, s.merchant.storeId, async () => expect((await refund(s.merchant.token, o.orderId)).statusCode).toBe(200));
    expect(moves(await full(s.accessToken, o.orderId))).toEqual(['sale:10.00:card', 'refund:10.00:card']);
    const body = evs.find((e) => e.topic === 'refunds/create')!.payload as { transactions: { amount: string; gateway: string }[] };
    expect(body.transactions.map((t) => `${t.amount}:${t.gateway}`)).toEqual(['10.00:card']);
  });

  it('an order paid by card and then in cash is refunded in two parts, each through its gateway', async () => {
    const s = await orderStore(h);
    const a = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const o = await takeOrder(h, s.merchant.token, orderBody(a, { paymentMethod: 'card' }));
    await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 3 }] });
    expect((await put(s.merchant.token, o.orderId, { paymentMethod: 'cash' })).statusCode).toBe(200);
    const evs = await eventsOf(h, s.merchant.storeId, async () => expect((await refund(s.merchant.token, o.orderId)).statusCode).toBe(200));
    const view = await full(s.accessToken, o.orderId);
    expect(moves(view).slice(2).sort()).toEqual(['refund:10.00:card', 'refund:20.00:cash']);
    expect(view).toMatchObject({ financial_status: 'refunded', total_refunded_amount: '30.00' });
    const body = evs.find((e) => e.topic === 'refunds/create')!.payload as { transactions: { amount: string; gateway: string }[] };
    expect(body.transactions.map((t) => `${t.amount}:${t.gateway}`).sort()).toEqual(['10.00:card', '20.00:cash']);
  });

  it('an order made cheaper gives the excess back through the gateway of the latest sale first', async () => {
    const s = await orderStore(h);
    const a = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const o = await takeOrder(h, s.merchant.token, orderBody(a, { paymentMethod: 'card' }));
    await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 3 }] });
    await put(s.merchant.token, o.orderId, { paymentMethod: 'cash' });
    await put(s.merchant.token, o.orderId, { paymentMethod: 'upi' });
    expect((await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 1 }] })).statusCode).toBe(200);
    expect(moves(await full(s.accessToken, o.orderId))).toEqual(['sale:10.00:card', 'sale:20.00:cash', 'refund:20.00:cash']);
  });

  it('the split: latest sale first, each part within what its gateway holds, what no sale covers on the order\'s method', () => {
    const held = [{ gateway: 'cash', heldMinor: 2000 }, { gateway: 'card', heldMinor: 1000 }];
    expect(refundParts(held, 2500, 'upi')).toEqual([{ gateway: 'cash', amountMinor: 2000 }, { gateway: 'card', amountMinor: 500 }]);
    expect(refundParts(held, 500, 'upi')).toEqual([{ gateway: 'cash', amountMinor: 500 }]);
    expect(refundParts(held, 3500, 'card')).toEqual([{ gateway: 'cash', amountMinor: 2000 }, { gateway: 'card', amountMinor: 1500 }]);
    expect(refundParts([], 700, 'card')).toEqual([{ gateway: 'card', amountMinor: 700 }]);
  });
});
