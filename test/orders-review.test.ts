// Review of the order area (orders, fulfillments, refunds, shipping zones, analytics): inputs that
// answered 500, a canceled order fulfilled through an update, and the concurrency promises of
// docs/decisions.md (Orders: stock, restock, fulfillment claims, refunds) under requests that really
// run at once (on PostgreSQL each request has its own connection).
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

const postOrder = (token: string, body: unknown) => h.req('POST', '/orders', { token, body });
const fulfil = (token: string, orderId: string, body?: unknown) => h.req('POST', `/api/v1/orders/${orderId}/fulfillments.json`, { token, body });
const updateFulfillment = (token: string, id: string, body: unknown) => h.req('PUT', `/api/v1/fulfillments/${id}.json`, { token, body });
const refund = (token: string, id: string, body?: unknown) => h.req('POST', `/orders/${id}/refund`, { token, body });
const cancel = (token: string, id: string, body?: unknown) => h.req('POST', `/orders/${id}/cancel`, { token, body });
const full = async (token: string, id: string) => (await h.req('GET', `/api/v1/orders/${id}.json`, { token })).json().order;
const sales = (token: string, query: string) => h.req('GET', `/api/v1/analytics/sales?${query}`, { token });

describe('POST /orders: numeric catalog ids (C14.2, C14.3)', () => {
  it('a JSON number past the 15 digits of a numeric id is a 400 naming the field, not a 500; nothing is written', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { stock: 5, variants: [{ value: 'S', price: 1000, stock: 5 }] });
    const big = Number.MAX_SAFE_INTEGER; // 16 digits
    expectEnvelopeError(await postOrder(s.merchant.token, orderBody(null, { line_items: [{ product_id: big, quantity: 1 }] })), 400, 'line_items[0].product_id');
    expectEnvelopeError(
      await postOrder(s.merchant.token, orderBody(null, { line_items: [{ product_id: p.id, variant_id: big, quantity: 1 }] })), 400, 'line_items[0].variant_id',
    );
    expect(await variantStock(h, p.variants[0])).toBe(5);
    expect((await h.db.query('SELECT 1 FROM orders WHERE store_id = $1', [s.merchant.storeId])).rows).toHaveLength(0);

    // The replacement products of an update read ids the same way.
    const o = await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ product_id: p.numId, variant_id: p.variants[0].numId, quantity: 1 }] }));
    expectEnvelopeError(await h.req('PUT', `/orders/update/${o.orderId}`, { token: s.merchant.token, body: { products: [{ productId: big, quantity: 1 }] } }), 400, 'products[0].productId');
    expect(await variantStock(h, p.variants[0])).toBe(4);
  });
});

describe('a canceled order cannot be fulfilled, by an update either (app-api.md Order status; decisions: Fulfillments)', () => {
  async function canceledWithPendingFulfillment() {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { stock: 5 });
    const o = await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ product_id: p.id, quantity: 2 }] }));
    const f = (await fulfil(s.accessToken, o.orderId, { status: 'pending' })).json().data.fulfillment;
    const released = (await fulfil(s.accessToken, o.orderId, { status: 'cancelled' })).json().data.fulfillment;
    expect((await cancel(s.merchant.token, o.orderId, { restock: true })).statusCode).toBe(200);
    return { s, o, f, released };
  }

  it('an update into a shipped state (success, shipped, delivered) or back from a released one is a 400; nothing changes, no event', async () => {
    const { s, o, f, released } = await canceledWithPendingFulfillment();
    for (const [id, status] of [[f.fulfillmentId, 'success'], [f.fulfillmentId, 'shipped'], [f.fulfillmentId, 'delivered'], [released.fulfillmentId, 'pending']]) {
      const evs = await eventsOf(h, s.merchant.storeId, async () => {
        expectEnvelopeError(await updateFulfillment(s.accessToken, id, { status }), 400, 'canceled');
      });
      expect(evs).toEqual([]);
    }
    const view = await full(s.accessToken, o.orderId);
    expect(view.fulfillment_status).toBe('unfulfilled');
    expect(view.line_items[0].fulfillment_status).toBeNull();
    const { rows } = await h.db.query<{ status: string }>('SELECT status FROM fulfillments WHERE order_id = $1 ORDER BY created_at, id', [o.orderId]);
    expect(rows.map((r) => r.status)).toEqual(['pending', 'cancelled']);
  });

  it('tracking changes and releasing a fulfillment of a canceled order still work', async () => {
    const { s, f } = await canceledWithPendingFulfillment();
    const tracked = await updateFulfillment(s.accessToken, f.fulfillmentId, { tracking_number: 'T-1' });
    expect(tracked.statusCode, tracked.body).toBe(200);
    const res = await updateFulfillment(s.accessToken, f.fulfillmentId, { status: 'cancelled' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.fulfillment).toMatchObject({ status: 'cancelled', trackingNumber: 'T-1' });
  });

  it('a shipment that left before the cancellation may still progress to delivered; the order stays canceled', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { stock: 5 });
    const o = await takeOrder(h, s.merchant.token, orderBody(p));
    const f = (await fulfil(s.accessToken, o.orderId, { status: 'success' })).json().data.fulfillment;
    expect((await cancel(s.merchant.token, o.orderId)).statusCode).toBe(200);
    const res = await updateFulfillment(s.accessToken, f.fulfillmentId, { status: 'delivered' });
    expect(res.statusCode, res.body).toBe(200);
    const { rows } = await h.db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [o.orderId]);
    expect(rows[0].status).toBe('canceled');
  });
});

describe('GET /api/v1/analytics/sales: custom ranges at the calendar\'s end (C6.7, C14.14)', () => {
  it('a range ending on 9999-12-31 is answered (the instant after it is in year 10000), not a 500', async () => {
    const s = await orderStore(h);
    const res = await sales(s.accessToken, 'range=custom&start_date=9999-12-30&end_date=9999-12-31');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.ordersData).toEqual({ totalOrders: 0, ordersByDay: { '9999-12-30': 0, '9999-12-31': 0 } });
  });

  it('orders and views on either side of midnight UTC fall on their own UTC day', async () => {
    const s = await orderStore(h);
    const at = async (iso: string, total: number) => {
      await h.db.query(
        `INSERT INTO orders (id, store_id, order_number, status, financial_status, total_minor, tax_minor, confirmation_number, processed_at, created_at, updated_at)
         VALUES ($1, $2, $3, 'paid', 'paid', $4, 0, 'X', $5, $5, $5)`,
        [uuidv7(), s.merchant.storeId, Math.floor(Math.random() * 1e9), total, iso],
      );
    };
    await at('2031-05-01T23:59:59.999Z', 1000);
    await at('2031-05-02T00:00:00.000Z', 2000);
    await at('2031-05-02T23:59:59.999Z', 4000);
    await at('2031-05-03T00:00:00.000Z', 8000);
    const one = (await sales(s.accessToken, 'range=custom&start_date=2031-05-02&end_date=2031-05-02')).json().data;
    expect(one).toMatchObject({ grossSale: 60, ordersData: { totalOrders: 2, ordersByDay: { '2031-05-02': 2 } }, avgSalePerDay: 60 });
    const three = (await sales(s.accessToken, 'range=custom&start_date=2031-05-01&end_date=2031-05-03')).json().data;
    expect(three.ordersData.ordersByDay).toEqual({ '2031-05-01': 1, '2031-05-02': 2, '2031-05-03': 1 });
    expect(three).toMatchObject({ grossSale: 150, averageOrderValue: 37.5, avgSalePerDay: 50, avgOrders: 1.33 });
  });
});

describe('at the same moment (on PostgreSQL: separate connections)', () => {
  it('two orders for the last unit of a variant: exactly one is taken', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { variants: [{ value: 'L', price: 1500, stock: 1 }] });
    const body = () => orderBody(null, { line_items: [{ product_id: p.id, variant_id: p.variants[0].id, quantity: 1 }] });
    const results = await Promise.all([postOrder(s.merchant.token, body()), postOrder(s.merchant.token, body())]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 400]);
    expect(await variantStock(h, p.variants[0])).toBe(0);
  });

  it('replacement products crossing each other (A -> B beside B -> A) both succeed, stock exact: no deadlock', async () => {
    const s = await orderStore(h);
    const a = await insertProduct(h, s.merchant.storeId, { stock: 100 });
    const b = await insertProduct(h, s.merchant.storeId, { variants: [{ value: 'M', price: 900, stock: 100 }] });
    const lineA = { product_id: a.id, quantity: 1 };
    const lineB = { product_id: b.id, variant_id: b.variants[0].id, quantity: 1 };
    const rounds = 8;
    const codes: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const [o1, o2] = [await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [lineA] })), await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [lineB] }))];
      const results = await Promise.all([
        h.req('PUT', `/orders/update/${o1.orderId}`, { token: s.merchant.token, body: { products: [{ productId: b.id, varientId: b.variants[0].id, quantity: 2 }] } }),
        h.req('PATCH', `/orders/update-signle-order/${o2.orderId}`, { token: s.merchant.token, body: { products: [{ productId: a.id, quantity: 3 }] } }),
      ]);
      codes.push(...results.map((r) => r.statusCode));
    }
    expect(codes).toEqual(new Array(rounds * 2).fill(200));
    // Each round: o1 ends with 2 of B, o2 with 3 of A.
    expect(await stockOf(h, a)).toBe(100 - 3 * rounds);
    expect(await variantStock(h, b.variants[0])).toBe(100 - 2 * rounds);
  });

  it('fulfillments of one line item: they never claim more than the line has', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { stock: 10 });
    const o = await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ product_id: p.id, quantity: 3 }] }));
    const line = (await full(s.accessToken, o.orderId)).line_items[0].id;
    const results = await Promise.all(Array.from({ length: 4 }, () => fulfil(s.accessToken, o.orderId, { status: 'success', line_items: [{ id: line, quantity: 2 }] })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 400, 400, 400]);
    const view = await full(s.accessToken, o.orderId);
    expect(view.fulfillment_status).toBe('partial');
    expect(view.line_items[0].fulfillment_status).toBe('partial');
    // What is left (1) can still be fulfilled, and then nothing more.
    const rest = await Promise.all([fulfil(s.accessToken, o.orderId, {}), fulfil(s.accessToken, o.orderId, {})]);
    expect(rest.map((r) => r.statusCode).sort()).toEqual([201, 400]);
    expect(rest.find((r) => r.statusCode === 201)!.json().data.fulfillment.lineItems).toEqual([]);
  });

  it('full refunds of one order: one gives back what was paid, once; stock back once', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 10 });
    const o = await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ product_id: p.id, quantity: 2 }], shipping_line: { title: 'Std', price: '5.00' } }));
    expect(await stockOf(h, p)).toBe(8);
    const evs = await eventsOf(h, s.merchant.storeId, async () => {
      const results = await Promise.all([
        refund(s.merchant.token, o.orderId, { restock: true }), refund(s.merchant.token, o.orderId, { restock: true }), refund(s.merchant.token, o.orderId, { restock: true, pos: true }),
      ]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400, 400]);
    });
    expect(evs.filter((e) => e.topic === 'refunds/create')).toHaveLength(1);
    expect(await stockOf(h, p)).toBe(10);
    const view = await full(s.accessToken, o.orderId);
    expect(view).toMatchObject({ financial_status: 'refunded', total_price: '30.00', total_refunded_amount: '30.00', total_net_amount: '0.00' });
    expect(view.transactions.filter((t: any) => t.kind === 'refund').map((t: any) => t.amount)).toEqual(['30.00']);
  });
});

describe('stock moves and catalog edits lock a product before its variants (a variant\'s stock writes its product row: migration 0008)', () => {
  it('orders taking a variant beside merchant product updates with variants all succeed, stock exact: no deadlock', async () => {
    const s = await orderStore(h);
    const created = await h.req('POST', '/products', {
      token: s.merchant.token,
      body: { title: 'Lock Tee', variants: [{ name: 'Size', value: 'S', price: 10, stock: 1000 }, { name: 'Size', value: 'M', price: 10, stock: 1000 }] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const p = created.json().data;
    const [small, medium] = p.variants.map((v: { id: number }) => v.id);
    const line = (variant: number) => ({ product_id: p.product_id, variant_id: variant, quantity: 1 });
    const rounds = 20;
    const codes: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const results = await Promise.all([
        postOrder(s.merchant.token, orderBody(null, { line_items: [line(small)] })),
        h.req('PUT', `/products/${p.product_id}`, { token: s.merchant.token, body: { variants: [{ varientId: small, sku: `S-${i}` }, { varientId: medium, sku: `M-${i}` }] } }),
        postOrder(s.merchant.token, orderBody(null, { line_items: [line(medium)] })),
      ]);
      codes.push(...results.map((r) => r.statusCode));
    }
    expect(codes).toEqual(Array.from({ length: rounds }, () => [201, 200, 201]).flat());
    const { rows } = await h.db.query<{ stock: number }>('SELECT stock FROM variants WHERE product_id = $1 ORDER BY position', [p.product_id]);
    expect(rows.map((r) => r.stock)).toEqual([1000 - rounds, 1000 - rounds]);
  }, 60_000);
});

describe('an order with a new customer\'s email beside a customer create of that email (C7.1: the order takes the store\'s customer of its email)', () => {
  it('the order is taken, never refused for the email taken meanwhile, and belongs to the one customer of that email, whichever came first', async () => {
    const s = await orderStore(h, ['read_orders', 'write_orders', 'read_customers', 'write_customers']);
    const p = await insertProduct(h, s.merchant.storeId, { stock: 1000 });
    const rounds = 12;
    for (let i = 0; i < rounds; i++) {
      const email = `race-${i}-${uuidv7()}@example.com`;
      const [order, customer] = await Promise.all([
        postOrder(s.merchant.token, orderBody(p, { customer: { email, first_name: 'Ada', last_name: 'Lovelace' } })),
        h.req('POST', '/api/v1/customers.json', { token: s.accessToken, body: { customer: { email: email.toUpperCase(), first_name: 'Grace' } } }),
      ]);
      expect(order.statusCode, order.body).toBe(201);
      expect([201, 400], customer.body).toContain(customer.statusCode);
      const { rows } = await h.db.query<{ id: string }>('SELECT id FROM customers WHERE store_id = $1 AND lower(email) = $2', [s.merchant.storeId, email]);
      expect(rows).toHaveLength(1);
      const placed = await h.db.query<{ customer_id: string }>('SELECT customer_id FROM orders WHERE id = $1', [order.json().data.orderId]);
      expect(placed.rows[0].customer_id).toBe(rows[0].id);
    }
  }, 60_000);
});
