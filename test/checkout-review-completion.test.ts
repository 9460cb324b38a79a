// Completion of a storefront checkout (C15.1: "Completing needs ... no validation_errors; otherwise
// -> 422 envelope error whose message ... carries the validation messages"), four holes found in
// review, each failing before its fix:
// - a discount code used up, expired or over its per-customer limit while completion waited (for a
//   shipping app, or another buyer's order in parallel) was the 400 of `POST /orders`
//   ("discount_code has no uses left"), not the checkout's 422;
// - a product archived while completion waited for its shipping app was still sold;
// - a catalog price the checkout's currency cannot hold (1000.50 in a yen store) was shown in the
//   total with no validation error, and completion was a 400 about `line_items[0].price`;
// - the order status page (`order_status_url`, its key in the URL) was not marked `no-store`.
// The shipping app is a real HTTP receiver that changes the store (through the API where one
// exists) before it answers, between the checkout's pricing and the order's transaction.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { checkoutCalls, insertSimpleZone } from './helpers/checkout.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { storeWithApp } from './helpers/actors.js';
import { address, insertProduct, orderBody, orderStore, stockOf, takeOrder, uniq, type TestProduct } from './helpers/orders.js';
import { uuidv7 } from '../src/ids.js';

let h: Harness;
let rates: Server;
let ratesUrl = '';
/** Run once by the shipping app before it answers the next rate request (then cleared). */
let beforeAnswer: (() => Promise<void>) | null = null;

beforeAll(async () => {
  h = await createHarness();
  rates = createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      const hook = beforeAnswer;
      beforeAnswer = null;
      if (hook) await hook();
      res.writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ rates: [{ service_name: 'Standard', service_code: 'std', total_price: 900, currency: 'USD' }] }));
    });
  });
  await new Promise<void>((resolve) => rates.listen(0, '127.0.0.1', resolve));
  ratesUrl = `http://127.0.0.1:${(rates.address() as AddressInfo).port}/rates`;
});
afterAll(async () => {
  rates?.closeAllConnections();
  await new Promise((resolve) => rates?.close(resolve));
  await h?.close();
});

const { create, read, change, complete } = checkoutCalls(() => h);
const SCOPES = ['read_products', 'write_products', 'read_orders', 'write_orders', 'read_customers', 'read_shipping', 'write_shipping'];
type Store = Awaited<ReturnType<typeof storeWithApp>>;

const shippingStore = () => storeWithApp(h, { scopes: SCOPES, tier: 'enterprise', extensions: { shipping: { ratesUrl } } });
const ordersOf = async (storeId: string) =>
  (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE store_id = $1', [storeId])).rows[0].n;

/** A Percentage code of the store, written to its table (the discount routes are tested elsewhere). */
async function insertCode(storeId: string, o: { totalCoupons?: number; usesPerCustomer?: number; endDate?: Date } = {}): Promise<string> {
  const code = `C${uniq()}`.toUpperCase();
  await h.db.query(
    `INSERT INTO discounts (id, store_id, code, type, discount_percentage, status, total_coupons, uses_per_customer, start_date, end_date, created_at, updated_at)
     VALUES ($1, $2, $3, 'Percentage', 10, 'Active', $4, $5, now() - interval '1 day', $6, now(), now())`,
    [uuidv7(), storeId, code, o.totalCoupons ?? 0, o.usesPerCustomer ?? null, o.endDate ?? null],
  );
  return code;
}

/**
 * A checkout of `product` ready to complete (email, address, the app's rate, card), then the app's
 * cached answer let expire, so that completion asks the app again (C15.3) and `beforeAnswer` runs
 * after the checkout was priced and before the order's transaction.
 */
async function readyToComplete(s: Store, product: TestProduct, extra: Record<string, unknown> = {}, email = `b-${uniq()}@example.com`): Promise<string> {
  const made = await create(s, { email, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address, ...extra });
  expect(made.statusCode, made.body).toBe(201);
  const token = made.json().data.checkout.token as string;
  const chosen = await change(s, token, { shipping_rate: { handle: `app-${s.app.handle}-std` }, payment_method: 'card' });
  expect(chosen.statusCode, chosen.body).toBe(200);
  expect(chosen.json().data.checkout.validation_errors).toEqual([]);
  await h.advance(16 * 60);
  return token;
}

describe('a discount code refused during completion is the checkout\'s 422 (C15.1), not POST /orders\' 400', () => {
  it('its last use taken by another order while completion waits for the shipping app', async () => {
    const s = await shippingStore();
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 10 });
    const code = await insertCode(s.merchant.storeId, { totalCoupons: 1 });
    const token = await readyToComplete(s, product, { discount_code: code });
    beforeAnswer = async () => { await takeOrder(h, s.merchant.token, orderBody(product, { discount_code: code })); };
    expectEnvelopeError(await complete(s, token), 422, 'The discount code has no uses left');
    const c = (await read(s, token)).json().data.checkout;
    expect(c.validation_errors).toEqual([{ message: 'The discount code has no uses left', target: 'discount_code' }]);
    expect(c.order_id).toBeNull();
    expect(await ordersOf(s.merchant.storeId)).toBe(1); // the merchant's only
    expect(await stockOf(h, product)).toBe(9);
  });

  it('used by this buyer as often as allowed meanwhile (its per-customer limit)', async () => {
    const s = await shippingStore();
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 10 });
    const code = await insertCode(s.merchant.storeId, { usesPerCustomer: 1 });
    const email = `b-${uniq()}@example.com`;
    const token = await readyToComplete(s, product, { discount_code: code }, email);
    beforeAnswer = async () => {
      await takeOrder(h, s.merchant.token, orderBody(product, { discount_code: code, customer: { email, first_name: 'Ada', last_name: 'Lovelace' } }));
    };
    const words = 'The discount code has already been used by this customer as often as allowed';
    expectEnvelopeError(await complete(s, token), 422, words);
    expect((await read(s, token)).json().data.checkout.validation_errors).toEqual([{ message: words, target: 'discount_code' }]);
  });

  it('expired while completion waits', async () => {
    const s = await shippingStore();
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 10 });
    const code = await insertCode(s.merchant.storeId, { endDate: new Date(h.clock.now().getTime() + 3600_000) });
    const token = await readyToComplete(s, product, { discount_code: code });
    beforeAnswer = () => h.advance(3600);
    expectEnvelopeError(await complete(s, token), 422, 'The discount code has expired');
    expect((await read(s, token)).json().data.checkout.validation_errors).toEqual([{ message: 'The discount code has expired', target: 'discount_code' }]);
    expect(await ordersOf(s.merchant.storeId)).toBe(0);
  });

  it('six checkouts with a code of one use completed at once: one order, five 422s (the true race on PostgreSQL)', async () => {
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 100 });
    const zone = await insertSimpleZone(h, s.merchant.storeId, { name: 'Whole', countries: ['GB'], price: 500 });
    const code = await insertCode(s.merchant.storeId, { totalCoupons: 1 });
    const tokens: string[] = [];
    for (let i = 0; i < 6; i++) {
      const c = (await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address, discount_code: code })).json().data.checkout;
      expect((await change(s, c.token, { shipping_rate: { handle: `zone-${zone}` }, payment_method: 'card' })).statusCode).toBe(200);
      tokens.push(c.token);
    }
    const done = await Promise.all(tokens.map((t) => complete(s, t)));
    const statuses = done.map((r) => r.statusCode).sort();
    expect(statuses, done.map((r) => r.body).join('\n')).toEqual([201, 422, 422, 422, 422, 422]);
    for (const r of done.filter((x) => x.statusCode === 422)) expect(r.json().message).toBe('The discount code has no uses left');
    const used = await h.db.query<{ n: number }>('SELECT used_count AS n FROM discounts WHERE store_id = $1', [s.merchant.storeId]);
    expect(used.rows[0].n).toBe(1);
  });
});

describe('a product made unavailable while completion waits is not sold (C15.1: a product that is not active)', () => {
  it('archived through the App API while the shipping app is asked: 422 with the line\'s validation error, no order, stock kept', async () => {
    const s = await shippingStore();
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 10 });
    const token = await readyToComplete(s, product);
    const lineId = (await read(s, token)).json().data.checkout.line_items[0].id;
    beforeAnswer = async () => {
      const res = await h.req('PUT', `/api/v1/products/${product.id}.json`, { token: s.accessToken, body: { status: 'archived' } });
      expect(res.statusCode, res.body).toBe(200);
    };
    expectEnvelopeError(await complete(s, token), 422, 'This item is no longer available');
    expect(beforeAnswer).toBeNull(); // the app was asked, and the product archived in between
    const c = (await read(s, token)).json().data.checkout;
    expect(c.validation_errors).toEqual([{ message: 'This item is no longer available', target: lineId }]);
    expect(c.order_id).toBeNull();
    expect(await ordersOf(s.merchant.storeId)).toBe(0);
    expect(await stockOf(h, product)).toBe(10);
  });

  it('deleted through the App API while the shipping app is asked: the same 422, not the 400 of POST /orders', async () => {
    const s = await shippingStore();
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 10 });
    const token = await readyToComplete(s, product);
    beforeAnswer = async () => {
      const res = await h.req('DELETE', `/api/v1/products/${product.id}.json`, { token: s.accessToken });
      expect(res.statusCode, res.body).toBe(200);
    };
    expectEnvelopeError(await complete(s, token), 422, 'This item is no longer available');
    expect(await ordersOf(s.merchant.storeId)).toBe(0);
  });
});

describe('a catalog price the checkout\'s currency cannot hold is a validation error of its line (C15.1)', () => {
  async function yenStore() {
    const s = await orderStore(h);
    await h.db.query(`UPDATE stores SET currency = 'JPY' WHERE id = $1`, [s.merchant.storeId]);
    const zone = await insertSimpleZone(h, s.merchant.storeId, { name: 'Whole', countries: ['GB'], price: 60000 });
    return { s, zone };
  }

  it('1000.50 in a yen store: left out of the total and shown; completion is a 422 with its words', async () => {
    const { s, zone } = await yenStore();
    const fractional = await insertProduct(h, s.merchant.storeId, { price: 100050, stock: 10 });
    const whole = await insertProduct(h, s.merchant.storeId, { price: 100000, stock: 10 });
    const made = await create(s, {
      email: `b-${uniq()}@example.com`, shipping_address: address,
      line_items: [{ product_id: fractional.id, quantity: 3 }, { product_id: whole.id, quantity: 1 }],
    });
    expect(made.statusCode, made.body).toBe(201);
    const c = (await change(s, made.json().data.checkout.token, { shipping_rate: { handle: `zone-${zone}` }, payment_method: 'card' })).json().data.checkout;
    const words = 'This item cannot be bought in JPY: its price 1000.50 is not a whole number of JPY minor units (0 decimals)';
    expect(c.currency).toBe('JPY');
    expect(c.validation_errors).toEqual([{ message: words, target: expect.any(String) }]);
    expect(c.line_items.map((l: any) => [l.product_id, l.price])).toEqual([[whole.numId, '1000.00']]);
    expect(c).toMatchObject({ subtotal_price: '1000.00', shipping_price: '600.00', total_price: '1600.00' });
    expectEnvelopeError(await complete(s, c.token), 422, words);
    expect(await ordersOf(s.merchant.storeId)).toBe(0);
    expect(await stockOf(h, fractional)).toBe(10);
  });

  it('its only line so priced: the 422 carries the line\'s words, not "needs line items"', async () => {
    const { s } = await yenStore();
    const fractional = await insertProduct(h, s.merchant.storeId, { price: 100050, stock: 10 });
    const made = await create(s, { email: `b-${uniq()}@example.com`, shipping_address: address, line_items: [{ product_id: fractional.id, quantity: 1 }] });
    const token = made.json().data.checkout.token;
    const lineId = (await h.db.query<{ l: any }>(`SELECT line_items AS l FROM checkouts WHERE store_id = $1`, [s.merchant.storeId])).rows[0].l[0].id;
    expect(made.json().data.checkout.validation_errors).toEqual([{ message: expect.stringContaining('cannot be bought in JPY'), target: lineId }]);
    await change(s, token, { payment_method: 'card' });
    // Nothing left ships, so no rate is needed; the line's problem is what refuses it.
    expectEnvelopeError(await complete(s, token), 422, /^This item cannot be bought in JPY/);
  });
});

describe('the order status page (order_status_url)', () => {
  it('is marked not to be stored, refusals too: its key is in the URL', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId);
    const o = await takeOrder(h, s.merchant.token, orderBody(p));
    const view = (await h.req('GET', `/api/v1/orders/${o.orderId}.json`, { token: s.accessToken })).json().order;
    const url = new URL(view.order_status_url);
    for (const path of [url.pathname + url.search, `${url.pathname}?key=WRONG`]) {
      const res = await h.req('GET', path);
      expect(res.headers['cache-control'], path).toBe('no-store');
      expect(res.headers.pragma, path).toBe('no-cache');
    }
    expect((await h.req('GET', url.pathname + url.search)).statusCode).toBe(200);
  });
});
