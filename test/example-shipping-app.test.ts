// Issue 14's proof: the platform and examples/shipping-app, each a real process on a loopback port,
// doing what a merchant, a buyer and the app do, over real HTTP only. The merchant installs the app
// through OAuth (C4); the buyer's checkout shows the app's live rates (C15.3) beside the merchant's
// zones; the buyer picks the app's rate and completes; the app gets `orders/create` (C8), sees its
// handle in `shipping_lines[0].source` and fulfills the order through the App API with tracking; the
// buyer's order status page shows it fulfilled. An order shipped with a merchant zone is left alone.
// The merchant's GDPR requests (C9) reach the app, which acknowledges and completes them, the data
// request with an export the merchant can fetch.
//
// The platform starts on an empty database of its own (a data dir on the embedded database, a new
// database on PostgreSQL) and seeds the demo store, as `npm start` does on a developer's machine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { signedHeaders } from '../src/webhooks/deliveries.repo.js';
import { TEST_SECRET } from './helpers/harness.js';
import { freePort, startExampleApp, startService, type ServiceProcess } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';
import { privateDatabase } from './fixtures/webhook-harness.js';

let platform: ServiceProcess;
let exampleApp: ServiceProcess;
let base: string;
let appBase: string;
/** The order the app fulfilled: its customer is the one the GDPR requests are about. */
let fulfilledOrder: { customer: { id: string; email: string } };
let dropDatabase: (() => Promise<void>) | null = null;
let tokensFile: string;
let app: { appId: string; handle: string; clientId: string; clientSecret: string };
let partner: string;
let merchant: string;
/** The demo app's access token, from the start banner (only to look up the catalog). */
let demoAppToken: string;

type Answer = { status: number; body: any };
async function call(method: string, path: string, opts: { token?: string; body?: unknown } = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function login(email: string, password: string): Promise<string> {
  const res = await call('POST', '/auth/login', { body: { email, password } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.token;
}

const BUYER_ADDRESS = {
  first_name: 'Ada', last_name: 'Lovelace', address1: '1 Main Street', city: 'Portland', province_code: 'OR', country_code: 'US', zip: '97201',
};

/** A demo-store checkout of two totes to a US address; its token and offered rates. */
async function checkoutWithRates(email: string) {
  const products = await call('GET', '/api/v1/products.json', { token: demoAppToken });
  expect(products.status).toBe(200);
  const tote = products.body.products.find((p: { handle: string }) => p.handle === 'canvas-tote');
  const created = await call('POST', '/storefront/demo-store/checkouts', {
    body: { email, line_items: [{ product_id: tote.id, quantity: 2 }], shipping_address: BUYER_ADDRESS },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const token: string = created.body.data.checkout.token;
  const rates = await call('GET', `/storefront/demo-store/checkouts/${token}/shipping_rates`);
  expect(rates.status).toBe(200);
  return { token, rates: rates.body.data.shipping_rates as Array<{ handle: string; title: string; price: string; source: string | null }> };
}

async function complete(token: string, rateHandle: string) {
  const chosen = await call('PATCH', `/storefront/demo-store/checkouts/${token}`, { body: { shipping_rate: { handle: rateHandle }, payment_method: 'card' } });
  expect(chosen.status, JSON.stringify(chosen.body)).toBe(200);
  const done = await call('POST', `/storefront/demo-store/checkouts/${token}/complete`);
  expect(done.status, JSON.stringify(done.body)).toBe(201);
  return done.body.data.order;
}

/** The buyer's view of an order (its `order_status_url`). */
async function orderStatus(order: { order_status_url: string }) {
  const res = await fetch(order.order_status_url.replace(/^https?:\/\/[^/]+/, base));
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { order: { fulfillment_status: string; tracking_number: string | null; tracking_url: string | null } } }).data.order;
}

/** The app's successful deliveries of a topic, from the developer's delivery log. */
async function delivered(topic: string): Promise<number> {
  const res = await call('GET', `/apps/developer/${app.appId}/webhook-deliveries?topic=${encodeURIComponent(topic)}&status=success&limit=100`, { token: partner });
  expect(res.status).toBe(200);
  const list = res.body.data.deliveries ?? res.body.data;
  return list.length;
}

beforeAll(async () => {
  const own = await privateDatabase();
  dropDatabase = own?.drop ?? null;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  platform = startService({
    SVC_SECRET: TEST_SECRET, NODE_ENV: 'development', PORT: String(port), SVC_BASE_URL: base,
    SVC_DATA_DIR: tempDir('svc-e2e-data-'), ...(own ? { DATABASE_URL: own.url } : {}),
  });
  demoAppToken = (await platform.waitFor(/App access token \(valid 24 h\): (svcat_\S+)/, 120_000))[1];

  // The developer registers the app, pointing it at where it will run.
  const appPort = await freePort();
  appBase = `http://127.0.0.1:${appPort}`;
  partner = await login('partner@demo.test', 'demo-partner-pass');
  const created = await call('POST', '/apps/developer/apps', {
    token: partner,
    body: {
      name: 'Example Shipping', handle: 'example-shipping', appUrl: appBase, redirectUrls: [`${appBase}/auth`],
      scopes: ['read_orders', 'write_orders', 'write_shipping'],
      gdprUrls: { customerDataRequest: `${appBase}/gdpr`, customerRedact: `${appBase}/gdpr`, shopRedact: `${appBase}/gdpr` },
      extensions: { shipping: { ratesUrl: `${appBase}/rates` }, webhooks: [{ topic: 'orders/create', uri: `${appBase}/webhooks` }] },
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  app = created.body.data.app;

  tokensFile = join(tempDir('svc-e2e-app-'), 'tokens.json');
  exampleApp = startExampleApp({
    PORT: String(appPort), PUBLIC_URL: appBase, PLATFORM_URL: base,
    CLIENT_ID: app.clientId, CLIENT_SECRET: app.clientSecret, APP_HANDLE: app.handle, TOKENS_FILE: tokensFile,
  });
  await exampleApp.waitFor(/listening on/, 60_000);
  merchant = await login('merchant@demo.test', 'demo-merchant-pass');
}, 240_000);

afterAll(async () => {
  for (const p of [exampleApp, platform]) {
    if (p && p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
    await p?.exited;
  }
  await dropDatabase?.();
}, 60_000);

describe('examples/shipping-app against the platform (issue 14)', () => {
  it('is installed through OAuth: the merchant authorizes, the browser takes the handoff to the app, the app keeps its tokens; a reload of the page keeps them working (C4.4)', async () => {
    const auth = await call('GET', `/apps/oauth/authorize?client_id=${app.clientId}&scope=read_orders,write_orders,write_shipping`, { token: merchant });
    expect(auth.status, JSON.stringify(auth.body)).toBe(200);
    const redirect = new URL(auth.body.data.redirectUrl);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(`${appBase}/auth`);
    // The merchant's browser follows the redirect to the app.
    const landing = await fetch(redirect);
    expect(landing.status, await landing.clone().text()).toBe(200);
    expect(await landing.text()).toContain('installed on demo-store');
    expect(existsSync(tokensFile)).toBe(true);
    expect(Object.keys(JSON.parse(readFileSync(tokensFile, 'utf8')))).toContain('demo-store');

    // A forged handoff (the hmac no longer matches) is refused, and changes nothing.
    const forged = new URL(redirect);
    forged.searchParams.set('shop', 'another-store');
    expect((await fetch(forged)).status).toBe(401);

    // The merchant reloads the page (the same handoff, within its 10 minutes): the app answers as
    // before and does not present the code again, which would revoke its tokens (C4.4).
    const tokensBefore = readFileSync(tokensFile, 'utf8');
    const reload = await fetch(redirect);
    expect(`${reload.status} ${await reload.text()}`).toBe('200 Example Shipping is installed on demo-store.\n');
    expect(readFileSync(tokensFile, 'utf8')).toBe(tokensBefore);
    const { accessToken } = JSON.parse(tokensBefore)['demo-store'] as { accessToken: string };
    expect((await call('GET', '/api/v1/orders.json?limit=1', { token: accessToken })).status).toBe(200);
  });

  it('a buyer sees the app\'s live rates, picks one and completes; the app fulfills the order with tracking', async () => {
    const { token, rates } = await checkoutWithRates('buyer-e2e@example.com');
    const fromApp = rates.filter((r) => r.source === app.handle);
    expect(fromApp.map((r) => r.handle).sort()).toEqual([`app-${app.handle}-express`, `app-${app.handle}-standard`]);
    // Two totes weigh nothing in the demo catalog: the domestic base prices.
    expect(fromApp.find((r) => r.handle.endsWith('-standard'))).toMatchObject({ title: 'Example Shipping Standard', price: '5.90' });
    expect(rates.some((r) => r.source === null)).toBe(true); // the merchant's zones are still offered

    const order = await complete(token, `app-${app.handle}-standard`);
    fulfilledOrder = order;
    expect(order.shipping_lines[0]).toMatchObject({ source: app.handle, code: `${app.handle}-standard`, price: '5.90' });
    await expect.poll(async () => (await orderStatus(order)).fulfillment_status, { timeout: 60_000, interval: 250 }).toBe('fulfilled');
    const status = await orderStatus(order);
    expect(status.tracking_number).toMatch(/^EXS[0-9A-F]{12}$/);
    expect(status.tracking_url).toBe(`https://track.example.com/${status.tracking_number}`);
  });

  it('an order shipped with a merchant zone is not the app\'s: it gets orders/create and leaves the order alone', async () => {
    const before = await delivered('orders/create');
    const { token, rates } = await checkoutWithRates('buyer-zone@example.com');
    const zone = rates.find((r) => r.source === null)!;
    const order = await complete(token, zone.handle);
    expect(order.shipping_lines[0].source).toBeNull();
    await expect.poll(() => delivered('orders/create'), { timeout: 60_000, interval: 250 }).toBe(before + 1);
    expect((await orderStatus(order)).fulfillment_status).toBe('unfulfilled');
  });

  it('two deliveries of one order at once (a retried attempt, a second subscription) ship it once, and both are answered 200', async () => {
    // An order the platform itself tells the app is not its own (a zone rate), so the only
    // deliveries that ask the app to ship it are the two below, signed as the platform signs (C8):
    // both reach the app before either fulfillment has been answered.
    const { token, rates } = await checkoutWithRates('buyer-twice@example.com');
    const order = await complete(token, rates.find((r) => r.source === null)!.handle);
    const payload = JSON.stringify({ ...order, shipping_lines: [{ ...order.shipping_lines[0], source: app.handle }] });
    const deliver = (webhookId: string) => fetch(`${appBase}/webhooks`, {
      method: 'POST',
      headers: { ...signedHeaders(app.clientSecret, payload, 'orders/create', 'demo-store'), 'X-SVC-Webhook-Id': webhookId },
      body: payload,
    });
    const sameId = randomUUID();
    const answers = await Promise.all([deliver(sameId), deliver(sameId), deliver(randomUUID())]);
    expect(await Promise.all(answers.map(async (a) => `${a.status} ${await a.text()}`))).toEqual(['200 ok', '200 ok', '200 ok']);
    expect((await orderStatus(order)).fulfillment_status).toBe('fulfilled');
    const shipped = exampleApp.output().match(new RegExp(`fulfilled ${order.name} on demo-store: `, 'g')) ?? [];
    expect(shipped).toHaveLength(1);
    expect(exampleApp.output()).not.toContain(`fulfillment of ${order.name} failed`);
  });

  it('GDPR: the app acknowledges and completes a data request (with its export) and a customer redaction', async () => {
    const buyer = fulfilledOrder.customer;
    expect(buyer).toMatchObject({ email: 'buyer-e2e@example.com' });

    const dataRequest = await call('POST', '/apps/gdpr/data-request', { token: merchant, body: { customerId: buyer.id, customerEmail: buyer.email } });
    expect(dataRequest.status, JSON.stringify(dataRequest.body)).toBe(201);
    const appState = async (requestId: string) => {
      const res = await call('GET', `/apps/gdpr/requests/${requestId}`, { token: merchant });
      expect(res.status).toBe(200);
      const request = res.body.data;
      return { request, mine: request.appAcknowledgments.find((a: { appId: string }) => a.appId === app.appId) };
    };
    const dataId = dataRequest.body.data.requestId;
    await expect.poll(async () => (await appState(dataId)).mine?.status, { timeout: 60_000, interval: 250 }).toBe('completed');
    const { request: data, mine } = await appState(dataId);
    expect(mine.acknowledgedAt).not.toBeNull();
    expect(data.dataExportUrl).toMatch(new RegExp(`^${appBase}/exports/`));
    const exported = (await (await fetch(data.dataExportUrl)).json()) as { shipments: Array<{ email: string; trackingNumber: string }> };
    expect(exported.shipments).toHaveLength(1);
    expect(exported.shipments[0]).toMatchObject({ email: 'buyer-e2e@example.com', trackingNumber: expect.stringMatching(/^EXS/) });

    // A customer the app never shipped to: an empty export, not a missing page.
    const stranger = await call('POST', '/apps/gdpr/data-request', { token: merchant, body: { customerEmail: 'never-shipped@example.com' } });
    expect(stranger.status, JSON.stringify(stranger.body)).toBe(201);
    await expect.poll(async () => (await appState(stranger.body.data.requestId)).mine?.status, { timeout: 60_000, interval: 250 }).toBe('completed');
    const strangerUrl = (await appState(stranger.body.data.requestId)).request.dataExportUrl;
    const empty = await fetch(strangerUrl);
    expect(empty.status).toBe(200);
    expect(await empty.json()).toEqual({ shipments: [] });

    const redact = await call('POST', '/apps/gdpr/customer-redact', { token: merchant, body: { customerId: buyer.id, customerEmail: buyer.email } });
    expect(redact.status, JSON.stringify(redact.body)).toBe(201);
    const redactId = redact.body.data.requestId;
    await expect.poll(async () => (await appState(redactId)).mine?.status, { timeout: 60_000, interval: 250 }).toBe('completed');
    // The app erased what it held: the export link of the data request now finds nothing.
    expect((await fetch(data.dataExportUrl)).status).toBe(404);
    // Another customer's export stays.
    expect((await fetch(strangerUrl)).status).toBe(200);
  });
});
