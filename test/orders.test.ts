// App API orders (app-api.md Order, app API; `GET /api/v1/orders.json`, `GET /api/v1/orders/{id}.json`;
// C5.1 errors body, C5.2 money, C5.3 since_id, C5.4 Link paging, C5.5 version header, C7.2 status
// filter mapping). Orders are taken through C7.1 `POST /orders` (tested in orders-create.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { createTestApp, installApp, signupPartner, storeWithApp } from './helpers/actors.js';
import { uuidv7 } from '../src/ids.js';
import { expectErrorsBody } from './helpers/expect.js';
import { eventsOf } from './helpers/events.js';
import { address, insertProduct, ORDER_SCOPES, orderBody, orderStore, takeOrder, uniq } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const BASE = 'http://svc.test';
const get = (token: string, url: string) => h.req('GET', url, { token });

const FULL_KEYS = [
  'id', 'name', 'order_number', 'email', 'phone', 'financial_status', 'fulfillment_status', 'cancelled', 'cancelled_at', 'cancel_reason',
  'currency', 'presentment_currency', 'subtotal_price', 'tax_price', 'shipping_price', 'total_discounts', 'total_price',
  'total_refunded_amount', 'total_net_amount', 'item_count', 'line_items', 'customer', 'shipping_address', 'billing_address',
  'shipping_methods', 'shipping_lines', 'tax_lines', 'transactions', 'discount_applications', 'metafields', 'attributes', 'note', 'tags',
  'tracking_number', 'tracking_url', 'order_status_url', 'confirmation_number', 'created_at', 'updated_at', 'processed_at',
];
const LIST_KEYS = [
  'id', 'name', 'order_number', 'email', 'phone', 'financial_status', 'fulfillment_status', 'subtotal_price', 'tax_price', 'shipping_price',
  'total_discounts', 'total_price', 'line_items', 'customer', 'shipping_address', 'billing_address', 'shipping_lines', 'created_at', 'updated_at',
];
const LINE_KEYS = [
  'id', 'product_id', 'variant_id', 'title', 'variant_title', 'quantity', 'price', 'line_price', 'final_price', 'final_line_price',
  'total_discount', 'sku', 'fulfillment_status', 'requires_shipping', 'taxable', 'properties',
];

/** A store with a discount, a product without variants and one with two, and one rich order. */
async function richOrder(scopes = ORDER_SCOPES) {
  const s = await orderStore(h, scopes);
  const storeId = s.merchant.storeId;
  const plain = await insertProduct(h, storeId, { title: 'Canvas Tote', price: 1999, stock: 10, sku: 'TOTE' });
  const tee = await insertProduct(h, storeId, {
    title: 'Classic Tee', price: 3000,
    variants: [{ value: 'S', price: 3000, discountPrice: 2500, stock: 5, sku: 'TEE-S' }, { value: 'M', price: 3000, stock: 5, sku: 'TEE-M' }],
  });
  const code = `TEN${uniq()}`;
  const disc = await h.req('POST', '/discounts', { token: s.merchant.token, body: { code, type: 'Percentage', discountPercentage: 10 } });
  expect(disc.statusCode).toBe(201);
  const order = await takeOrder(h, s.merchant.token, orderBody(null, {
    customer: { email: `rich-${uniq()}@example.com`, first_name: 'Grace', last_name: 'Brewster Hopper', phone: '+15550102' },
    line_items: [
      { product_id: plain.id, quantity: 3, properties: [['engraving', 'GH'], ['gift', 'yes']] },
      { product_id: String(tee.numId), variant_id: tee.variants[1].numId, quantity: 1, properties: { size_note: 'runs small' } },
      { product_id: tee.id, variant_id: tee.variants[0].id, quantity: 2 },
    ],
    shipping_line: { title: 'Express', code: 'shipfast-ups', source: 'shipfast', price: '7.50' },
    discount_code: code,
    tax_rate: '0.0825',
    note: '  leave at the door  ',
    tags: ['vip', 'phone order'],
    attributes: [{ name: 'gift_wrap', value: 'true' }],
  }));
  return { s, plain, tee, code, order };
}

describe('GET /api/v1/orders/{id}.json: the full view (app-api.md Order)', () => {
  it('every field, money to the cent, item_count, variant_id fallback and properties as pairs', async () => {
    const { s, plain, tee, code, order } = await richOrder();
    const res = await get(s.accessToken, `/api/v1/orders/${order.orderId}.json`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-svc-api-version']).toBe('2026-06');
    const body = res.json();
    expect(Object.keys(body)).toEqual(['order']);
    const o = body.order;
    expect(Object.keys(o)).toEqual(FULL_KEYS);
    // Lines: 3 x 19.99 = 59.97; 1 x 30.00; 2 x 25.00 = 50.00 -> 139.97. 10 % = 14.00 (13.997 half up),
    // shared 59.97 : 30.00 : 50.00 by largest remainder -> 6.00 / 3.00 / 5.00.
    // Subtotal 125.97; tax 8.25 % of 125.97 = 10.392525 -> 10.39; shipping 7.50; total 143.86.
    expect(o).toMatchObject({
      id: order.orderId,
      name: `#${order.orderNumber}`,
      order_number: order.orderNumber,
      email: expect.stringMatching(/^rich-/),
      phone: '+15550102',
      financial_status: 'paid',
      fulfillment_status: 'unfulfilled',
      cancelled: false,
      cancelled_at: null,
      cancel_reason: null,
      currency: 'USD',
      presentment_currency: 'USD',
      subtotal_price: '125.97',
      tax_price: '10.39',
      shipping_price: '7.50',
      total_discounts: '14.00',
      total_price: '143.86',
      total_refunded_amount: '0.00',
      total_net_amount: '143.86',
      item_count: 6,
      note: '  leave at the door  ',
      tags: ['vip', 'phone order'],
      attributes: [{ name: 'gift_wrap', value: 'true' }],
      tracking_number: null,
      tracking_url: null,
      metafields: {},
    });
    expect(o.line_items.map((l: any) => Object.keys(l))).toEqual([LINE_KEYS, LINE_KEYS, LINE_KEYS]);
    expect(o.line_items[0]).toEqual({
      id: expect.any(String), product_id: plain.numId, variant_id: plain.numId, title: 'Canvas Tote', variant_title: null, quantity: 3,
      price: '19.99', line_price: '59.97', final_price: '17.99', final_line_price: '53.97', total_discount: '6.00', sku: 'TOTE',
      fulfillment_status: null, requires_shipping: true, taxable: true, properties: [['engraving', 'GH'], ['gift', 'yes']],
    });
    expect(o.line_items[1]).toMatchObject({
      product_id: tee.numId, variant_id: tee.variants[1].numId, title: 'Classic Tee', variant_title: 'Size / M', price: '30.00',
      line_price: '30.00', total_discount: '3.00', final_line_price: '27.00', final_price: '27.00', sku: 'TEE-M', properties: [['size_note', 'runs small']],
    });
    // The variant sells at its discount price (the catalog's mapping).
    expect(o.line_items[2]).toMatchObject({
      product_id: tee.numId, variant_id: tee.variants[0].numId, variant_title: 'Size / S', price: '25.00', quantity: 2,
      line_price: '50.00', total_discount: '5.00', final_line_price: '45.00', final_price: '22.50', properties: [],
    });
    // The product object's ids: line items name the same integers.
    const product = await h.db.query<{ num_id: number }>('SELECT num_id FROM products WHERE id = $1', [tee.id]);
    expect(o.line_items[1].product_id).toBe(Number(product.rows[0].num_id));
    expect(o.customer).toEqual({ id: expect.any(String), email: o.email, first_name: 'Grace', last_name: 'Brewster Hopper', phone: '+15550102' });
    expect(o.shipping_address).toEqual(address);
    expect(o.billing_address).toEqual(address);
    expect(o.shipping_lines).toEqual([{ title: 'Express', code: 'shipfast-ups', source: 'shipfast', price: '7.50', currency: 'USD' }]);
    expect(o.shipping_methods).toEqual([{ handle: 'shipfast-ups', title: 'Express', price: '7.50', original_price: '7.50' }]);
    expect(o.tax_lines).toEqual([{ title: 'Tax', price: '10.39', rate: 0.0825 }]);
    expect(o.transactions).toEqual([{ id: expect.any(String), amount: '143.86', kind: 'sale', status: 'success', gateway: 'card', created_at: o.created_at }]);
    expect(o.discount_applications).toEqual([{ type: 'discount_code', code, value: '10.00', value_type: 'percentage', title: code }]);
    expect(o.order_status_url).toBe(`${BASE}/storefront/${s.merchant.slug}/orders/${o.id}?key=${o.confirmation_number}`);
    expect(o.confirmation_number).toMatch(/^[A-Z0-9]{9}$/);
    expect(o.processed_at).toBe(o.created_at);
    expect(new Date(o.created_at).toISOString()).toBe(o.created_at);
    // Totals add up to the cent.
    const cents = (x: string) => Math.round(Number(x) * 100);
    const lines = o.line_items.reduce((sum: number, l: any) => sum + cents(l.final_line_price), 0);
    expect(lines).toBe(cents(o.subtotal_price));
    expect(cents(o.subtotal_price) + cents(o.shipping_price) + cents(o.tax_price)).toBe(cents(o.total_price));
    expect(o.line_items.reduce((sum: number, l: any) => sum + cents(l.total_discount), 0)).toBe(cents(o.total_discounts));
  });

  it('metafields owned by the order, grouped by namespace, values typed, for a token holding read_metafields only', async () => {
    const { s, order } = await richOrder([...ORDER_SCOPES, 'read_metafields']);
    const now = new Date();
    for (const [ns, key, type, value] of [['custom', 'gift', 'boolean', 'true'], ['custom', 'points', 'number_integer', '12'], ['erp', 'ref', 'single_line_text_field', 'ERP-9']]) {
      await h.db.query(
        `INSERT INTO metafields (id, store_id, owner_type, owner_id, namespace, key, type, value, created_at, updated_at) VALUES ($1,$2,'order',$3,$4,$5,$6,$7,$8,$8)`,
        [uuidv7(), s.merchant.storeId, order.orderId, ns, key, type, value, now],
      );
    }
    const o = (await get(s.accessToken, `/api/v1/orders/${order.orderId}.json`)).json().order;
    expect(o.metafields).toEqual({ custom: { gift: true, points: 12 }, erp: { ref: 'ERP-9' } });
    // Found in review: an app refused the metafields endpoint (403, no read_metafields) read them
    // all through the order. Another app of the store, with read_orders alone (and write_metafields:
    // writing does not imply reading, Rules 2), sees the field empty.
    const partner = await signupPartner(h);
    const other = await installApp(h, s.merchant, await createTestApp(h, partner.token, { scopes: ['read_orders', 'write_metafields'], tier: 'enterprise' }));
    expect((await get(other.accessToken, '/api/v1/metafields.json')).statusCode).toBe(403);
    const seen = (await get(other.accessToken, `/api/v1/orders/${order.orderId}.json`)).json().order;
    expect(seen.metafields).toEqual({});
    expect(seen.id).toBe(order.orderId);
    // Webhook bodies go to apps of every scope: never with them (the field is there, empty).
    const events = await eventsOf(h, s.merchant.storeId, async () => {
      const res = await h.req('PUT', `/orders/update/${order.orderId}`, { token: s.merchant.token, body: { trackingNumber: 'TRK-META' } });
      expect(res.statusCode, res.body).toBe(200);
    });
    const updated = events.find((e) => e.topic === 'orders/updated')!.payload as { metafields: unknown; tracking_number: string };
    expect(updated).toMatchObject({ tracking_number: 'TRK-META', metafields: {} });
  });

  // Found in review: a namespace `__proto__` (then accepted by the bulk write) made the grouping
  // write the value onto Object.prototype, for every object of the process, which then crashed on
  // every read of the order. Swept: every name an object inherits, as namespace and as key, in rows
  // as they may already be stored; the bulk write now refuses `__proto__`.
  it('metafield namespaces and keys that name inherited properties are plain keys: no prototype is touched', async () => {
    const { s, order } = await richOrder([...ORDER_SCOPES, 'read_metafields']);
    const now = new Date();
    const INHERITED = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
    const expected = new Map<string, [string, string][]>();
    for (const ns of INHERITED) {
      for (const key of [...INHERITED, 'svcPolluted']) {
        await h.db.query(
          `INSERT INTO metafields (id, store_id, owner_type, owner_id, namespace, key, type, value, created_at, updated_at) VALUES ($1,$2,'order',$3,$4,$5,'single_line_text_field',$6,$7,$7)`,
          [uuidv7(), s.merchant.storeId, order.orderId, ns, key, `${ns}/${key}`, now],
        );
        expected.set(ns, [...(expected.get(ns) ?? []), [key, `${ns}/${key}`]]);
      }
    }
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    const res = await get(s.accessToken, `/api/v1/orders/${order.orderId}.json`);
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(before);
    expect(({} as Record<string, unknown>).svcPolluted).toBeUndefined();
    // Read as JSON.parse reads it (own properties, `__proto__` included), each group whole.
    const metafields = JSON.parse(res.body).order.metafields;
    for (const ns of INHERITED) {
      expect(Object.prototype.hasOwnProperty.call(metafields, ns), ns).toBe(true);
      expect(Object.entries(metafields[ns]).sort(), ns).toEqual(expected.get(ns)!.sort());
    }
    expect((await get(s.accessToken, '/api/v1/orders.json')).statusCode).toBe(200);

    const write = await h.req('POST', '/metafields/bulk', {
      token: s.merchant.token, body: { metafields: [{ ownerType: 'order', ownerId: order.orderId, namespace: '__proto__', key: 'k', type: 'single_line_text_field', value: 'v' }] },
    });
    expect(write.statusCode).toBe(400);
    expect(write.json().message).toContain('must not be __proto__');
  });

  it('404 errors body for an unknown id, a non-UUID and another store\'s order', async () => {
    const { s, order } = await richOrder();
    const other = await orderStore(h);
    expectErrorsBody(await get(s.accessToken, `/api/v1/orders/${uuidv7()}.json`), 404);
    expectErrorsBody(await get(s.accessToken, '/api/v1/orders/1001.json'), 404);
    const res = await get(other.accessToken, `/api/v1/orders/${order.orderId}.json`);
    expectErrorsBody(res, 404);
    expect(res.headers['x-svc-api-version']).toBe('2026-06');
  });

  it('401 without or with a bad token, 403 without read_orders, in the errors body', async () => {
    const { s, order } = await richOrder();
    expectErrorsBody(await h.req('GET', `/api/v1/orders/${order.orderId}.json`), 401);
    expectErrorsBody(await get('svcat_nope', `/api/v1/orders/${order.orderId}.json`), 401);
    const noScope = await storeWithApp(h, { scopes: ['read_products'], tier: 'enterprise' });
    expectErrorsBody(await get(noScope.accessToken, '/api/v1/orders.json'), 403);
    expectErrorsBody(await get(noScope.accessToken, `/api/v1/orders/${order.orderId}.json`), 403);
    expect((await get(s.accessToken, '/api/v1/orders.json')).statusCode).toBe(200);
  });
});

describe('GET /api/v1/orders.json: the list view (app-api.md subset)', () => {
  it('each order carries exactly the subset, field by field equal to the full view', async () => {
    const { s, order } = await richOrder();
    const list = await get(s.accessToken, '/api/v1/orders.json');
    expect(list.statusCode).toBe(200);
    expect(list.headers['x-svc-api-version']).toBe('2026-06');
    expect(list.headers.link).toBeUndefined();
    const body = list.json();
    expect(Object.keys(body)).toEqual(['orders']);
    expect(body.orders).toHaveLength(1);
    const item = body.orders[0];
    expect(Object.keys(item)).toEqual(LIST_KEYS);
    const full = (await get(s.accessToken, `/api/v1/orders/${order.orderId}.json`)).json().order;
    for (const key of LIST_KEYS) expect(item[key], key).toEqual(full[key]);
    for (const key of FULL_KEYS.filter((k) => !LIST_KEYS.includes(k))) expect(item).not.toHaveProperty(key);
  });

  it('an empty store lists nothing', async () => {
    const s = await orderStore(h);
    const res = await get(s.accessToken, '/api/v1/orders.json');
    expect(res.json()).toEqual({ orders: [] });
    expect(res.headers.link).toBeUndefined();
  });
});

/** A store with one order per merchant status (statuses set directly: the list reads what is stored). */
async function storeWithStatuses() {
  const s = await orderStore(h);
  const p = await insertProduct(h, s.merchant.storeId, { stock: 1000 });
  const byStatus: Record<string, string> = {};
  for (const status of ['pending', 'confirmed', 'paid', 'partial', 'shipped', 'delivered', 'canceled', 'returned', 'exchange']) {
    const o = await takeOrder(h, s.merchant.token, orderBody(p, { paymentMethod: 'cod' }));
    await h.db.query('UPDATE orders SET status = $2 WHERE id = $1', [o.orderId, status]);
    byStatus[status] = o.orderId;
  }
  return { s, byStatus };
}

describe('status filter (app-api.md; C7.2 mapping)', () => {
  it('maps each App API value to its merchant statuses; newest first', async () => {
    const { s, byStatus } = await storeWithStatuses();
    const ids = async (q: string) => (await get(s.accessToken, `/api/v1/orders.json?status=${q}`)).json().orders.map((o: any) => o.id);
    expect(await ids('pending')).toEqual([byStatus.pending]);
    expect(await ids('confirmed')).toEqual([byStatus.confirmed]);
    expect(await ids('processing')).toEqual([byStatus.partial, byStatus.paid]);
    expect(await ids('shipped')).toEqual([byStatus.shipped]);
    expect(await ids('delivered')).toEqual([byStatus.delivered]);
    expect(await ids('cancelled')).toEqual([byStatus.canceled]);
    const all = (await get(s.accessToken, '/api/v1/orders.json')).json().orders.map((o: any) => o.id);
    expect(all).toEqual(Object.values(byStatus).reverse());
  });

  it('any other value is a 422 errors body naming status; empty means no filter', async () => {
    const { s } = await storeWithStatuses();
    for (const bad of ['paid', 'canceled', 'partial', 'returned', 'open', 'any', 'PENDING']) {
      const errors = expectErrorsBody(await get(s.accessToken, `/api/v1/orders.json?status=${bad}`), 422, 'status');
      expect(errors.status[0]).toContain('pending');
    }
    expect((await get(s.accessToken, '/api/v1/orders.json?status=')).json().orders).toHaveLength(9);
  });
});

describe('since_id (C5.3) and ids', () => {
  it('since_id keeps the orders whose UUID v7 id is greater', async () => {
    const { s, byStatus } = await storeWithStatuses();
    const ordered = Object.values(byStatus);
    const res = await get(s.accessToken, `/api/v1/orders.json?since_id=${ordered[5]}`);
    expect(res.json().orders.map((o: any) => o.id)).toEqual(ordered.slice(6).reverse());
    expect((await get(s.accessToken, `/api/v1/orders.json?since_id=${ordered[8]}`)).json().orders).toEqual([]);
    expect((await get(s.accessToken, `/api/v1/orders.json?since_id=00000000-0000-7000-8000-000000000000`)).json().orders).toHaveLength(9);
    // Combined with a status filter.
    const both = await get(s.accessToken, `/api/v1/orders.json?since_id=${ordered[1]}&status=processing`);
    expect(both.json().orders.map((o: any) => o.id)).toEqual([byStatus.partial, byStatus.paid]);
  });

  it("an order taken after another gets a greater id even when its process's clock is behind: since_id never skips a committed order", async () => {
    // Another process minting in the same millisecond draws its own counter, and a transaction that
    // read the clock before waiting for the store's lock commits after one that read it later; both
    // are a clock behind the last order's id. The id is taken under the store's order-number lock,
    // after the store's last order id (uuidv7After).
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const before = h.clock.offset;
    try {
      h.clock.setOffset(before + 3_600_000);
      await takeOrder(h, s.merchant.token, orderBody(product));
      h.clock.setOffset(before);
      await takeOrder(h, s.merchant.token, orderBody(product));
    } finally {
      h.clock.setOffset(before);
    }
    // Newest first by time: the first order (an hour ahead), then the second.
    const [firstId, secondId] = (await get(s.accessToken, '/api/v1/orders.json')).json().orders.map((o: any) => o.id);
    expect(secondId > firstId).toBe(true);
    const since = await get(s.accessToken, `/api/v1/orders.json?since_id=${firstId}`);
    expect(since.json().orders.map((o: any) => o.id)).toEqual([secondId]);
  });

  it('ids fetches those orders of the store only; malformed values are a 422', async () => {
    const { s, byStatus } = await storeWithStatuses();
    const other = await storeWithStatuses();
    const want = [byStatus.shipped, byStatus.pending, other.byStatus.paid, uuidv7()];
    const res = await get(s.accessToken, `/api/v1/orders.json?ids=${want.join(',')}`);
    expect(res.json().orders.map((o: any) => o.id)).toEqual([byStatus.shipped, byStatus.pending]);
    const spaced = await get(s.accessToken, `/api/v1/orders.json?ids=${encodeURIComponent(` ${byStatus.paid} , ${byStatus.paid},`)}`);
    expect(spaced.json().orders.map((o: any) => o.id)).toEqual([byStatus.paid]);
    expectErrorsBody(await get(s.accessToken, '/api/v1/orders.json?ids=1,2'), 422, 'ids');
    expectErrorsBody(await get(s.accessToken, '/api/v1/orders.json?since_id=1001'), 422, 'since_id');
  });
});

describe('Link paging (C5.4)', () => {
  it('next while more exist, previous after page 1, filters carried along; limit clamped at 250', async () => {
    const { s, byStatus } = await storeWithStatuses();
    const newestFirst = Object.values(byStatus).reverse();
    const p1 = await get(s.accessToken, '/api/v1/orders.json?limit=4');
    expect(p1.json().orders.map((o: any) => o.id)).toEqual(newestFirst.slice(0, 4));
    expect(p1.headers.link).toBe(`<${BASE}/api/v1/orders.json?page=2&limit=4>; rel="next"`);
    const p2 = await get(s.accessToken, '/api/v1/orders.json?limit=4&page=2');
    expect(p2.json().orders.map((o: any) => o.id)).toEqual(newestFirst.slice(4, 8));
    expect(p2.headers.link).toBe(`<${BASE}/api/v1/orders.json?page=3&limit=4>; rel="next", <${BASE}/api/v1/orders.json?page=1&limit=4>; rel="previous"`);
    const p3 = await get(s.accessToken, '/api/v1/orders.json?limit=4&page=3');
    expect(p3.json().orders.map((o: any) => o.id)).toEqual(newestFirst.slice(8));
    expect(p3.headers.link).toBe(`<${BASE}/api/v1/orders.json?page=2&limit=4>; rel="previous"`);

    const since = Object.values(byStatus)[0];
    const filtered = await get(s.accessToken, `/api/v1/orders.json?limit=1&status=processing&since_id=${since}`);
    expect(filtered.headers.link).toBe(`<${BASE}/api/v1/orders.json?page=2&limit=1&status=processing&since_id=${since}>; rel="next"`);
    const idsRes = await get(s.accessToken, `/api/v1/orders.json?limit=1&ids=${byStatus.paid},${byStatus.partial}`);
    expect(idsRes.headers.link).toBe(`<${BASE}/api/v1/orders.json?page=2&limit=1&ids=${encodeURIComponent(`${byStatus.paid},${byStatus.partial}`)}>; rel="next"`);

    const big = await get(s.accessToken, '/api/v1/orders.json?limit=1000');
    expect(big.json().orders).toHaveLength(9);
    expect(big.headers.link).toBeUndefined();
    const beyond = await get(s.accessToken, '/api/v1/orders.json?limit=4&page=9');
    expect(beyond.json().orders).toEqual([]);
    expect(beyond.headers.link).toBe(`<${BASE}/api/v1/orders.json?page=8&limit=4>; rel="previous"`);
  });
});
