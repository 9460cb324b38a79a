// packages/app-sdk and examples/shipping-app reviewed for what the unsigned `X-SVC-Topic` lets a
// replayer do (docs/decisions.md, "App developer kit (issue 14)"). The HMAC covers the raw body only
// (app-api.md Signature), so the topic header is anyone's to rewrite. Bugs found:
// - verifyMessage ran the GDPR handling for whatever GDPR topic the header named: a genuine
//   customers/redact (or a rate request, an orders/create) replayed with `X-SVC-Topic: shop/redact`
//   verified, and the example app erased the whole store. A body without `shop_domain` even took
//   the store from the unsigned `X-SVC-Shop-Domain`. A GDPR topic now needs its own body's exact
//   shape (app-api.md GDPR webhooks table), else `topic mismatch` (400); the store is only ever the
//   signed `shop_domain` (`no signed shop`, 400, when it is null).
// - parseWebhook gave `gdprRequestId` from `X-SVC-Gdpr-Request-Id` for any topic, and the example
//   app's /gdpr acted on any message with one: a signed orders/create or rate request sent there with
//   a request id had the app acknowledge and complete that GDPR request without doing its work.
// - The SDK's examples bounded bodies at 256 KiB: a valid products/update with a long body_html
//   was answered 413, which the platform never retries (app-api.md Retries 3).
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedAfterEach, gdprEndpoint as gdprEndpointOf } from './helpers/gdpr-endpoint.js';
import { listenOnLoopback, type Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { createTestApp, signupMerchant, signupPartner, unique, type Merchant } from './helpers/actors.js';
import { handoffFor } from './helpers/sdk.js';
import { freePort } from './helpers/process.js';
import { insertProduct, orderBody, takeOrder } from './helpers/orders.js';
import { gdprDispatcher } from '../src/gdpr/gdpr.dispatch.js';
import { gdprPayload } from '../src/gdpr/gdpr.service.js';
import { signedHeaders } from '../src/webhooks/deliveries.repo.js';
import {
  DEFAULT_MAX_BODY_BYTES, MemoryTokenStore, parseWebhook, TokenKeeper, verifyMessage,
} from '../packages/app-sdk/src/index.js';
import { createShippingApp } from '../examples/shipping-app/src/app.js';
import { createApp as nodeHttpExample } from '../packages/app-sdk/examples/node-http.js';
import { buildApp as fastifyExample } from '../packages/app-sdk/examples/fastify.js';

const SECRET = 'svcsk_gdpr-topics-secret';
const SENDER = { storeId: '0190b7e0-0000-7000-8000-000000000001', shopDomain: 'honest-store' };
const VICTIM = 'other-store';
const REQUEST_ID = '0190b7e0-0000-7000-8000-0000000000aa';
const customer = { id: '0190b7e0-0000-7000-8000-0000000000c1', email: 'ada@example.com', phone: null };

type GdprType = Parameters<typeof gdprPayload>[0];
const TOPIC: Record<GdprType, string> = { data_request: 'customers/data_request', customer_redact: 'customers/redact', shop_redact: 'shop/redact' };
const TYPES = Object.keys(TOPIC) as GdprType[];

/** A GDPR body exactly as the platform makes it (src/gdpr), and the headers it is delivered with. */
function gdprDelivery(type: GdprType, overrides: Record<string, unknown> = {}) {
  const body = JSON.stringify({ ...gdprPayload(type, { ...SENDER, requestId: REQUEST_ID, customer, ordersRequested: true, orderIds: ['1001'] }), ...overrides });
  return { body, headers: { ...signedHeaders(SECRET, body, TOPIC[type], SENDER.shopDomain), 'X-SVC-Gdpr-Request-Id': REQUEST_ID } };
}

/** Other bodies the platform signs with the app's client secret (C8.8, C15.3). */
const OTHER_BODIES: Record<string, string> = {
  'orders/create': JSON.stringify({ id: '1', name: '#1001', email: 'ada@example.com', customer: { id: 'c1', first_name: 'Ada', last_name: null, email: 'ada@example.com' }, line_items: [], shipping_lines: [] }),
  'shipping/rates': JSON.stringify({ rate: { origin: { country: 'US' }, destination: { country: 'US' }, items: [], currency: 'USD', locale: 'en' } }),
};

const servers = closedAfterEach();
const gdprEndpoint = () => gdprEndpointOf(servers, SECRET);

describe('a GDPR topic needs its own body (app-api.md GDPR webhooks; the topic header is not signed)', () => {
  for (const from of TYPES) {
    for (const to of TYPES.filter((t) => t !== from)) {
      it(`a genuine ${TOPIC[from]} replayed as ${TOPIC[to]} is refused (400 topic mismatch), never handled`, async () => {
        const { url, handled } = await gdprEndpoint();
        const { body, headers } = gdprDelivery(from);
        const res = await fetch(url, { method: 'POST', body, headers: { ...headers, 'X-SVC-Topic': TOPIC[to] } });
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual({ error: 'topic mismatch' });
        expect(handled).toEqual([]);
      });
    }
  }

  for (const [topic, body] of Object.entries(OTHER_BODIES)) {
    it(`a signed ${topic} body sent as shop/redact (no shop_domain: the header named the store) is refused`, () => {
      const headers = { ...signedHeaders(SECRET, body, 'shop/redact', VICTIM), 'X-SVC-Gdpr-Request-Id': REQUEST_ID };
      expect(verifyMessage({ rawBody: body, headers, secret: SECRET })).toEqual({ ok: false, reason: 'topic mismatch' });
      expect(parseWebhook({ rawBody: body, headers, secret: SECRET })).toEqual({ ok: false, reason: 'topic mismatch' });
    });
  }

  it('each genuine GDPR body passes under its own topic, the shop and request id the signed ones', async () => {
    const { url, handled } = await gdprEndpoint();
    for (const type of TYPES) {
      const { body, headers } = gdprDelivery(type);
      expect((await fetch(url, { method: 'POST', body, headers })).status).toBe(200);
    }
    expect(handled.map((m) => [m.topic, m.shop, m.gdprRequestId])).toEqual(TYPES.map((t) => [TOPIC[t], SENDER.shopDomain, REQUEST_ID]));
  });

  it('a body with a key of another GDPR topic, a missing key or a key of the wrong type is not that topic', () => {
    const refused = (type: GdprType, overrides: Record<string, unknown>) => {
      const { body, headers } = gdprDelivery(type, overrides);
      return verifyMessage({ rawBody: body, headers, secret: SECRET });
    };
    const mismatch = { ok: false, reason: 'topic mismatch' };
    expect(refused('shop_redact', { customer })).toEqual(mismatch);
    expect(refused('shop_redact', { orders_to_redact: [] })).toEqual(mismatch);
    expect(refused('shop_redact', { data_request: { id: REQUEST_ID } })).toEqual(mismatch);
    expect(refused('shop_redact', { shop_id: undefined })).toEqual(mismatch);
    expect(refused('customer_redact', { data_request: { id: REQUEST_ID } })).toEqual(mismatch);
    expect(refused('customer_redact', { orders_to_redact: 'all' })).toEqual(mismatch);
    expect(refused('data_request', { orders_to_redact: [] })).toEqual(mismatch);
    expect(refused('data_request', { orders_requested: 'yes' })).toEqual(mismatch);
    expect(refused('data_request', { data_request: {} })).toEqual(mismatch);
  });

  it('a GDPR body whose shop_domain is null never takes the store from X-SVC-Shop-Domain (400 no signed shop)', async () => {
    const { url, handled } = await gdprEndpoint();
    for (const type of TYPES) {
      const { body, headers } = gdprDelivery(type, { shop_domain: null });
      const res = await fetch(url, { method: 'POST', body, headers: { ...headers, 'X-SVC-Shop-Domain': VICTIM } });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'no signed shop' });
    }
    expect(handled).toEqual([]);
  });

  it('gdprRequestId is null on a topic that is not a GDPR one, whatever X-SVC-Gdpr-Request-Id says', () => {
    const body = OTHER_BODIES['orders/create'];
    const message = parseWebhook({ rawBody: body, headers: { ...signedHeaders(SECRET, body, 'orders/create', 'some-store'), 'X-SVC-Gdpr-Request-Id': REQUEST_ID }, secret: SECRET });
    expect(message.ok && message.gdprRequestId).toBeNull();
  });
});

describe('examples/shipping-app: /gdpr acts only on a GDPR delivery of its own topic (C9)', () => {
  let h: Harness;
  let base: string;
  beforeAll(async () => {
    h = await createWebhookHarness();
    base = await listenOnLoopback(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  /** The example app installed through its /auth on one store, which it shipped an order of `email`'s on. */
  async function installedApp(options: { customerRedactUrl?: string } = {}) {
    const lines: string[] = [];
    const partner = await signupPartner(h);
    const port = await freePort();
    const appUrl = `http://127.0.0.1:${port}`;
    const app = await createTestApp(h, partner.token, {
      scopes: ['read_orders', 'write_orders', 'read_customers'], tier: 'enterprise', appUrl,
      gdprUrls: { customerDataRequest: `${appUrl}/gdpr`, customerRedact: options.customerRedactUrl ?? `${appUrl}/gdpr`, shopRedact: `${appUrl}/gdpr` },
    });
    const creds = { baseUrl: base, clientId: app.clientId, clientSecret: app.clientSecret };
    const keeper = new TokenKeeper(creds, new MemoryTokenStore());
    const shippingApp = createShippingApp({ app: creds, handle: app.handle, publicUrl: appUrl, keeper, log: (l) => lines.push(l) });
    await new Promise<void>((resolve) => shippingApp.listen(port, '127.0.0.1', resolve));
    servers.push(shippingApp);

    const merchant: Merchant = await signupMerchant(h);
    const installed = await fetch(`${appUrl}/auth?${await handoffFor(h, merchant, app)}`);
    expect(installed.status, await installed.text()).toBe(200);
    const email = `ada-${unique()}@example.com`;
    const order = await takeOrder(h, merchant.token, orderBody(await insertProduct(h, merchant.storeId)));
    const orderJson = JSON.stringify({ id: order.orderId, name: '#1001', email, customer: null, shipping_lines: [{ source: app.handle }] });
    const shipped = await fetch(`${appUrl}/webhooks`, {
      method: 'POST', body: orderJson, headers: { ...signedHeaders(app.clientSecret, orderJson, 'orders/create', merchant.slug), 'X-SVC-Webhook-Id': `wh-${unique()}` },
    });
    expect(shipped.status, await shipped.text()).toBe(200);

    const login = async () => (await h.req('POST', '/auth/login', { body: { email: merchant.email, password: 'correct-horse' } })).json().data.token as string;
    const gdpr = async (path: string, body: Record<string, unknown> = {}) => {
      const res = await h.req('POST', `/apps/gdpr/${path}`, { token: await login(), body });
      expect(res.statusCode, res.body).toBe(201);
      await gdprDispatcher(h.deps).settle();
      return res.json().data.requestId as string;
    };
    const appStatus = async (requestId: string) => {
      const view = await h.req('GET', `/apps/gdpr/requests/${requestId}`, { token: await login() });
      return view.json().data.appAcknowledgments.find((a: { appId: string }) => a.appId === app.appId).status as string;
    };
    const rates = async () => {
      const body = JSON.stringify({
        rate: {
          origin: { country: 'US', province: null, city: 'A', zip: '10001', address1: '1 Main St', address2: null, phone: null },
          destination: { country: 'US', province: null, city: 'B', zip: '94105', address1: '2 Side St', address2: null, phone: null },
          items: [{ name: 'T-shirt', sku: null, quantity: 1, grams: 200, price: 1500, requires_shipping: true, product_id: 1, variant_id: null }],
          currency: 'USD', locale: 'en',
        },
      });
      const res = await fetch(`${appUrl}/rates`, { method: 'POST', body, headers: signedHeaders(app.clientSecret, body, 'shipping/rates', merchant.slug) });
      expect(res.status).toBe(200);
      return ((await res.json()) as { rates: unknown[] }).rates;
    };
    return { app, appUrl, merchant, email, lines, gdpr, appStatus, rates };
  }

  it("a genuine customers/redact replayed with X-SVC-Topic: shop/redact is refused (400): the store is not erased, the app keeps serving it", async () => {
    const s = await installedApp();
    const requestId = await s.gdpr('customer-redact', { customerEmail: s.email });
    await expect.poll(() => s.lines.some((l) => l.includes(`${requestId} on ${s.merchant.slug}: completed`)), { timeout: 20_000 }).toBe(true);
    const { rows } = await h.db.query<{ request_headers: Record<string, string>; request_body: string }>(
      `SELECT request_headers, request_body FROM webhook_deliveries WHERE app_id = $1 AND topic = 'customers/redact' AND request_headers->>'X-SVC-Gdpr-Request-Id' = $2`,
      [s.app.appId, requestId],
    );
    expect(rows).toHaveLength(1);
    expect(await s.rates()).toHaveLength(2);

    const replayed = await fetch(`${s.appUrl}/gdpr`, { method: 'POST', body: rows[0].request_body, headers: { ...rows[0].request_headers, 'X-SVC-Topic': 'shop/redact' } });
    expect(replayed.status).toBe(400);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the app works after answering: give it the time
    expect(await s.rates()).toHaveLength(2);
    expect(s.lines.filter((l) => l.includes('shop/redact'))).toEqual([]);
  }, 90_000);

  it('a signed orders/create or rate request sent to /gdpr with a pending request\'s id is refused (400): the request is not completed undone', async () => {
    // The customers/redact delivery goes where nothing answers: the request stays pending for the app.
    const s = await installedApp({ customerRedactUrl: `http://127.0.0.1:${await freePort()}/gdpr` });
    const requestId = await s.gdpr('customer-redact', { customerEmail: s.email });
    expect(await s.appStatus(requestId)).toBe('pending');

    for (const [topic, body] of Object.entries(OTHER_BODIES)) {
      const res = await fetch(`${s.appUrl}/gdpr`, {
        method: 'POST', body, headers: { ...signedHeaders(s.app.clientSecret, body, topic, s.merchant.slug), 'X-SVC-Gdpr-Request-Id': requestId },
      });
      expect(res.status, topic).toBe(400);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await s.appStatus(requestId)).toBe('pending');
    expect(s.lines.filter((l) => l.includes(requestId))).toEqual([]);
  }, 90_000);
});

describe("the SDK's examples take a webhook as large as the platform sends (app-api.md Retries 3: a 4xx is never retried)", () => {
  // A products/update with a long description: over the examples' former 256 KiB bound.
  const productUpdate = JSON.stringify({ id: 1, title: 'Tote', body_html: `<p>${'A very long description. '.repeat(16_000)}</p>`, variants: [] });
  const headers = signedHeaders(SECRET, productUpdate, 'products/update', 'some-store');

  it('the body is over 256 KiB and under the SDK default', () => {
    expect(Buffer.byteLength(productUpdate)).toBeGreaterThan(256 * 1024);
    expect(Buffer.byteLength(productUpdate)).toBeLessThan(DEFAULT_MAX_BODY_BYTES);
  });

  it('examples/node-http.ts answers it 200', async () => {
    const lines: string[] = [];
    const server = nodeHttpExample({ clientSecret: SECRET, log: (l) => lines.push(l) });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST', body: productUpdate, headers });
    expect(res.status).toBe(200);
    expect(lines).toEqual(['products/update from some-store']);
  });

  it('examples/fastify.ts answers it 200', async () => {
    const lines: string[] = [];
    const app = fastifyExample({ clientSecret: SECRET, log: (l) => lines.push(l) });
    try {
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      const res = await fetch(`${address}/platform/webhooks`, { method: 'POST', body: productUpdate, headers });
      expect(res.status).toBe(200);
      expect(lines).toEqual(['products/update from some-store']);
    } finally {
      await app.close();
    }
  });
});
