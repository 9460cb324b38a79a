// Orders taken by the merchant (C7.1 `POST /orders`): 201 envelope with the merchant record; stock
// deducted per line item and remembered (C7.2); discount codes checked as at checkout with the
// discounts module's rule at the exact start and end instants (C14.4); FreeShipping, Flat and
// Percentage; taxes from tax_rate; new customers created (customers/create in the order's
// transaction); paid or pending by payment method; events through the outbox (C8.1) with the exact
// orders/create body (app-api.md Payload conventions, C8.8).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { operatorToken } from './helpers/actors.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { eventsOf } from './helpers/events.js';
import { insertProduct, orderBody, orderStore, stockOf, takeOrder, uniq, variantStock } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());
afterEach(() => {
  vi.restoreAllMocks();
});

const post = (token: string, body: unknown) => h.req('POST', '/orders', { token, body });
const getOrder = async (token: string, id: string) => (await h.req('GET', `/api/v1/orders/${id}.json`, { token })).json().order;

const RECORD_KEYS = [
  'orderId', 'orderNumber', 'name', 'status', 'financialStatus', 'fulfillmentStatus', 'totalPrice', 'courierName', 'trackingNumber',
  'digitaldata', 'deliveryDate', 'notes', 'products', 'clientName', 'email', 'mobileNumber', 'address', 'city', 'state', 'country', 'pinCode',
  'paymentMethod', 'shippedDate', 'updatedAt',
];

describe('POST /orders (C7.1): the merchant record', () => {
  it('201 envelope whose data is the merchant order record with the C7.1 extensions', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { title: 'Mug', price: 1200, stock: 4 });
    const res = await post(s.merchant.token, orderBody(p, { line_items: [{ product_id: p.id, quantity: 2 }], paymentMethod: 'cod' }));
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ status: 201, state: 'success', message: null, count: null, pagination: null });
    expect(Object.keys(body.data)).toEqual(RECORD_KEYS);
    expect(body.data).toEqual({
      orderId: expect.any(String), orderNumber: 1001, name: '#1001', status: 'pending', financialStatus: 'pending', fulfillmentStatus: 'unfulfilled',
      totalPrice: '24.00', courierName: null, trackingNumber: null, digitaldata: null, deliveryDate: null, notes: null,
      products: [{ lineItemId: expect.any(String), productId: p.id, varientId: null, title: 'Mug', quantity: 2, price: '12.00' }],
      clientName: 'Ada Lovelace', email: expect.stringMatching(/@example\.com$/), mobileNumber: '+15550101', address: '1 Main Street',
      city: 'London', state: 'Greater London', country: 'United Kingdom', pinCode: 'N1 1AA', paymentMethod: 'cod', shippedDate: null,
      updatedAt: expect.any(String),
    });
    // order_number is per store and counts up.
    const second = await takeOrder(h, s.merchant.token, orderBody(p));
    expect(second.orderNumber).toBe(1002);
    const other = await orderStore(h);
    expect((await takeOrder(h, other.merchant.token, orderBody(await insertProduct(h, other.merchant.storeId)))).orderNumber).toBe(1001);
  });

  it('paymentMethod card, upi, wallet -> paid at once (sale transaction); cod, cash, bank_transfer, offline -> pending', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { stock: 100 });
    for (const method of ['card', 'upi', 'wallet', 'CARD']) {
      const o = await takeOrder(h, s.merchant.token, orderBody(p, { paymentMethod: method }));
      expect([o.status, o.financialStatus, o.paymentMethod]).toEqual(['paid', 'paid', method.toLowerCase()]);
      const full = await getOrder(s.accessToken, o.orderId);
      expect(full.transactions).toEqual([expect.objectContaining({ kind: 'sale', status: 'success', amount: full.total_price, gateway: method.toLowerCase() })]);
    }
    for (const method of ['cod', 'cash', 'bank_transfer', 'offline']) {
      const o = await takeOrder(h, s.merchant.token, orderBody(p, { paymentMethod: method }));
      expect([o.status, o.financialStatus]).toEqual(['pending', 'pending']);
      expect((await getOrder(s.accessToken, o.orderId)).transactions).toEqual([]);
    }
    expectEnvelopeError(await post(s.merchant.token, orderBody(p, { paymentMethod: 'cheque' })), 400, 'paymentMethod');
    expectEnvelopeError(await post(s.merchant.token, orderBody(p, { paymentMethod: undefined })), 400, 'paymentMethod');
  });

  it('400 envelope for a missing or invalid body field', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId);
    const cases: [Record<string, unknown>, string][] = [
      [{ line_items: [] }, 'line_items'],
      [{ line_items: undefined }, 'line_items'],
      [{ line_items: [{ product_id: p.id, quantity: 0 }] }, 'line_items[0].quantity'],
      [{ line_items: [{ product_id: p.id, quantity: 1.5 }] }, 'line_items[0].quantity'],
      [{ line_items: [{ product_id: 'nope', quantity: 1 }] }, 'line_items[0].product_id'],
      [{ line_items: [{ quantity: 1 }] }, 'line_items[0].product_id'],
      [{ shipping_address: undefined }, 'shipping_address'],
      [{ shipping_line: { title: 'x', price: '5.999' } }, 'shipping_line.price'],
      [{ shipping_line: { title: 'x', price: '-1' } }, 'shipping_line.price'],
      [{ tax_rate: 8 }, 'tax_rate'],
      [{ tax_rate: 'abc' }, 'tax_rate'],
      [{ currency: 'dollars' }, 'currency'],
      [{ tags: 'a,b' }, 'tags'],
      [{ customer: { email: 'not-an-email' } }, 'email'],
    ];
    for (const [patch, field] of cases) expectEnvelopeError(await post(s.merchant.token, orderBody(p, patch)), 400, field);
    expectEnvelopeError(await h.req('POST', '/orders', { token: s.merchant.token, payload: '{bad', headers: { 'content-type': 'application/json' } }), 400);
    // Nothing was taken by the failed attempts.
    expect(await stockOf(h, p)).toBe(100);
    const { rows } = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows[0].n).toBe(0);
  });

  it('products of another store, wrong variants and variant-less lines of products with variants are 400s', async () => {
    const s = await orderStore(h);
    const other = await orderStore(h);
    const foreign = await insertProduct(h, other.merchant.storeId);
    const tee = await insertProduct(h, s.merchant.storeId, { variants: [{ value: 'S', price: 2000, stock: 5 }] });
    const mug = await insertProduct(h, s.merchant.storeId, { variants: [{ value: 'One', price: 900, stock: 5 }] });
    const free = await insertProduct(h, s.merchant.storeId, { price: null });
    expectEnvelopeError(await post(s.merchant.token, orderBody(foreign)), 400, 'line_items[0].product_id');
    expectEnvelopeError(await post(s.merchant.token, orderBody(tee)), 400, 'line_items[0].variant_id');
    expectEnvelopeError(await post(s.merchant.token, orderBody(null, { line_items: [{ product_id: tee.id, variant_id: mug.variants[0].id, quantity: 1 }] })), 400, 'line_items[0].variant_id');
    expectEnvelopeError(await post(s.merchant.token, orderBody(free)), 400, 'without a price');
    // Either id of the variant (C14.2), either id of the product (C14.3).
    for (const [product, variant] of [[tee.id, tee.variants[0].id], [String(tee.numId), tee.variants[0].numId], [tee.numId, String(tee.variants[0].numId)]]) {
      await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ product_id: product, variant_id: variant, quantity: 1 }] }));
    }
    expect(await variantStock(h, tee.variants[0])).toBe(2);
  });

  it('a custom line item (title and price, no product) takes no stock and reads with null ids', async () => {
    const s = await orderStore(h);
    const o = await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ title: 'Gift wrapping', price: '3.50', quantity: 2 }] }));
    const full = await getOrder(s.accessToken, o.orderId);
    expect(full.line_items[0]).toMatchObject({ product_id: null, variant_id: null, title: 'Gift wrapping', price: '3.50', line_price: '7.00' });
    expect(full.total_price).toBe('7.00');
  });
});

describe('stock (C7.1, C7.2)', () => {
  it('deducts per line item from the variant, or the product without variants, and remembers it', async () => {
    const s = await orderStore(h);
    const plain = await insertProduct(h, s.merchant.storeId, { stock: 10 });
    const tee = await insertProduct(h, s.merchant.storeId, { stock: 50, variants: [{ value: 'S', price: 2000, stock: 6 }, { value: 'M', price: 2000, stock: 6 }] });
    const o = await takeOrder(h, s.merchant.token, orderBody(null, {
      line_items: [
        { product_id: plain.id, quantity: 3 }, { product_id: tee.id, variant_id: tee.variants[0].id, quantity: 2 },
        { product_id: tee.id, variant_id: tee.variants[0].id, quantity: 1 }, { title: 'Custom', price: '1.00', quantity: 1 },
      ],
    }));
    expect(await stockOf(h, plain)).toBe(7);
    expect(await variantStock(h, tee.variants[0])).toBe(3);
    expect(await variantStock(h, tee.variants[1])).toBe(6);
    expect(await stockOf(h, tee)).toBe(50); // product-level stock is independent of variant rows (C14.1)
    const { rows } = await h.db.query<{ stock_deducted: boolean }>('SELECT stock_deducted FROM order_line_items WHERE order_id = $1 ORDER BY position', [o.orderId]);
    expect(rows.map((r) => r.stock_deducted)).toEqual([true, true, true, false]);
  });

  it('more than the stock left is a 400 naming the line, and nothing is taken', async () => {
    const s = await orderStore(h);
    const a = await insertProduct(h, s.merchant.storeId, { stock: 5 });
    const b = await insertProduct(h, s.merchant.storeId, { stock: 1 });
    const res = await post(s.merchant.token, orderBody(null, { line_items: [{ product_id: a.id, quantity: 2 }, { product_id: b.id, quantity: 2 }] }));
    expectEnvelopeError(res, 400, 'line_items[1].quantity');
    expect(res.json().message).toContain('1 available');
    expect([await stockOf(h, a), await stockOf(h, b)]).toEqual([5, 1]);
    // Two lines of one product are counted together.
    expectEnvelopeError(await post(s.merchant.token, orderBody(null, { line_items: [{ product_id: a.id, quantity: 3 }, { product_id: a.id, quantity: 3 }] })), 400);
    expect(await stockOf(h, a)).toBe(5);
  });

  it('concurrent orders never take the same units twice', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { stock: 3 });
    const results = await Promise.all(Array.from({ length: 5 }, () => post(s.merchant.token, orderBody(p))));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(3);
    expect(results.filter((r) => r.statusCode === 400)).toHaveLength(2);
    expect(await stockOf(h, p)).toBe(0);
    const numbers = results.filter((r) => r.statusCode === 201).map((r) => r.json().data.orderNumber).sort();
    expect(new Set(numbers).size).toBe(3);
  });
});

describe('customers (C7.1: a new email creates the customer)', () => {
  it('creates the customer with customers/create in the order\'s transaction; an existing email is reused', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId);
    const email = `New.${uniq()}@Example.com`;
    const first = await eventsOf(h, s.merchant.storeId, () => takeOrder(h, s.merchant.token, orderBody(p, { customer: { email, first_name: 'Nia', last_name: 'Lee', phone: '+1555' } })));
    expect(first.map((e) => e.topic)).toEqual(['customers/create', 'orders/create', 'orders/paid']);
    const customer = first[0].payload;
    expect(customer).toMatchObject({ email: email.toLowerCase(), first_name: 'Nia', last_name: 'Lee', phone: '+1555' });
    expect(customer.default_address).toMatchObject({ address1: '1 Main Street', city: 'London', zip: 'N1 1AA' });
    expect(first[1].payload.customer).toEqual({ id: customer.id, first_name: 'Nia', last_name: 'Lee', email: email.toLowerCase() });

    const again = await eventsOf(h, s.merchant.storeId, () => takeOrder(h, s.merchant.token, orderBody(p, { customer: { email: email.toUpperCase() } })));
    expect(again.map((e) => e.topic)).toEqual(['orders/create', 'orders/paid']);
    expect(again[0].payload.customer.id).toBe(customer.id);
    const c = await h.req('GET', `/api/v1/customers/${customer.id}.json`, { token: s.accessToken });
    expect(c.json().customer.orders_count).toBe(2);
  });

  it('an order that fails leaves no customer and no event behind', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { stock: 0 });
    const email = `ghost-${uniq()}@example.com`;
    const evs = await eventsOf(h, s.merchant.storeId, async () => expectEnvelopeError(await post(s.merchant.token, orderBody(p, { customer: { email } })), 400));
    expect(evs).toEqual([]);
    const { rows } = await h.db.query('SELECT 1 FROM customers WHERE store_id = $1 AND email = $2', [s.merchant.storeId, email]);
    expect(rows).toEqual([]);
  });
});

describe('events (app-api.md Which operation emits which event; Payload conventions; C8.8)', () => {
  it('orders/create carries exactly the field list; a paid order also orders/paid with the full order', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { price: 1500, sku: 'SKU-1' });
    const evs = await eventsOf(h, s.merchant.storeId, () => takeOrder(h, s.merchant.token, orderBody(p, {
      line_items: [{ product_id: p.id, quantity: 2 }],
      shipping_line: { title: 'Live rate', code: 'shipfast-42', source: 'shipfast', price: '4.25' },
    })));
    expect(evs.map((e) => e.topic)).toEqual(['customers/create', 'orders/create', 'orders/paid']);
    const body = evs[1].payload;
    // Exactly these keys (the outbox stores jsonb, which keeps keys but not their order).
    expect(Object.keys(body).sort()).toEqual([
      'id', 'name', 'order_number', 'email', 'phone', 'financial_status', 'fulfillment_status', 'currency', 'total_price', 'subtotal_price',
      'shipping_price', 'created_at', 'customer', 'shipping_address', 'line_items', 'shipping_lines',
    ].sort());
    expect(body).toMatchObject({
      name: '#1001', order_number: 1001, financial_status: 'paid', fulfillment_status: 'unfulfilled', currency: 'USD',
      total_price: '34.25', subtotal_price: '30.00', shipping_price: '4.25',
    });
    expect(body).not.toHaveProperty('storeId');
    expect(Object.keys(body.customer).sort()).toEqual(['email', 'first_name', 'id', 'last_name']);
    expect(body.shipping_address).toEqual({ address1: '1 Main Street', address2: 'Apt 4', city: 'London', province: 'Greater London', country: 'United Kingdom', zip: 'N1 1AA', phone: '+442000000' });
    expect(body.line_items).toEqual([{ id: expect.any(String), product_id: p.numId, variant_id: p.numId, title: expect.any(String), quantity: 2, price: '15.00', sku: 'SKU-1' }]);
    expect(body.shipping_lines).toEqual([{ title: 'Live rate', code: 'shipfast-42', source: 'shipfast', price: '4.25', currency: 'USD' }]);
    const full = await getOrder(s.accessToken, body.id);
    expect(evs[2].payload).toEqual(full);
  });

  it('a pending order emits orders/create only (with the customer already known)', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId);
    const email = `known-${uniq()}@example.com`;
    await takeOrder(h, s.merchant.token, orderBody(p, { customer: { email } }));
    const evs = await eventsOf(h, s.merchant.storeId, () => takeOrder(h, s.merchant.token, orderBody(p, { customer: { email }, paymentMethod: 'cod' })));
    expect(evs.map((e) => e.topic)).toEqual(['orders/create']);
    expect(evs[0].payload.financial_status).toBe('pending');
  });
});

describe('totals (C5.2): discounts, shipping and tax add up to the cent', () => {
  async function withDiscount(body: Record<string, unknown>) {
    const s = await orderStore(h);
    const code = `C${uniq()}`;
    const res = await h.req('POST', '/discounts', { token: s.merchant.token, body: { code, ...body } });
    expect(res.statusCode, res.body).toBe(201);
    return { s, code, couponId: res.json().data.couponId };
  }
  const cents = (x: string) => Math.round(Number(x) * 100);
  function addsUp(o: any) {
    expect(o.line_items.reduce((n: number, l: any) => n + cents(l.final_line_price), 0)).toBe(cents(o.subtotal_price));
    expect(cents(o.subtotal_price) + cents(o.shipping_price) + cents(o.tax_price)).toBe(cents(o.total_price));
    const lineDiscounts = o.line_items.reduce((n: number, l: any) => n + cents(l.total_discount), 0);
    const shippingWaived = o.shipping_methods.length ? cents(o.shipping_methods[0].original_price) - cents(o.shipping_price) : 0;
    expect(lineDiscounts + shippingWaived).toBe(cents(o.total_discounts));
  }

  it('Percentage: 15 % of 3 x 3.33 + 1 x 0.01, tax 7.25 %, shipping 4.99', async () => {
    const { s, code } = await withDiscount({ type: 'Percentage', discountPercentage: 15 });
    const a = await insertProduct(h, s.merchant.storeId, { price: 333 });
    const b = await insertProduct(h, s.merchant.storeId, { price: 1 });
    const o = await takeOrder(h, s.merchant.token, orderBody(null, {
      line_items: [{ product_id: a.id, quantity: 3 }, { product_id: b.id, quantity: 1 }], discount_code: code, tax_rate: 0.0725,
      shipping_line: { title: 'Std', code: 'std', price: 4.99 },
    }));
    const full = await getOrder(s.accessToken, o.orderId);
    // 10.00 x 15 % = 1.50 -> 9.99 : 0.01 -> 1.50 / 0.00 (largest remainder). Subtotal 8.50; tax 0.61625 -> 0.62.
    expect(full.line_items.map((l: any) => l.total_discount)).toEqual(['1.50', '0.00']);
    expect([full.subtotal_price, full.total_discounts, full.tax_price, full.shipping_price, full.total_price]).toEqual(['8.50', '1.50', '0.62', '4.99', '14.11']);
    addsUp(full);
  });

  it('Flat: 10.00 over three lines 1 : 1 : 1 is 3.34 / 3.33 / 3.33; capped at the items total', async () => {
    const { s, code } = await withDiscount({ type: 'Flat', discountAmount: 10 });
    const p = await insertProduct(h, s.merchant.storeId, { price: 2000 });
    const q = await insertProduct(h, s.merchant.storeId, { price: 2000 });
    const r = await insertProduct(h, s.merchant.storeId, { price: 2000 });
    const o = await takeOrder(h, s.merchant.token, orderBody(null, {
      line_items: [p, q, r].map((x) => ({ product_id: x.id, quantity: 1 })), discount_code: code, tax_rate: '0.1',
    }));
    const full = await getOrder(s.accessToken, o.orderId);
    expect(full.line_items.map((l: any) => l.total_discount)).toEqual(['3.34', '3.33', '3.33']);
    expect([full.subtotal_price, full.total_discounts, full.tax_price, full.total_price]).toEqual(['50.00', '10.00', '5.00', '55.00']);
    expect(full.discount_applications).toEqual([{ type: 'discount_code', code, value: '10.00', value_type: 'fixed_amount', title: code }]);
    addsUp(full);

    const small = await insertProduct(h, s.merchant.storeId, { price: 450 });
    const capped = await getOrder(s.accessToken, (await takeOrder(h, s.merchant.token, orderBody(small, { discount_code: code }))).orderId);
    expect([capped.subtotal_price, capped.total_discounts, capped.total_price]).toEqual(['0.00', '4.50', '0.00']);
  });

  it('FreeShipping: the shipping is charged nothing, the waived amount is a discount, and the shipping line keeps its price (C15.1)', async () => {
    const { s, code } = await withDiscount({ type: 'FreeShipping' });
    const p = await insertProduct(h, s.merchant.storeId, { price: 2599 });
    const o = await takeOrder(h, s.merchant.token, orderBody(p, { discount_code: code, tax_rate: '0.2', shipping_line: { title: 'Std', code: 'std', price: '6.00' } }));
    const full = await getOrder(s.accessToken, o.orderId);
    expect([full.subtotal_price, full.shipping_price, full.total_discounts, full.tax_price, full.total_price]).toEqual(['25.99', '0.00', '6.00', '5.20', '31.19']);
    expect(full.shipping_lines[0].price).toBe('6.00');
    expect(full.shipping_methods[0]).toMatchObject({ price: '0.00', original_price: '6.00' });
    expect(full.discount_applications[0]).toMatchObject({ value: '100.00', value_type: 'percentage' });
    addsUp(full);
  });

  it('a discount limited to some products discounts only their lines', async () => {
    const s = await orderStore(h);
    const a = await insertProduct(h, s.merchant.storeId, { price: 1000 });
    const b = await insertProduct(h, s.merchant.storeId, { price: 3000 });
    const code = `ONLY${uniq()}`;
    await h.req('POST', '/discounts', { token: s.merchant.token, body: { code, type: 'Percentage', discountPercentage: 50, applyOnProducts: [b.id] } });
    const o = await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ product_id: a.id, quantity: 1 }, { product_id: b.id, quantity: 1 }], discount_code: code }));
    const full = await getOrder(s.accessToken, o.orderId);
    expect(full.line_items.map((l: any) => l.total_discount)).toEqual(['0.00', '15.00']);
    expect(full.total_price).toBe('25.00');
    expectEnvelopeError(await post(s.merchant.token, orderBody(a, { discount_code: code })), 400, 'does not apply');
  });
});

describe('discount codes checked as at checkout (C7.1, C14.4)', () => {
  /** Freeze the service clock at `ms` (the access tokens and JWTs are unaffected at these instants). */
  const freeze = (ms: number) => vi.spyOn(h.clock, 'nowMs').mockReturnValue(ms);

  it('valid from the exact startDate instant through the exact endDate instant, on the service clock', async () => {
    const s = await orderStore(h, ['read_orders', 'read_discounts']);
    const p = await insertProduct(h, s.merchant.storeId, { stock: 100 });
    const start = Math.floor(Date.now() / 1000) * 1000 + 60_000;
    const end = start + 3_600_000;
    const code = `WIN${uniq()}`;
    await h.req('POST', '/discounts', {
      token: s.merchant.token,
      body: { code, type: 'Flat', discountAmount: 1, startDate: new Date(start).toISOString(), endDate: new Date(end).toISOString() },
    });
    const at = async (ms: number) => {
      freeze(ms);
      const order = await post(s.merchant.token, orderBody(p, { discount_code: code }));
      // The list filter agrees at the same instant (isActiveAt is the one rule).
      const list = await h.req('GET', '/api/v1/discounts.json?status=active', { token: s.accessToken });
      expect(list.statusCode).toBe(200);
      return { order, listed: list.json().data.discounts.some((d: any) => d.code === code) };
    };
    const before = await at(start - 1);
    expectEnvelopeError(before.order, 400, 'not active yet');
    expect(before.listed).toBe(false);
    for (const ms of [start, end]) {
      const r = await at(ms);
      expect(r.order.statusCode).toBe(201);
      expect(r.listed).toBe(true);
    }
    const after = await at(end + 1);
    expectEnvelopeError(after.order, 400, 'expired');
    expect(after.listed).toBe(false);
    vi.restoreAllMocks();
    const { rows } = await h.db.query<{ used_count: number }>('SELECT used_count FROM discounts WHERE code = $1', [code]);
    expect(rows[0].used_count).toBe(2);
  });

  it('Inactive, unknown code, BuyXGetY, minimum order total at its edge, total uses, uses per customer', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { price: 2000, stock: 100 });
    const make = async (body: Record<string, unknown>) => {
      const code = `K${uniq()}`;
      const res = await h.req('POST', '/discounts', { token: s.merchant.token, body: { code, type: 'Percentage', discountPercentage: 5, ...body } });
      expect(res.statusCode, res.body).toBe(201);
      return code;
    };
    expectEnvelopeError(await post(s.merchant.token, orderBody(p, { discount_code: 'NOPE' })), 400, 'discount_code');
    expectEnvelopeError(await post(s.merchant.token, orderBody(p, { discount_code: await make({ status: 'Inactive' }) })), 400, 'disabled');
    expectEnvelopeError(await post(s.merchant.token, orderBody(p, { discount_code: await make({ type: 'BuyXGetY' }) })), 400, 'BuyXGetY');

    const minimum = await make({ minOrderTotal: '40.00' });
    expectEnvelopeError(await post(s.merchant.token, orderBody(p, { discount_code: minimum })), 400, '40.00');
    expect((await post(s.merchant.token, orderBody(null, { line_items: [{ product_id: p.id, quantity: 2 }], discount_code: minimum.toLowerCase() }))).statusCode).toBe(201);

    const twice = await make({ totalCoupons: 2 });
    expect((await post(s.merchant.token, orderBody(p, { discount_code: twice }))).statusCode).toBe(201);
    expect((await post(s.merchant.token, orderBody(p, { discount_code: twice }))).statusCode).toBe(201);
    expectEnvelopeError(await post(s.merchant.token, orderBody(p, { discount_code: twice })), 400, 'no uses left');

    const once = await make({ usesPerCustomer: 1 });
    const email = `once-${uniq()}@example.com`;
    expect((await post(s.merchant.token, orderBody(p, { customer: { email }, discount_code: once }))).statusCode).toBe(201);
    expectEnvelopeError(await post(s.merchant.token, orderBody(p, { customer: { email }, discount_code: once })), 400, 'this customer');
    expect((await post(s.merchant.token, orderBody(p, { discount_code: once }))).statusCode).toBe(201);
    expectEnvelopeError(await post(s.merchant.token, orderBody(p, { customer: undefined, discount_code: once })), 400, 'customer email');

    const { rows } = await h.db.query<{ used_count: number }>('SELECT used_count FROM discounts WHERE store_id = $1 AND code = $2', [s.merchant.storeId, twice]);
    expect(rows[0].used_count).toBe(2);
  });

  it('the last use cannot be taken twice by concurrent orders', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { stock: 100 });
    const code = `LAST${uniq()}`;
    await h.req('POST', '/discounts', { token: s.merchant.token, body: { code, type: 'Percentage', discountPercentage: 5, totalCoupons: 1 } });
    const results = await Promise.all([1, 2, 3].map(() => post(s.merchant.token, orderBody(p, { discount_code: code }))));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 400, 400]);
  });
});

describe('access (C7.1)', () => {
  it('401 without a token; staff of the store may; the operator names the store', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { stock: 10 });
    expectEnvelopeError(await h.req('POST', '/orders', { body: orderBody(p) }), 401);
    const ops = await operatorToken(h);
    expectEnvelopeError(await post(ops, orderBody(p)), 400, 'storeId');
    const byOps = await post(ops, { ...orderBody(p), storeId: s.merchant.storeId });
    expect(byOps.statusCode).toBe(201);
    expectEnvelopeError(await post(ops, { ...orderBody(p), storeId: '00000000-0000-7000-8000-000000000000' }), 400, 'store');
    // A partner has no store.
    const partner = await h.req('POST', '/auth/signup', { body: { email: `p-${uniq()}@example.com`, password: 'correct-horse', name: 'P', role: 'PARTNER' } });
    expectEnvelopeError(await post(partner.json().data.token, orderBody(p)), 403);
  });
});

describe('C5.2 an order holds exact amounts only', () => {
  // 2^53 - 1 = 6,361 x 1,416,003,655,831: the last total a number holds exactly, and one unit past it.
  const UNIT_MINOR = 1_416_003_655_831;
  const FITS = 6361;

  it('POST /orders: a total of exactly 2^53 - 1 hundredths is taken to the cent; one unit more is a 400 and nothing is written', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { title: 'Ingot', price: UNIT_MINOR, stock: 100_000 });
    const order = await takeOrder(h, s.merchant.token, orderBody(p, { line_items: [{ product_id: p.id, quantity: FITS }], paymentMethod: 'card' }));
    expect(order.totalPrice).toBe('90071992547409.91');

    const refused = await post(s.merchant.token, orderBody(p, { line_items: [{ product_id: p.id, quantity: FITS + 1 }], paymentMethod: 'card' }));
    expectEnvelopeError(refused, 400, /largest amount an order can hold/);
    // 100,000 units at the largest catalog price: a 400, not the database's out-of-range 500.
    const gold = await insertProduct(h, s.merchant.storeId, { title: 'Gold', price: 1e15, stock: 100_000 });
    expectEnvelopeError(await post(s.merchant.token, orderBody(gold, { line_items: [{ product_id: gold.id, quantity: 100_000 }] })), 400, /largest amount/);
    expect(await stockOf(h, p)).toBe(100_000 - FITS);
    expect(await stockOf(h, gold)).toBe(100_000);
    const { rows } = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows[0].n).toBe(1);
  });

  it('PUT /orders/update: replacement products past it are a 400, and the order is left as it was', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { title: 'Ingot', price: UNIT_MINOR, stock: 100_000 });
    const order = await takeOrder(h, s.merchant.token, orderBody(p, { line_items: [{ product_id: p.id, quantity: 1 }], paymentMethod: 'cod' }));
    const res = await h.req('PUT', `/orders/update/${order.orderId}`, { token: s.merchant.token, body: { products: [{ productId: p.id, quantity: FITS + 1 }] } });
    expectEnvelopeError(res, 400, /largest amount an order can hold/);
    expect((await getOrder(s.accessToken, order.orderId)).total_price).toBe('14160036558.31');
    expect(await stockOf(h, p)).toBe(100_000 - 1);
  });
});
