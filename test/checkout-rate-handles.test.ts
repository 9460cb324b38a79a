// Third review of the storefront checkout's shipping rates (C15.1-C15.4): each test failed before
// its fix. Shipping apps are real HTTP receivers installed with `extensions.shipping.ratesUrl`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statementsOf as statementsOfDb } from './helpers/statements.js';
import { createHarness, type Harness } from './helpers/harness.js';
import { checkoutCalls, insertSimpleZone } from './helpers/checkout.js';
import { createTestApp, installApp, signupPartner, type TestApp } from './helpers/actors.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { address, insertProduct, orderStore, uniq } from './helpers/orders.js';
import { createLogger } from '../src/platform/logger.js';

const logLines: string[] = [];
const log = createLogger({ level: 'debug', destination: { write: (line: string) => void logLines.push(line) } });

let h: Harness;
const receivers: Receiver[] = [];
beforeAll(async () => {
  h = await createHarness({}, { log });
});
afterAll(async () => {
  await Promise.all(receivers.map((rx) => rx.close()));
  await h?.close();
});

const { create, change, rates, complete } = checkoutCalls(() => h);

type Reply = { service_name: string; service_code: string; total_price: string };

/** A real receiver answering every rate request with these USD rates. */
async function shippingApp(replies: Reply[]): Promise<Receiver> {
  const rx = await startReceiver(() => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rates: replies.map((r) => ({ ...r, currency: 'USD' })) }),
  }));
  receivers.push(rx);
  return rx;
}

/** A store with these shipping apps installed (write_shipping granted), each with its own handle. */
async function storeWithShippingApps(apps: { handle: string; rx: Receiver }[]) {
  const s = await orderStore(h);
  const partner = await signupPartner(h);
  const installed: TestApp[] = [];
  for (const { handle, rx } of apps) {
    const app = await createTestApp(h, partner.token, { handle, scopes: ['write_shipping'], extensions: { shipping: { ratesUrl: `${rx.url}/rates` } } });
    await installApp(h, s.merchant, app);
    installed.push(app);
  }
  return { s, apps: installed };
}

describe('two offered rates never share a handle (C15.3, C15.1)', () => {
  it('app `x` code `b-c` and app `x-b` code `c` both make `app-x-b-c`: the first offered is kept, chosen and ordered (failed before its fix)', async () => {
    const x = `h${uniq()}`;
    // In handle order `x` comes before `x-b`, so `x`'s rate is the first offered with that handle.
    const first = await shippingApp([{ service_name: 'Express', service_code: 'b-c', total_price: '900' }, { service_name: 'Other', service_code: 'z', total_price: '300' }]);
    const second = await shippingApp([{ service_name: 'Economy', service_code: 'c', total_price: '100' }, { service_name: 'Own', service_code: 'd', total_price: '200' }]);
    const { s } = await storeWithShippingApps([{ handle: `${x}-b`, rx: second }, { handle: x, rx: first }]);
    const zoneId = await insertSimpleZone(h, s.merchant.storeId, { name: 'Standard', countries: ['GB'], price: 499 });
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 5 });
    const made = await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address });
    expect(made.statusCode, made.body).toBe(201);
    const token = made.json().data.checkout.token as string;

    logLines.length = 0;
    const listed = await rates(s, token);
    expect(listed.statusCode, listed.body).toBe(200);
    const offered = listed.json().data.shipping_rates as { handle: string; title: string; price: string; source: string | null; code: string }[];
    const handles = offered.map((r) => r.handle);
    expect(new Set(handles).size).toBe(handles.length);
    // Zones first, then apps in handle order, each app's rates in its order; the later twin is gone.
    expect(offered.map((r) => [r.handle, r.source, r.price])).toEqual([
      [`zone-${zoneId}`, null, '4.99'],
      [`app-${x}-b-c`, x, '9.00'],
      [`app-${x}-z`, x, '3.00'],
      [`app-${x}-b-d`, `${x}-b`, '2.00'],
    ]);
    // The operator is told which app lost a rate, and to which.
    const warning = logLines.map((l) => JSON.parse(l)).find((l) => /same handle/.test(l.msg));
    expect(warning).toMatchObject({ level: 40, app: `${x}-b`, handle: `app-${x}-b-c`, keptFrom: x });

    // Asking again (this process now remembers the answers) offers the same list, and tells no more.
    expect((await rates(s, token)).json().data.shipping_rates).toEqual(offered);
    expect(logLines.filter((l) => /same handle/.test(l))).toHaveLength(1);

    const chosen = await change(s, token, { shipping_rate: { handle: `app-${x}-b-c` }, payment_method: 'card' });
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(chosen.json().data.checkout.shipping_line).toMatchObject({ handle: `app-${x}-b-c`, title: 'Express', price: '9.00', source: x, code: `${x}-b-c` });
    expect(chosen.json().data.checkout).toMatchObject({ shipping_price: '9.00', total_price: '19.00' });

    const done = await complete(s, token);
    expect(done.statusCode, done.body).toBe(201);
    const order = done.json().data.order;
    expect(order.shipping_lines).toEqual([expect.objectContaining({ title: 'Express', code: `${x}-b-c`, source: x, price: '9.00' })]);
    expect(order.total_price).toBe('19.00');
  });
});

describe('the chosen rate is the one chosen, by handle and app (C15.1, C15.3)', () => {
  it('app `x-b` code `c` chosen, later withdrawn, and app `x` now offering code `b-c` (the same handle `app-x-b-c`, the same price): completion is a 422, not an order with the other app\'s rate', async () => {
    const x = `h${uniq()}`;
    let firstRates: Reply[] = [];
    let secondRates: Reply[] = [{ service_name: 'Economy', service_code: 'c', total_price: '900' }];
    const ratesOf = (list: () => Reply[]) => startReceiver(() => ({
      status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rates: list().map((r) => ({ ...r, currency: 'USD' })) }),
    }));
    const first = await ratesOf(() => firstRates);
    const second = await ratesOf(() => secondRates);
    receivers.push(first, second);
    const { s } = await storeWithShippingApps([{ handle: x, rx: first }, { handle: `${x}-b`, rx: second }]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 5 });
    const token = (await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address })).json().data.checkout.token as string;
    expect((await rates(s, token)).json().data.shipping_rates.map((r: { handle: string; source: string }) => [r.handle, r.source])).toEqual([[`app-${x}-b-c`, `${x}-b`]]);
    const chosen = await change(s, token, { shipping_rate: { handle: `app-${x}-b-c` }, payment_method: 'card' });
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(chosen.json().data.checkout.shipping_line).toMatchObject({ source: `${x}-b`, title: 'Economy', price: '9.00' });

    // The answers expire; now app `x-b` offers nothing and app `x` offers `b-c`, which makes the same handle.
    secondRates = [];
    firstRates = [{ service_name: 'Express', service_code: 'b-c', total_price: '900' }];
    await h.advance(16 * 60);
    expect((await rates(s, token)).json().data.shipping_rates.map((r: { handle: string; source: string }) => [r.handle, r.source])).toEqual([[`app-${x}-b-c`, x]]);

    const done = await complete(s, token);
    expect(done.statusCode, done.body).toBe(422);
    expect(done.body).toContain('a shipping rate that is still offered');
    const { rows } = await h.db.query('SELECT 1 FROM orders WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows).toHaveLength(0);
  });
});

const statementsOf = async (fn: () => Promise<unknown>) => (await statementsOfDb(h.deps.db, fn)).map((q) => q.name);

describe('choosing a rate reads the store\'s set as a quote does (C15.1, C11.4)', () => {
  it('a PATCH with shipping_rate reads no zones, apps or functions of its own while the process\'s copy is current', async () => {
    const rx = await shippingApp([{ service_name: 'Courier', service_code: 'courier', total_price: '700' }]);
    const handle = `h${uniq()}`;
    const { s } = await storeWithShippingApps([{ handle, rx }]);
    const zoneId = await insertSimpleZone(h, s.merchant.storeId, { name: 'Standard', countries: ['GB'], price: 499 });
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 5 });
    const token = (await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address })).json().data.checkout.token as string;
    // The buyer's page lists the rates first: this process now holds the store's set and the app's answer.
    expect((await rates(s, token)).json().data.shipping_rates.map((r: { handle: string }) => r.handle)).toEqual([`zone-${zoneId}`, `app-${handle}-courier`]);

    let chosen: Awaited<ReturnType<typeof change>> | undefined;
    const statements = await statementsOf(async () => (chosen = await change(s, token, { shipping_rate: { handle: `app-${handle}-courier` } })));
    expect(chosen!.statusCode, chosen!.body).toBe(200);
    expect(chosen!.json().data.checkout.shipping_line).toMatchObject({ handle: `app-${handle}-courier`, price: '7.00', source: handle });
    expect(statements).not.toContain('active_store_functions');
    expect(statements).not.toContain('checkout_zones_for_country');
    expect(statements).not.toContain('checkout_shipping_apps');
    expect(statements).not.toContain('checkout_store_config');
    expect(rx.received).toHaveLength(1);

    // A change of the store's set (a new zone) is seen by the very next choice.
    const cheaper = await insertSimpleZone(h, s.merchant.storeId, { name: 'Cheaper', countries: ['GB'], price: 199 });
    const again = await change(s, token, { shipping_rate: { handle: `zone-${cheaper}` } });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data.checkout.shipping_line).toMatchObject({ handle: `zone-${cheaper}`, price: '1.99', source: null });
  });
});

describe('every offered handle can be chosen (C15.1, C15.3)', () => {
  it('an app handle of 60 characters and a service code of 255 make a handle of 320, and PATCH takes it (failed before its fix)', async () => {
    const code = 'c'.repeat(255);
    const rx = await shippingApp([{ service_name: 'Long', service_code: code, total_price: '650' }]);
    const handle = `h${uniq()}-`.padEnd(60, 'x');
    const { s } = await storeWithShippingApps([{ handle, rx }]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 5 });
    const token = (await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address })).json().data.checkout.token as string;
    const [offered] = (await rates(s, token)).json().data.shipping_rates as { handle: string }[];
    expect(offered.handle).toBe(`app-${handle}-${code}`);
    expect(offered.handle).toHaveLength(320);

    const chosen = await change(s, token, { shipping_rate: { handle: offered.handle }, payment_method: 'card' });
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(chosen.json().data.checkout.shipping_line).toMatchObject({ handle: offered.handle, price: '6.50', source: handle });
    const done = await complete(s, token);
    expect(done.statusCode, done.body).toBe(201);
    expect(done.json().data.order.shipping_lines).toEqual([expect.objectContaining({ code: `${handle}-${code}`, source: handle, price: '6.50' })]);
  });
});
