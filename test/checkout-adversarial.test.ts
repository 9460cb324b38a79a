// Fourth review of the storefront checkout (C15.1-C15.3): each test marked "failed before its fix"
// found a bug. Real HTTP through the service's routes; shipping apps are real receivers.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { checkoutCalls } from './helpers/checkout.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { createTestApp, installApp, signupPartner } from './helpers/actors.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { address, insertProduct, orderStore, ORDER_SCOPES, stockOf, uniq } from './helpers/orders.js';

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

const ordersOf = async (storeId: string) =>
  (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE store_id = $1', [storeId])).rows[0].n;

/** A store whose app may write shipping zones (App API), with one product. */
async function shop() {
  const s = await orderStore(h, [...ORDER_SCOPES, 'read_shipping', 'write_shipping']);
  const product = await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 10 });
  return { s, product };
}

async function zoneOf(s: Awaited<ReturnType<typeof shop>>['s'], body: Record<string, unknown>): Promise<string> {
  const res = await h.req('POST', '/api/v1/shipping_zones.json', { token: s.accessToken, body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.shipping_zone.shippingZoneId;
}

describe('the chosen rate at another price by completion (C15.1: the checkout shows what completion charges; failed before its fix)', () => {
  it("a zone's price changed after the choice: completion charges no total the buyer was not shown; the checkout then shows the new one, and completes at it", async () => {
    const { s, product } = await shop();
    const zoneId = await zoneOf(s, { name: 'Standard', countries: ['GB'], price: '4.99' });
    const made = await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address });
    expect(made.statusCode, made.body).toBe(201);
    const token = made.json().data.checkout.token as string;
    const chosen = await change(s, token, { shipping_rate: { handle: `zone-${zoneId}` }, payment_method: 'card' });
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(chosen.json().data.checkout).toMatchObject({ shipping_price: '4.99', total_price: '17.49' });

    const put = await h.req('PUT', `/api/v1/shipping_zones/${zoneId}.json`, { token: s.accessToken, body: { price: '9.99' } });
    expect(put.statusCode, put.body).toBe(200);
    // The buyer was shown 17.49.
    expect((await read(s, token)).json().data.checkout).toMatchObject({ shipping_line: expect.objectContaining({ price: '4.99' }), total_price: '17.49' });

    const refused = await complete(s, token);
    expectEnvelopeError(refused, 422, /shipping rate.*changed from 4\.99 to 9\.99/);
    expect(await ordersOf(s.merchant.storeId)).toBe(0);
    expect(await stockOf(h, product)).toBe(10);
    // Now the checkout shows the rate at its price, and the total it makes.
    expect((await read(s, token)).json().data.checkout).toMatchObject({
      shipping_line: expect.objectContaining({ handle: `zone-${zoneId}`, price: '9.99' }), shipping_price: '9.99', total_price: '22.49',
    });

    const done = await complete(s, token);
    expect(done.statusCode, done.body).toBe(201);
    expect(done.json().data.order).toMatchObject({ total_price: '22.49', shipping_lines: [expect.objectContaining({ price: '9.99' })] });
  });

  it("a shipping app quoting another price once its answer expired: the same (C15.3's 15 minutes on the service clock)", async () => {
    let price = '700';
    const rx = await startReceiver(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rates: [{ service_name: 'Courier', service_code: 'c', total_price: price, currency: 'USD' }] }),
    }));
    receivers.push(rx);
    const { s, product } = await shop();
    const partner = await signupPartner(h);
    const handle = `ship-${uniq()}`;
    await installApp(h, s.merchant, await createTestApp(h, partner.token, { handle, scopes: ['write_shipping'], extensions: { shipping: { ratesUrl: `${rx.url}/rates` } } }));
    const made = await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address });
    const token = made.json().data.checkout.token as string;
    const chosen = await change(s, token, { shipping_rate: { handle: `app-${handle}-c` }, payment_method: 'card' });
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(chosen.json().data.checkout).toMatchObject({ shipping_price: '7.00', total_price: '19.50' });

    price = '1100';
    await h.advance(16 * 60);
    expectEnvelopeError(await complete(s, token), 422, /changed from 7\.00 to 11\.00/);
    expect(await ordersOf(s.merchant.storeId)).toBe(0);
    expect((await read(s, token)).json().data.checkout).toMatchObject({ shipping_price: '11.00', total_price: '23.50' });
    const done = await complete(s, token);
    expect(done.statusCode, done.body).toBe(201);
    expect(done.json().data.order).toMatchObject({ total_price: '23.50', shipping_lines: [expect.objectContaining({ price: '11.00', source: handle })] });
  });
});

describe('the chosen rate stays when nothing it depends on changed (C15.1; failed before its fix)', () => {
  it('the same address or the same lines sent again keep it; another address or quantity clears it', async () => {
    const { s, product } = await shop();
    const zoneId = await zoneOf(s, { name: 'Standard', countries: ['GB'], price: '4.99' });
    const made = await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 2 }], shipping_address: address });
    expect(made.statusCode, made.body).toBe(201);
    const token = made.json().data.checkout.token as string;
    const handle = `zone-${zoneId}`;
    const choose = async () => expect((await change(s, token, { shipping_rate: { handle } })).statusCode).toBe(200);
    const chosenAfter = async (body: Record<string, unknown>) => {
      const res = await change(s, token, body);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data.checkout.shipping_line?.handle ?? null;
    };
    await choose();
    // A storefront sending its whole form with a new email: the address as it was (in another key order, with blanks).
    const resent = Object.fromEntries(Object.entries({ ...address, company: '' }).reverse());
    expect(await chosenAfter({ email: `c-${uniq()}@example.com`, shipping_address: resent })).toBe(handle);
    expect(await chosenAfter({ line_items: [{ product_id: product.id, quantity: 2 }] })).toBe(handle);
    // As the checkout shows the line (numeric ids), too.
    const shown = (await read(s, token)).json().data.checkout.line_items[0];
    expect(await chosenAfter({ line_items: [{ product_id: shown.product_id, quantity: 2 }] })).toBe(handle);

    expect(await chosenAfter({ shipping_address: { ...address, city: 'Leeds' } })).toBeNull();
    await choose();
    expect(await chosenAfter({ line_items: [{ product_id: product.id, quantity: 3 }] })).toBeNull();
    await choose();
    expect(await chosenAfter({ shipping_address: null })).toBeNull();
  });
});

describe("a checkout's own lines sent back (C15.1 line_items; failed before its fix)", () => {
  it("a product without variants is shown with variant_id = the product's id, and that line sent back is taken", async () => {
    const { s, product } = await shop();
    const withVariants = await insertProduct(h, s.merchant.storeId, { price: null, variants: [{ value: 'S', price: 500, stock: 5 }] });
    const made = await create(s, { line_items: [{ product_id: product.id, quantity: 1 }, { product_id: withVariants.id, variant_id: withVariants.variants[0].id, quantity: 1 }] });
    expect(made.statusCode, made.body).toBe(201);
    const c = made.json().data.checkout;
    expect(c.line_items[0]).toMatchObject({ product_id: product.numId, variant_id: product.numId });
    const echoed = c.line_items.map((l: { product_id: number; variant_id: number; quantity: number }) => ({ product_id: l.product_id, variant_id: l.variant_id, quantity: l.quantity + 1 }));
    const res = await change(s, c.token, { line_items: echoed });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.checkout.line_items.map((l: { quantity: number; variant_id: number }) => [l.variant_id, l.quantity])).toEqual([[product.numId, 2], [withVariants.variants[0].numId, 2]]);
    // By UUID as well.
    expect((await change(s, c.token, { line_items: [{ product_id: product.id, variant_id: product.id, quantity: 1 }] })).statusCode).toBe(200);

    // Still refused: a product with variants named by its own id, and another product's variant.
    const own = await change(s, c.token, { line_items: [{ product_id: withVariants.id, variant_id: withVariants.numId, quantity: 1 }] });
    if (withVariants.numId !== withVariants.variants[0].numId) expectEnvelopeError(own, 400, /^line_items\[0\]\.variant_id /);
    expectEnvelopeError(await change(s, c.token, { line_items: [{ product_id: product.id, variant_id: withVariants.variants[0].id, quantity: 1 }] }), 400, /^line_items\[0\]\.variant_id is not a variant/);
  });
});

describe('a change that lands while another is being made (C15.1; failed before its fix)', () => {
  it('a rate chosen for the address the checkout had is not kept once a new address landed meanwhile: the choice starts over', async () => {
    // A shipping app with a rate for GB only, whose first answer waits until the test lets it go.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const firstArrived = new Promise<void>((resolve) => (arrived = resolve));
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const country = JSON.parse(Buffer.concat(chunks).toString()).rate.destination.country;
        arrived();
        await released;
        const rates = country === 'GB' ? [{ service_name: 'UK courier', service_code: 'uk', total_price: '500', currency: 'USD' }] : [];
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ rates }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { s, product } = await shop();
      const partner = await signupPartner(h);
      const handle = `uk-${uniq()}`;
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rates`;
      await installApp(h, s.merchant, await createTestApp(h, partner.token, { handle, scopes: ['write_shipping'], extensions: { shipping: { ratesUrl: url } } }));
      const made = await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address });
      expect(made.statusCode, made.body).toBe(201);
      const token = made.json().data.checkout.token as string;

      // The buyer chooses the UK rate; its quote waits on the app...
      const choosing = change(s, token, { shipping_rate: { handle: `app-${handle}-uk` } });
      await firstArrived;
      // ...while another tab moves the checkout to the US.
      const moved = await change(s, token, { shipping_address: { ...address, country_code: 'US', country: 'United States', province_code: 'NY' } });
      expect(moved.statusCode, moved.body).toBe(200);
      release();
      const chose = await choosing;
      // Asked again for the checkout as it now stands (US), the rate is not offered.
      expectEnvelopeError(chose, 422, /shipping_rate is not one of the rates offered/);
      const now = (await read(s, token)).json().data.checkout;
      expect(now.shipping_address.country_code).toBe('US');
      expect(now.shipping_line).toBeNull();
      expect(now.shipping_price).toBe('0.00');
    } finally {
      release();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
