// Edge cases of the buyer checkout (C15.1), merchant zone rates (C15.2) and shipping apps'
// live rates (C15.3): each test failed before its fix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { checkoutCalls, insertSimpleZone } from './helpers/checkout.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { createTestApp, installApp, signupPartner, storeWithApp } from './helpers/actors.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { address, insertProduct, orderStore, stockOf, uniq, type TestProduct } from './helpers/orders.js';
import { alpha2 } from '../src/shipping/countries.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const { create, read, change, complete } = checkoutCalls(() => h);

const zone = (storeId: string, z: { name: string; countries: string[]; price: number }) => insertSimpleZone(h, storeId, z);

/** A store with a shipping app whose receiver answers `answer`. */
async function storeWithShippingApp(rx: Receiver) {
  const s = await orderStore(h);
  const partner = await signupPartner(h);
  const app = await createTestApp(h, partner.token, { scopes: ['write_shipping'], extensions: { shipping: { ratesUrl: `${rx.url}/rates` } } });
  await installApp(h, s.merchant, app);
  return { s, app };
}

const ratesReply = (totalPrice: string) => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ rates: [{ service_name: 'Courier', service_code: 'courier', total_price: totalPrice, currency: 'USD' }] }),
});

describe('ISO 3166-1 alpha-2 country codes (C15.1, C6.10)', () => {
  // `'ﬁ'.toUpperCase()` is 'FI', `'ı'.toUpperCase()` is 'I' and `'ſ'.toUpperCase()` is 'S': a code
  // upper-cased before it is checked let non-ASCII forms through as another country's code.
  const lookalikes = ['ﬁ', 'ıt', 'ſe', 'ﬆ'];

  it('a shipping address whose country_code only upper-cases to a code -> 400', async () => {
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId);
    for (const code of lookalikes) {
      const res = await create(s, { line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: { ...address, country_code: code } });
      expectEnvelopeError(res, 400, /^shipping_address\.country_code /);
    }
    // ASCII in any case, and surrounding blanks, stay accepted.
    const ok = await create(s, { line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: { ...address, country_code: ' gb ' } });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().data.checkout.shipping_address.country_code).toBe('GB');
  });

  it('a shipping zone with such a code -> 400 envelope', async () => {
    const s = await storeWithApp(h, { scopes: ['read_shipping', 'write_shipping'], tier: 'enterprise' });
    for (const code of lookalikes) {
      const res = await h.req('POST', '/api/v1/shipping_zones.json', { token: s.accessToken, body: { name: `Zone ${uniq()}`, countries: [code], price: '1.00' } });
      expectEnvelopeError(res, 400, /^countries /);
    }
    expect(alpha2('fi')).toBe('FI');
    for (const code of lookalikes) expect(alpha2(code)).toBeNull();
  });
});

describe('shipping price of a live rate (C5.2: money without binary floating point)', () => {
  it('the chosen rate costs exactly its price, in the checkout and in the order', async () => {
    // 90071992547093.15: Number('90071992547093.15') * 100 rounds to ...316.
    const rx = await startReceiver(() => ratesReply('9007199254709315'));
    try {
      const { s, app } = await storeWithShippingApp(rx);
      const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 5 });
      const c = (await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address })).json().data.checkout;
      const chosen = await change(s, c.token, { shipping_rate: { handle: `app-${app.handle}-courier` }, payment_method: 'card' });
      expect(chosen.statusCode, chosen.body).toBe(200);
      const checkout = chosen.json().data.checkout;
      expect(checkout.shipping_line.price).toBe('90071992547093.15');
      expect(checkout).toMatchObject({ shipping_price: '90071992547093.15', total_price: '90071992547103.15' });
      const done = await complete(s, c.token);
      expect(done.statusCode, done.body).toBe(201);
      expect(done.json().data.order).toMatchObject({ shipping_price: '90071992547093.15', total_price: '90071992547103.15' });
    } finally {
      await rx.close();
    }
  });
});

describe("the order's shipping_methods name the rate chosen by its handle (C15.1-C15.3)", () => {
  it('a zone rate and an app rate: handle is the rate handle the buyer chose, not the shipping line code', async () => {
    const rx = await startReceiver(() => ratesReply('700'));
    try {
      const { s, app } = await storeWithShippingApp(rx);
      const zoneId = await zone(s.merchant.storeId, { name: 'Standard Shipping', countries: ['GB'], price: 500 });
      for (const handle of [`zone-${zoneId}`, `app-${app.handle}-courier`]) {
        const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 5 });
        const c = (await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address })).json().data.checkout;
        expect((await change(s, c.token, { shipping_rate: { handle }, payment_method: 'card' })).statusCode).toBe(200);
        const done = await complete(s, c.token);
        expect(done.statusCode, done.body).toBe(201);
        const order = done.json().data.order;
        const read = await h.req('GET', `/api/v1/orders/${order.id}.json`, { token: s.accessToken });
        expect(read.json().order.shipping_methods).toEqual([expect.objectContaining({ handle })]);
        // The shipping line keeps the code (C15.2 `code` = the zone's name; C15.3 `{app}-{service}`).
        expect(read.json().order.shipping_lines[0].code).toBe(handle.startsWith('zone-') ? 'Standard Shipping' : `${app.handle}-courier`);
      }
    } finally {
      await rx.close();
    }
  });
});

describe('completion against a checkout changed meanwhile (C15.1)', () => {
  /**
   * A checkout with an app's rate and `card` chosen, being completed: the first quote answered at
   * once, the completion's (its cached answer expired) takes 1.5 s. `during` runs meanwhile, once
   * the completion has asked the app; it gets the completion's answer to await.
   */
  type Completing = { s: Awaited<ReturnType<typeof orderStore>>; product: TestProduct; token: string; completing: ReturnType<typeof complete> };
  async function whileCompleting(during: (ctx: Completing) => Promise<void>) {
    let asked = 0;
    const rx = await startReceiver(() => ({ ...ratesReply('700'), delayMs: asked++ === 0 ? 0 : 1500 }));
    try {
      const { s, app } = await storeWithShippingApp(rx);
      const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
      const c = (await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 2 }], shipping_address: address })).json().data.checkout;
      expect((await change(s, c.token, { shipping_rate: { handle: `app-${app.handle}-courier` }, payment_method: 'card' })).statusCode).toBe(200);
      await h.advance(16 * 60);
      const completing = complete(s, c.token);
      while (rx.received.length < 2) await new Promise((r) => setTimeout(r, 10));
      await during({ s, product, token: c.token, completing });
    } finally {
      await rx.close();
    }
  }

  it('the order is never taken from what the checkout was before a change that landed while it completed', async () => {
    await whileCompleting(async ({ s, product, token, completing }) => {
      // New lines, which also clear the chosen rate.
      const changed = await change(s, token, { line_items: [{ product_id: product.id, quantity: 5 }] });
      expect(changed.statusCode, changed.body).toBe(200);
      // The checkout as it now stands has no rate: completing it needs one.
      expectEnvelopeError(await completing, 422, /a shipping rate/);
      const after = (await read(s, token)).json().data.checkout;
      expect(after).toMatchObject({ order_id: null, completed_at: null, line_items: [{ quantity: 5 }], shipping_line: null });
      expect(await stockOf(h, product)).toBe(10);
      const { rows } = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE store_id = $1', [s.merchant.storeId]);
      expect(rows[0].n).toBe(0);
    });
  });

  it('a change that still completes: the order is of the checkout as changed', async () => {
    await whileCompleting(async ({ s, token, completing }) => {
      const email = `late-${uniq()}@example.com`;
      expect((await change(s, token, { email, payment_method: 'cod', note: 'leave at the door' })).statusCode).toBe(200);
      const done = await completing;
      expect(done.statusCode, done.body).toBe(201);
      expect(done.json().data.order).toMatchObject({ email, financial_status: 'pending', note: 'leave at the door' });
    });
  });

  it('a price that moved while it completed: the order and the completed checkout show the same figures', async () => {
    await whileCompleting(async ({ s, product, token, completing }) => {
      // The completion priced the lines at 10.00 before it asked the app; the merchant changes the
      // price before its transaction places the order, which prices the lines again.
      await h.db.query('UPDATE products SET price_minor = 1500 WHERE id = $1', [product.id]);
      const done = await completing;
      expect(done.statusCode, done.body).toBe(201);
      const order = done.json().data.order;
      expect(order).toMatchObject({ subtotal_price: '30.00', shipping_price: '7.00', total_price: '37.00' });
      expect(order.line_items[0].price).toBe('15.00');
      const after = (await read(s, token)).json().data.checkout;
      expect(after.order_id).toBe(order.id);
      expect(after).toMatchObject({ subtotal_price: order.subtotal_price, total_price: order.total_price, shipping_price: order.shipping_price });
      expect(after.line_items.map((l: { price: string }) => l.price)).toEqual(['15.00']);
    });
  });
});

describe('a checkout past what an order can hold (C5.2, pricing.ts MAX_ORDER_MINOR)', () => {
  it('lines sent past it are refused (400, nothing written), as POST /orders refuses them: no made-up amounts are ever shown', async () => {
    const s = await orderStore(h);
    const gold = await insertProduct(h, s.merchant.storeId, { title: 'Gold', price: 1e15, stock: 100_000 });
    const before = (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM checkouts WHERE store_id = $1', [s.merchant.storeId])).rows[0].n;
    // 10 x 10^15 hundredths: past 2^53 - 1 the sums are not exact (a review saw 8999999999991012.84 for 8999999999991000.00).
    expectEnvelopeError(await create(s, { line_items: [{ product_id: gold.id, quantity: 10 }], shipping_address: address }), 400, /more than an order can hold/);
    const { rows } = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM checkouts WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows[0].n).toBe(before);
    const ok = await create(s, { line_items: [{ product_id: gold.id, quantity: 9 }], shipping_address: address });
    expect(ok.statusCode, ok.body).toBe(201);
    const token = ok.json().data.checkout.token;
    expectEnvelopeError(await change(s, token, { line_items: [{ product_id: gold.id, quantity: 5 }, { product_id: gold.id, quantity: 5 }] }), 400, /more than an order can hold/);
    expect((await read(s, token)).json().data.checkout.line_items.map((l: { quantity: number }) => l.quantity)).toEqual([9]);
  });

  it('a price raised under a checkout takes it past: a validation error for the cart, and completion is a 422 with no order and stock untouched', async () => {
    const s = await orderStore(h);
    const gold = await insertProduct(h, s.merchant.storeId, { title: 'Gold', price: 1e15, stock: 100_000 });
    const standard = await zone(s.merchant.storeId, { name: 'Standard', countries: ['GB'], price: 500 });
    const res = await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: gold.id, quantity: 9 }], shipping_address: address });
    expect(res.statusCode, res.body).toBe(201);
    await h.db.query('UPDATE products SET price_minor = $2 WHERE id = $1', [gold.id, 2e15]);
    const chosen = await change(s, res.json().data.checkout.token, { shipping_rate: { handle: `zone-${standard}` }, payment_method: 'card' });
    expect(chosen.statusCode, chosen.body).toBe(200);
    const c = chosen.json().data.checkout;
    expect(c.validation_errors).toEqual([{ message: "The checkout's total is above the largest amount an order can hold", target: 'cart' }]);
    expectEnvelopeError(await complete(s, c.token), 422, /largest amount an order can hold/);
    // Fewer units: within it, the error is gone.
    const fewer = await change(s, c.token, { line_items: [{ product_id: gold.id, quantity: 4 }] });
    expect(fewer.statusCode, fewer.body).toBe(200);
    expect(fewer.json().data.checkout.validation_errors).toEqual([]);
    expect(await stockOf(h, gold)).toBe(100_000);
    const { rows } = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows[0].n).toBe(0);
  });
});
