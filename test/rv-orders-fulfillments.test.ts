// Review of fulfillments (rv-orders): the order's line items are part of the order (app-api.md Order
// `line_items[].fulfillment_status`), so a fulfillment that changes them changes the order:
// `orders/updated` with the order after the change, and a new `updated_at` (decisions: Fulfillments,
// "orders/updated follows whenever the order changed").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { eventsOf } from './helpers/events.js';
import { insertProduct, orderBody, orderStore, takeOrder } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const create = (token: string, orderId: string, body?: unknown) => h.req('POST', `/api/v1/orders/${orderId}/fulfillments.json`, { token, body });
const update = (token: string, id: string, body: unknown) => h.req('PUT', `/api/v1/fulfillments/${id}.json`, { token, body });
const full = async (token: string, id: string) => (await h.req('GET', `/api/v1/orders/${id}.json`, { token })).json().order;

async function setup() {
  const s = await orderStore(h);
  const a = await insertProduct(h, s.merchant.storeId, { stock: 50 });
  const b = await insertProduct(h, s.merchant.storeId, { stock: 50 });
  const o = await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ product_id: a.id, quantity: 2 }, { product_id: b.id, quantity: 2 }], paymentMethod: 'card' }));
  const view = await full(s.accessToken, o.orderId);
  return { s, o, lineA: view.line_items[0].id as string, lineB: view.line_items[1].id as string };
}

describe('a fulfillment that changes only line items still changes the order', () => {
  it('a second partial shipment (the order stays partial): orders/updated with the line now partial, updated_at moves', async () => {
    const { s, o, lineA, lineB } = await setup();
    expect((await create(s.accessToken, o.orderId, { status: 'success', line_items: [{ id: lineA, quantity: 1 }] })).statusCode).toBe(201);
    const before = await full(s.accessToken, o.orderId);
    expect(before.line_items.map((l: any) => l.fulfillment_status)).toEqual(['partial', null]);
    await new Promise((r) => setTimeout(r, 5));
    let res: any;
    const evs = await eventsOf(h, s.merchant.storeId, async () => {
      res = await create(s.accessToken, o.orderId, { status: 'success', line_items: [{ id: lineB, quantity: 1 }] });
    });
    expect(res.statusCode, res.body).toBe(201);
    const after = await full(s.accessToken, o.orderId);
    expect(after).toMatchObject({ fulfillment_status: 'partial' });
    expect(after.line_items.map((l: any) => l.fulfillment_status)).toEqual(['partial', 'partial']);
    expect(evs.map((e) => e.topic)).toEqual(['fulfillments/create', 'orders/updated']);
    expect(evs[1].payload).toEqual(after);
    expect(after.updated_at > before.updated_at).toBe(true);
  });

  it('cancelling that shipment (the order stays partial): orders/updated with the line back to null', async () => {
    const { s, o, lineA, lineB } = await setup();
    await create(s.accessToken, o.orderId, { status: 'success', line_items: [{ id: lineA, quantity: 1 }] });
    const second = (await create(s.accessToken, o.orderId, { status: 'success', line_items: [{ id: lineB, quantity: 1 }] })).json().data.fulfillment;
    const evs = await eventsOf(h, s.merchant.storeId, () => update(s.accessToken, second.fulfillmentId, { status: 'cancelled' }));
    const after = await full(s.accessToken, o.orderId);
    expect(after.line_items.map((l: any) => l.fulfillment_status)).toEqual(['partial', null]);
    expect(evs.map((e) => e.topic)).toEqual(['fulfillments/update', 'orders/updated']);
    expect(evs[1].payload).toEqual(after);
  });

  it('a fulfillment that changes nothing of the order (pending) emits fulfillments/create alone', async () => {
    const { s, o, lineA } = await setup();
    const evs = await eventsOf(h, s.merchant.storeId, () => create(s.accessToken, o.orderId, { line_items: [{ id: lineA, quantity: 1 }] }));
    expect(evs.map((e) => e.topic)).toEqual(['fulfillments/create']);
  });
});
