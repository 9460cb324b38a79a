// Fulfillments (app-api.md Fulfillment; `POST /api/v1/orders/{orderId}/fulfillments.json` and
// `PUT /api/v1/fulfillments/{fulfillment_id}.json`, scope write_orders, envelopes, C5.1) and the order moves of
// app-api.md's Order status table: success on all or part -> shipped / partial with
// fulfillment_status (coverage cumulative, C14.3), update to delivered -> delivered, the customer
// email when the order moves into shipped or partial and notify_customer is true (email log, C12.3).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { operatorToken, storeWithApp } from './helpers/actors.js';
import { uuidv7 } from '../src/ids.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { eventsOf } from './helpers/events.js';
import { insertProduct, orderBody, orderStore, takeOrder, uniq } from './helpers/orders.js';

let h: Harness;
let ops: string;
beforeAll(async () => {
  h = await createHarness();
  ops = await operatorToken(h);
});
afterAll(() => h?.close());

const create = (token: string, orderId: string, body?: unknown) => h.req('POST', `/api/v1/orders/${orderId}/fulfillments.json`, { token, body });
const update = (token: string, id: string, body: unknown) => h.req('PUT', `/api/v1/fulfillments/${id}.json`, { token, body });
const full = async (token: string, id: string) => (await h.req('GET', `/api/v1/orders/${id}.json`, { token })).json().order;
const emails = async (to: string) => (await h.req('GET', `/apps/admin/emails?to=${encodeURIComponent(to)}`, { token: ops })).json().data.emails;

/** An order of two line items (2 x A, 1 x B) to a fresh email. */
async function setup(opts: { status?: string } = {}) {
  const s = await orderStore(h);
  const a = await insertProduct(h, s.merchant.storeId, { title: 'Alpha', stock: 50 });
  const b = await insertProduct(h, s.merchant.storeId, { title: 'Beta', stock: 50 });
  const email = `ship-${uniq()}@example.com`;
  const o = await takeOrder(h, s.merchant.token, orderBody(null, {
    customer: { email }, line_items: [{ product_id: a.id, quantity: 2 }, { product_id: b.id, quantity: 1 }], paymentMethod: 'card',
  }));
  if (opts.status) await h.db.query('UPDATE orders SET status = $2 WHERE id = $1', [o.orderId, opts.status]);
  const view = await full(s.accessToken, o.orderId);
  return { s, o, email, lineA: view.line_items[0].id as string, lineB: view.line_items[1].id as string };
}

async function fulfil(token: string, orderId: string, body: unknown) {
  const res = await create(token, orderId, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.fulfillment;
}

describe('POST /api/v1/orders/{orderId}/fulfillments.json', () => {
  it('201 envelope data.fulfillment with every field; defaults pending, notify true, whole order as []', async () => {
    const { s, o } = await setup();
    let res: any;
    const evs = await eventsOf(h, s.merchant.storeId, async () => {
      res = await create(s.accessToken, o.orderId, {});
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      status: 201, state: 'success', message: null, count: null, pagination: null,
      data: {
        fulfillment: {
          fulfillmentId: expect.any(String), orderId: o.orderId, status: 'pending', serviceId: null, trackingNumber: null, trackingUrl: null,
          trackingCompany: null, lineItems: [], notifyCustomer: true, createdAt: expect.any(String), updatedAt: expect.any(String),
        },
      },
    });
    // A pending fulfillment does not move the order.
    expect(evs.map((e) => e.topic)).toEqual(['fulfillments/create']);
    expect(evs[0].payload).toEqual(res.json().data.fulfillment);
    expect((await full(s.accessToken, o.orderId)).fulfillment_status).toBe('unfulfilled');
  });

  it('keeps what it is given: tracking (carrier verbatim), service id, notify flag, named line items; the body may be wrapped', async () => {
    const { s, o, lineA } = await setup();
    const f = await fulfil(s.accessToken, o.orderId, {
      fulfillment: {
        status: 'open', tracking_number: 'TRK-1', tracking_company: 'Bob\'s Bikes Courier', tracking_url: 'https://track.example.com/TRK-1?x=1',
        service_id: 'svc-9', notify_customer: false, line_items: [{ id: lineA, quantity: 1 }],
      },
    });
    expect(f).toMatchObject({
      status: 'open', trackingNumber: 'TRK-1', trackingCompany: 'Bob\'s Bikes Courier', trackingUrl: 'https://track.example.com/TRK-1?x=1',
      serviceId: 'svc-9', notifyCustomer: false, lineItems: [{ id: lineA, quantity: 1 }],
    });
  });

  it('accepts the create subset of statuses; shipped, delivered or anything else is a 400', async () => {
    const { s, o, lineA } = await setup();
    for (const status of ['pending', 'open', 'cancelled', 'error', 'failure']) {
      expect((await create(s.accessToken, o.orderId, { status, line_items: [{ id: lineA, quantity: 1 }] })).statusCode, status).toBe(201);
    }
    for (const status of ['shipped', 'delivered', 'done', 5]) expectEnvelopeError(await create(s.accessToken, o.orderId, { status }), 400, 'status');
  });

  it('tracking_url must be a well-formed URL', async () => {
    const { s, o } = await setup();
    for (const url of ['not a url', 'www.example.com/track', 'ftp://example.com/x', 'javascript:alert(1)', 'https://', 12]) {
      expectEnvelopeError(await create(s.accessToken, o.orderId, { tracking_url: url }), 400, 'tracking_url');
    }
    expect((await create(s.accessToken, o.orderId, { tracking_url: 'http://carrier.example/t/1' })).statusCode).toBe(201);
  });

  it('line items are checked against the order: unknown id or too large a quantity is a 400', async () => {
    const { s, o, lineA, lineB } = await setup();
    const other = await setup();
    const cases: [unknown, string][] = [
      [[{ id: uuidv7(), quantity: 1 }], 'line_items[0].id'],
      [[{ id: other.lineA, quantity: 1 }], 'line_items[0].id'],
      [[{ id: lineB, quantity: 2 }], 'line_items[0].quantity'],
      [[{ id: lineA, quantity: 1 }, { id: lineA, quantity: 2 }], 'line_items[1].quantity'],
      [[{ id: lineA, quantity: 0 }], 'line_items[0].quantity'],
      [[{ id: lineA }], 'line_items[0].quantity'],
      [[{ quantity: 1 }], 'line_items[0].id'],
      ['all', 'line_items'],
    ];
    for (const [lineItems, field] of cases) expectEnvelopeError(await create(s.accessToken, o.orderId, { line_items: lineItems }), 400, field);
    // What is claimed by earlier fulfillments is no longer there to claim.
    await fulfil(s.accessToken, o.orderId, { line_items: [{ id: lineA, quantity: 1 }] });
    expectEnvelopeError(await create(s.accessToken, o.orderId, { line_items: [{ id: lineA, quantity: 2 }] }), 400, '1 left');
    await fulfil(s.accessToken, o.orderId, { line_items: [] }); // the rest: 1 x A, 1 x B
    expectEnvelopeError(await create(s.accessToken, o.orderId, {}), 400, 'fulfilled already');
  });

  it('404 for an unknown order or another store\'s; 400 for a canceled order; 403 without write_orders; 401', async () => {
    const { s, o } = await setup();
    const other = await orderStore(h);
    expectEnvelopeError(await create(s.accessToken, uuidv7(), {}), 404);
    expectEnvelopeError(await create(s.accessToken, 'nope', {}), 404);
    expectEnvelopeError(await create(other.accessToken, o.orderId, {}), 404);
    const readOnly = await storeWithApp(h, { scopes: ['read_orders'], tier: 'enterprise' });
    expectEnvelopeError(await create(readOnly.accessToken, o.orderId, {}), 403);
    expectEnvelopeError(await h.req('POST', `/api/v1/orders/${o.orderId}/fulfillments.json`, { body: {} }), 401);
    expectEnvelopeError(await h.req('POST', `/api/v1/orders/${o.orderId}/fulfillments.json`, { token: s.accessToken, payload: '{', headers: { 'content-type': 'application/json' } }), 400);
    await h.req('POST', `/orders/${o.orderId}/cancel`, { token: s.merchant.token, body: {} });
    expectEnvelopeError(await create(s.accessToken, o.orderId, {}), 400, 'canceled');
  });
});

describe('order moves (app-api.md Order status; C14.3 cumulative coverage)', () => {
  it('success on part -> partial (email), then on the rest -> shipped, fulfilled, orders/fulfilled (email)', async () => {
    const { s, o, email, lineA, lineB } = await setup();
    let evs = await eventsOf(h, s.merchant.storeId, () =>
      fulfil(s.accessToken, o.orderId, { status: 'success', line_items: [{ id: lineA, quantity: 2 }], tracking_number: 'T1', tracking_company: 'UPS', tracking_url: 'https://ups.example/T1' }));
    expect(evs.map((e) => e.topic)).toEqual(['fulfillments/create', 'orders/updated']);
    let view = await full(s.accessToken, o.orderId);
    expect(view).toMatchObject({ fulfillment_status: 'partial', tracking_number: 'T1', tracking_url: 'https://ups.example/T1' });
    expect(view.line_items.map((l: any) => l.fulfillment_status)).toEqual(['fulfilled', null]);
    expect(evs[1].payload).toEqual(view);
    let record = (await h.req('PATCH', `/orders/update-signle-order/${o.orderId}`, { token: s.merchant.token, body: {} })).json().data;
    expect(record).toMatchObject({ status: 'partial', fulfillmentStatus: 'partial', courierName: 'UPS', trackingNumber: 'T1', shippedDate: null });
    let mail = await emails(email);
    expect(mail).toEqual([{ emailId: expect.any(String), to: email, subject: `Part of your order ${o.name} is on its way`, template: 'order_partially_shipped', status: 'logged', createdAt: expect.any(String) }]);

    // A second part of the same status (partial -> partial) sends nothing more.
    evs = await eventsOf(h, s.merchant.storeId, () => fulfil(s.accessToken, o.orderId, { status: 'pending', line_items: [{ id: lineB, quantity: 1 }] }));
    expect(evs.map((e) => e.topic)).toEqual(['fulfillments/create']);
    const pendingId = evs[0].payload.fulfillmentId;
    evs = await eventsOf(h, s.merchant.storeId, () => update(s.accessToken, pendingId, { status: 'success' }));
    expect(evs.map((e) => e.topic)).toEqual(['fulfillments/update', 'orders/updated', 'orders/fulfilled']);
    view = await full(s.accessToken, o.orderId);
    expect(view.fulfillment_status).toBe('fulfilled');
    expect(view.line_items.map((l: any) => l.fulfillment_status)).toEqual(['fulfilled', 'fulfilled']);
    expect(evs[2].payload).toEqual(view);
    record = (await h.req('PATCH', `/orders/update-signle-order/${o.orderId}`, { token: s.merchant.token, body: {} })).json().data;
    expect(record).toMatchObject({ status: 'shipped', fulfillmentStatus: 'fulfilled', shippedDate: expect.any(String) });
    mail = await emails(email);
    expect(mail.map((m: any) => m.template)).toEqual(['order_shipped', 'order_partially_shipped']);
  });

  it('success on the whole order at once -> shipped and fulfilled; notify_customer false sends no email', async () => {
    for (const notify of [true, false]) {
      const { s, o, email } = await setup();
      const evs = await eventsOf(h, s.merchant.storeId, () => fulfil(s.accessToken, o.orderId, { status: 'success', notify_customer: notify }));
      expect(evs.map((e) => e.topic)).toEqual(['fulfillments/create', 'orders/updated', 'orders/fulfilled']);
      expect(evs[0].payload.lineItems).toEqual([]);
      expect((await full(s.accessToken, o.orderId)).fulfillment_status).toBe('fulfilled');
      expect((await emails(email)).map((m: any) => m.template)).toEqual(notify ? ['order_shipped'] : []);
    }
  });

  it('from pending, confirmed, paid, partial and shipped, success moves the order; delivered, returned and canceled do not move', async () => {
    for (const from of ['pending', 'confirmed', 'paid', 'partial', 'shipped']) {
      const { s, o, lineA } = await setup({ status: from });
      await fulfil(s.accessToken, o.orderId, { status: 'success', line_items: [{ id: lineA, quantity: 1 }] });
      const { rows } = await h.db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [o.orderId]);
      expect(rows[0].status, from).toBe('partial');
    }
    for (const from of ['delivered', 'returned', 'exchange']) {
      const { s, o, email } = await setup({ status: from });
      await fulfil(s.accessToken, o.orderId, { status: 'success' });
      const { rows } = await h.db.query<{ status: string; fulfillment_status: string }>('SELECT status, fulfillment_status FROM orders WHERE id = $1', [o.orderId]);
      expect(rows[0], from).toEqual({ status: from, fulfillment_status: 'fulfilled' });
      expect(await emails(email)).toEqual([]);
    }
  });

  it('update to delivered -> the order delivered, from pending, confirmed, paid, partial and shipped', async () => {
    for (const from of ['pending', 'confirmed', 'paid', 'partial', 'shipped']) {
      const { s, o } = await setup({ status: from });
      const f = await fulfil(s.accessToken, o.orderId, {});
      const evs = await eventsOf(h, s.merchant.storeId, () => update(s.accessToken, f.fulfillmentId, { status: 'delivered' }));
      expect(evs.map((e) => e.topic), from).toEqual(['fulfillments/update', 'orders/updated', 'orders/fulfilled']);
      const record = (await h.req('PATCH', `/orders/update-signle-order/${o.orderId}`, { token: s.merchant.token, body: {} })).json().data;
      expect(record, from).toMatchObject({ status: 'delivered', fulfillmentStatus: 'fulfilled', deliveryDate: expect.any(String) });
    }
    const { s, o } = await setup({ status: 'returned' });
    const f = await fulfil(s.accessToken, o.orderId, {});
    await update(s.accessToken, f.fulfillmentId, { status: 'delivered' });
    expect((await h.db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [o.orderId])).rows[0].status).toBe('returned');
  });

  it('a cancelled fulfillment releases its items; it cannot come back once they are claimed again', async () => {
    const { s, o, lineA } = await setup();
    const first = await fulfil(s.accessToken, o.orderId, { status: 'success', line_items: [{ id: lineA, quantity: 2 }] });
    const evs = await eventsOf(h, s.merchant.storeId, () => update(s.accessToken, first.fulfillmentId, { status: 'cancelled' }));
    expect(evs.map((e) => e.topic)).toEqual(['fulfillments/update', 'orders/updated']);
    expect((await full(s.accessToken, o.orderId)).fulfillment_status).toBe('unfulfilled');
    await fulfil(s.accessToken, o.orderId, { line_items: [{ id: lineA, quantity: 2 }] });
    expectEnvelopeError(await update(s.accessToken, first.fulfillmentId, { status: 'success' }), 400, 'left to fulfil');
  });

  it('that refusal names the line item the fulfillment covers, not a line_items entry the PUT never sent', async () => {
    const { s, o, lineA } = await setup();
    const first = await fulfil(s.accessToken, o.orderId, { status: 'cancelled' });
    await fulfil(s.accessToken, o.orderId, { status: 'success', line_items: [{ id: lineA, quantity: 1 }] });
    const body = expectEnvelopeError(await update(s.accessToken, first.fulfillmentId, { status: 'success' }), 400, 'left to fulfil');
    expect(body.message).not.toContain('line_items');
    expect(body.message).toContain(lineA);
    expect((await full(s.accessToken, o.orderId)).fulfillment_status).toBe('partial');
  });
});

describe('PUT /api/v1/fulfillments/{fulfillment_id}.json', () => {
  it('updates status and tracking; every status is accepted; tracking_url validated; 404 for unknown and foreign ids', async () => {
    const { s, o } = await setup();
    const f = await fulfil(s.accessToken, o.orderId, { status: 'open' });
    const res = await update(s.accessToken, f.fulfillmentId, { tracking_number: 'N2', tracking_company: 'La Poste', tracking_url: 'https://laposte.example/N2' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 200, state: 'success', count: null, pagination: null });
    expect(res.json().data.fulfillment).toMatchObject({ fulfillmentId: f.fulfillmentId, status: 'open', trackingNumber: 'N2', trackingCompany: 'La Poste', trackingUrl: 'https://laposte.example/N2' });
    for (const status of ['pending', 'open', 'success', 'shipped', 'delivered', 'cancelled', 'error', 'failure']) {
      expect((await update(s.accessToken, f.fulfillmentId, { status })).json().data.fulfillment.status).toBe(status);
    }
    expectEnvelopeError(await update(s.accessToken, f.fulfillmentId, { status: 'lost' }), 400, 'status');
    expectEnvelopeError(await update(s.accessToken, f.fulfillmentId, { tracking_url: 'nope' }), 400, 'tracking_url');
    expectEnvelopeError(await update(s.accessToken, uuidv7(), { status: 'open' }), 404);
    const other = await orderStore(h);
    expectEnvelopeError(await update(other.accessToken, f.fulfillmentId, { status: 'open' }), 404);
  });

  it('a tracking change of a pending fulfillment emits fulfillments/update only', async () => {
    const { s, o } = await setup();
    const f = await fulfil(s.accessToken, o.orderId, {});
    const evs = await eventsOf(h, s.merchant.storeId, () => update(s.accessToken, f.fulfillmentId, { tracking_number: 'X' }));
    expect(evs.map((e) => e.topic)).toEqual(['fulfillments/update']);
  });
});
