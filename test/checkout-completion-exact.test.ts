// Completion places the order the checkout last showed, or none (C15.1, C11.4; docs/decisions.md,
// Checkouts: "Completion charges what the checkout showed"). Two holes found in review, both
// failed before their fix:
// - the chosen rate offered now under another title or code at the same price (an app's answer
//   expired, a zone renamed, a delivery function renaming it) made an order whose shipping line
//   was not the checkout's;
// - the cart functions' results changed since the checkout was last shown (a discount function
//   deactivated) made an order at another total than the checkout showed.
// Each is now a 422 naming the change, the checkout then shows the new state, and completing again
// makes an order equal to what it shows. Real HTTP; the shipping app is a real receiver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { checkoutCalls } from './helpers/checkout.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { storeWithApp } from './helpers/actors.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { address, insertProduct, stockOf, uniq, type TestProduct } from './helpers/orders.js';
import { DELIVERY_TARGET, DISCOUNT_TARGET } from '../src/checkout/checkout-functions.js';

let h: Harness;
const receivers: Receiver[] = [];
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await Promise.all(receivers.map((rx) => rx.close()));
  await h?.close();
});

const { create, read, change, complete } = checkoutCalls(() => h);
const SCOPES = ['read_products', 'write_products', 'read_orders', 'write_orders', 'read_customers', 'read_shipping', 'write_shipping'];

type Store = Awaited<ReturnType<typeof storeWithApp>>;

const ordersOf = async (storeId: string) =>
  (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE store_id = $1', [storeId])).rows[0].n;

async function zoneOf(s: Store, body: Record<string, unknown>): Promise<string> {
  const res = await h.req('POST', '/api/v1/shipping_zones.json', { token: s.accessToken, body });
  expect(res.statusCode, res.body).toBe(201);
  return `zone-${res.json().data.shipping_zone.shippingZoneId}`;
}

/** A checkout of `quantity` of `product`, with an email and an address: its token. */
async function started(s: Store, product: TestProduct, quantity = 1): Promise<string> {
  const made = await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity }], shipping_address: address });
  expect(made.statusCode, made.body).toBe(201);
  return made.json().data.checkout.token as string;
}

async function functionNamed(s: Store, handle: string): Promise<string> {
  const res = await h.req('GET', '/functions', { token: s.merchant.token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.functions.find((f: { handle: string }) => f.handle === handle).functionId;
}

/**
 * Completing again succeeds, and the order is what the checkout showed just before: its shipping
 * line (title, code, source, price) and every total; the completed checkout still shows the same.
 */
async function completesAsShown(s: Store, token: string) {
  const shown = (await read(s, token)).json().data.checkout;
  const done = await complete(s, token);
  expect(done.statusCode, done.body).toBe(201);
  const order = done.json().data.order;
  const line = shown.shipping_line;
  expect(order.shipping_lines).toEqual([{ title: line.title, code: line.code, source: line.source, price: line.price, currency: shown.currency }]);
  expect(order).toMatchObject({
    subtotal_price: shown.subtotal_price, total_discounts: shown.total_discounts, total_price: shown.total_price,
  });
  expect(order.discount_applications.map((d: any) => [d.type, d.title, d.value, d.value_type]))
    .toEqual(shown.discount_applications.map((d: any) => [d.type, d.title, d.value, d.value_type]));
  const after = (await read(s, token)).json().data.checkout;
  expect(after.order_id).toEqual(expect.any(String));
  expect(after).toMatchObject({
    shipping_line: line, shipping_price: shown.shipping_price, total_discounts: shown.total_discounts, total_price: shown.total_price,
    discount_applications: shown.discount_applications,
  });
  return { order, shown };
}

describe('the chosen rate offered under another title or code at the same price (C15.1 shipping_lines[0]; failed before its fix)', () => {
  it("a shipping app's answer expired and it names the same service otherwise: 422, the checkout shows the new title, completing again makes that order", async () => {
    let name = 'Standard (3-5 days)';
    const rx = await startReceiver(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rates: [{ service_name: name, service_code: 'std', total_price: 900, currency: 'USD' }] }),
    }));
    receivers.push(rx);
    const s = await storeWithApp(h, { scopes: SCOPES, tier: 'enterprise', extensions: { shipping: { ratesUrl: `${rx.url}/rates` } } });
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 10 });
    const token = await started(s, product, 2);
    const handle = `app-${s.app.handle}-std`;
    const chosen = await change(s, token, { shipping_rate: { handle }, payment_method: 'card' });
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(chosen.json().data.checkout).toMatchObject({ shipping_line: { handle, title: 'Standard (3-5 days)', price: '9.00' }, total_price: '63.00' });

    name = 'Overnight Premium';
    await h.advance(16 * 60);
    expect((await read(s, token)).json().data.checkout.shipping_line.title).toBe('Standard (3-5 days)');
    expectEnvelopeError(await complete(s, token), 422, /shipping rate chosen changed: its title from "Standard \(3-5 days\)" to "Overnight Premium".*complete it again/);
    expect(await ordersOf(s.merchant.storeId)).toBe(0);
    expect(await stockOf(h, product)).toBe(10);
    expect((await read(s, token)).json().data.checkout).toMatchObject({
      shipping_line: { handle, title: 'Overnight Premium', code: `${s.app.handle}-std`, source: s.app.handle, price: '9.00' }, total_price: '63.00',
    });

    const { order } = await completesAsShown(s, token);
    expect(order.shipping_lines[0].title).toBe('Overnight Premium');
  });

  it('a zone renamed (its title and code): the same', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES, tier: 'enterprise' });
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 10 });
    const handle = await zoneOf(s, { name: 'Standard', countries: ['GB'], price: '9.00' });
    const token = await started(s, product);
    expect((await change(s, token, { shipping_rate: { handle }, payment_method: 'card' })).statusCode).toBe(200);

    const put = await h.req('PUT', `/api/v1/shipping_zones/${handle.slice('zone-'.length)}.json`, { token: s.accessToken, body: { name: 'Express' } });
    expect(put.statusCode, put.body).toBe(200);
    expect((await read(s, token)).json().data.checkout.shipping_line).toMatchObject({ title: 'Standard', code: 'Standard' });
    expectEnvelopeError(await complete(s, token), 422, /its title from "Standard" to "Express", its code from "Standard" to "Express"/);
    expect(await ordersOf(s.merchant.storeId)).toBe(0);
    expect((await read(s, token)).json().data.checkout.shipping_line).toMatchObject({ handle, title: 'Express', code: 'Express', price: '9.00' });

    const { order } = await completesAsShown(s, token);
    expect(order.shipping_lines[0]).toMatchObject({ title: 'Express', code: 'Express', price: '9.00' });
  });

  it('a delivery function renaming the rate since it was chosen (the merchant changed its configuration): the same', async () => {
    const s = await storeWithApp(h, {
      scopes: SCOPES, tier: 'enterprise',
      extensions: { functions: [{ handle: 'rename', target: DELIVERY_TARGET, configuration: { title: 'Standard' }, expression: '{"operations": input.deliveryOptions.map(o, {"rename": {"handle": o.handle, "title": configuration.title}})}' }] },
    });
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 10 });
    const handle = await zoneOf(s, { name: 'Standard', countries: ['GB'], price: '9.00' });
    const token = await started(s, product);
    expect((await change(s, token, { shipping_rate: { handle }, payment_method: 'card' })).statusCode).toBe(200);

    const patched = await h.req('PATCH', `/functions/${await functionNamed(s, 'rename')}`, { token: s.merchant.token, body: { configuration: { title: 'Next day' } } });
    expect(patched.statusCode, patched.body).toBe(200);
    expectEnvelopeError(await complete(s, token), 422, /its title from "Standard" to "Next day"/);
    expect(await ordersOf(s.merchant.storeId)).toBe(0);
    expect((await read(s, token)).json().data.checkout.shipping_line).toMatchObject({ handle, title: 'Next day', code: 'Standard' });

    const { order } = await completesAsShown(s, token);
    expect(order.shipping_lines[0]).toMatchObject({ title: 'Next day', code: 'Standard' });
  });

  it('a rate renamed and repriced at once: one 422 names both', async () => {
    const s = await storeWithApp(h, { scopes: SCOPES, tier: 'enterprise' });
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 10 });
    const handle = await zoneOf(s, { name: 'Standard', countries: ['GB'], price: '9.00' });
    const token = await started(s, product);
    expect((await change(s, token, { shipping_rate: { handle }, payment_method: 'card' })).statusCode).toBe(200);
    const put = await h.req('PUT', `/api/v1/shipping_zones/${handle.slice('zone-'.length)}.json`, { token: s.accessToken, body: { name: 'Express', price: '12.00' } });
    expect(put.statusCode, put.body).toBe(200);
    expectEnvelopeError(await complete(s, token), 422, /its title from "Standard" to "Express", its code from "Standard" to "Express", its price from 9\.00 to 12\.00/);
    expect((await read(s, token)).json().data.checkout).toMatchObject({ shipping_line: { title: 'Express', price: '12.00' }, total_price: '39.00' });
    const { order } = await completesAsShown(s, token);
    expect(order.total_price).toBe('39.00');
  });
});

describe('what the order does not copy of the rate (C15.1: title, code, source, price)', () => {
  it("an app's answer with another description and delivery dates only: completion goes on, with the rate as chosen", async () => {
    let day = '2026-12-01';
    const rx = await startReceiver(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rates: [{ service_name: 'Standard', service_code: 'std', total_price: 900, currency: 'USD', description: `From ${day}`, min_delivery_date: day, max_delivery_date: day }] }),
    }));
    receivers.push(rx);
    const s = await storeWithApp(h, { scopes: SCOPES, tier: 'enterprise', extensions: { shipping: { ratesUrl: `${rx.url}/rates` } } });
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 10 });
    const token = await started(s, product);
    expect((await change(s, token, { shipping_rate: { handle: `app-${s.app.handle}-std` }, payment_method: 'card' })).statusCode).toBe(200);
    day = '2026-12-02';
    await h.advance(16 * 60);
    const { order } = await completesAsShown(s, token);
    expect(order.shipping_lines[0]).toMatchObject({ title: 'Standard', price: '9.00' });
    expect((await read(s, token)).json().data.checkout.shipping_line).toMatchObject({ description: 'From 2026-12-01', min_delivery_date: '2026-12-01' });
  });
});

describe("the cart functions' results changed since the checkout was shown (C11.4: a GET shows the last runs; failed before its fix)", () => {
  const TEN_OFF = { handle: 'ten-off', target: DISCOUNT_TARGET, expression: '{"operations": [{"orderDiscountAdd": {"message": "10% off", "value": {"percentage": configuration.pct}}}]}', configuration: { pct: 10 } };

  async function shopWithDiscount() {
    const s = await storeWithApp(h, { scopes: SCOPES, tier: 'enterprise', extensions: { functions: [TEN_OFF] } });
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 10 });
    const handle = await zoneOf(s, { name: 'Standard', countries: ['GB'], price: '9.00' });
    const token = await started(s, product, 2);
    const chosen = await change(s, token, { shipping_rate: { handle }, payment_method: 'card' });
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(chosen.json().data.checkout).toMatchObject({ total_discounts: '5.40', total_price: '57.60' });
    return { s, product, token, fn: await functionNamed(s, 'ten-off') };
  }

  it('an automatic discount function deactivated: 422 naming both totals, the checkout shows the new one, completing again charges it', async () => {
    const { s, product, token, fn } = await shopWithDiscount();
    const off = await h.req('PATCH', `/functions/${fn}`, { token: s.merchant.token, body: { active: false } });
    expect(off.statusCode, off.body).toBe(200);
    // The buyer is still shown 57.60 (a GET runs nothing).
    expect((await read(s, token)).json().data.checkout).toMatchObject({ total_discounts: '5.40', total_price: '57.60' });

    expectEnvelopeError(await complete(s, token), 422, /checkout's total changed from 57\.60 to 63\.00.*complete it again to accept it/);
    expect(await ordersOf(s.merchant.storeId)).toBe(0);
    expect(await stockOf(h, product)).toBe(10);
    expect((await read(s, token)).json().data.checkout).toMatchObject({ discount_applications: [], total_discounts: '0.00', total_price: '63.00' });

    const { order } = await completesAsShown(s, token);
    expect(order).toMatchObject({ total_discounts: '0.00', total_price: '63.00' });
  });

  it('a discount function giving more since: the same, the other way', async () => {
    const { s, token, fn } = await shopWithDiscount();
    const more = await h.req('PATCH', `/functions/${fn}`, { token: s.merchant.token, body: { configuration: { pct: 20 } } });
    expect(more.statusCode, more.body).toBe(200);
    expectEnvelopeError(await complete(s, token), 422, /total changed from 57\.60 to 52\.20/);
    expect((await read(s, token)).json().data.checkout).toMatchObject({ total_discounts: '10.80', total_price: '52.20' });
    const { order } = await completesAsShown(s, token);
    expect(order).toMatchObject({ total_discounts: '10.80', total_price: '52.20' });
  });

  it('the same total under another discount title: 422 too (the order copies the titles), then the order shows the new one', async () => {
    const s = await storeWithApp(h, {
      scopes: SCOPES, tier: 'enterprise',
      extensions: { functions: [{ handle: 'named', target: DISCOUNT_TARGET, configuration: { title: 'Spring sale' }, expression: '{"operations": [{"orderDiscountAdd": {"message": configuration.title, "value": {"percentage": 10}}}]}' }] },
    });
    const product = await insertProduct(h, s.merchant.storeId, { price: 2700, stock: 10 });
    const handle = await zoneOf(s, { name: 'Standard', countries: ['GB'], price: '9.00' });
    const token = await started(s, product, 2);
    expect((await change(s, token, { shipping_rate: { handle }, payment_method: 'card' })).statusCode).toBe(200);
    const renamed = await h.req('PATCH', `/functions/${await functionNamed(s, 'named')}`, { token: s.merchant.token, body: { configuration: { title: 'Summer sale' } } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expectEnvelopeError(await complete(s, token), 422, /checkout's discounts changed; the checkout shows them now/);
    expect((await read(s, token)).json().data.checkout).toMatchObject({ discount_applications: [expect.objectContaining({ title: 'Summer sale', amount: '5.40' })], total_price: '57.60' });
    const { order } = await completesAsShown(s, token);
    expect(order.discount_applications[0].title).toBe('Summer sale');
  });

  it('two completions at once after the change: both refused and no order; then two at once make one order (single flight)', async () => {
    const { s, product, token, fn } = await shopWithDiscount();
    expect((await h.req('PATCH', `/functions/${fn}`, { token: s.merchant.token, body: { active: false } })).statusCode).toBe(200);
    const first = await Promise.all([complete(s, token), complete(s, token)]);
    for (const res of first) expectEnvelopeError(res, 422, /total changed from 57\.60 to 63\.00/);
    expect(await ordersOf(s.merchant.storeId)).toBe(0);
    expect((await read(s, token)).json().data.checkout.total_price).toBe('63.00');
    const second = await Promise.all([complete(s, token), complete(s, token)]);
    expect(second.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect(await ordersOf(s.merchant.storeId)).toBe(1);
    expect(await stockOf(h, product)).toBe(8);
    expect(second.find((r) => r.statusCode === 201)!.json().data.order.total_price).toBe('63.00');
  });

  it('the same total from the functions: completion goes on at once', async () => {
    const { s, token, fn } = await shopWithDiscount();
    // Run again with the same outcome (configuration rewritten as it was).
    expect((await h.req('PATCH', `/functions/${fn}`, { token: s.merchant.token, body: { configuration: { pct: 10 } } })).statusCode).toBe(200);
    const { order } = await completesAsShown(s, token);
    expect(order).toMatchObject({ total_discounts: '5.40', total_price: '57.60' });
  });
});
