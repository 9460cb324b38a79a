// examples/shipping-app reviewed with two stores and what a store's erasure leaves behind
// (docs/decisions.md, "App developer kit (issue 14)"). The app runs in-process on a loopback port,
// installed through its own /auth on two stores; the platform is the real service on another port
// and sends its GDPR deliveries over HTTP. Bugs found:
// - A genuine shop/redact of store A, replayed to the app with store B's X-SVC-Shop-Domain (the
//   header is not signed, app-api.md Signature; the signed body names A, C2.5), erased store B's
//   shipments and exports. The SDK now refuses it (400) before the app sees it.
// - After shop/redact the app forgets the store's tokens while its installation stays active (C9.1),
//   yet it kept quoting rates for that store (C15.3), and the order a buyer then paid with its rate
//   failed to ship with 500 on every delivery (C8 retries until failed). It now quotes no rate for a
//   store it holds no tokens for, and acknowledges (200, logged) an order it cannot act on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback, type Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { createTestApp, signupMerchant, signupPartner, unique, type Merchant } from './helpers/actors.js';
import { handoffFor } from './helpers/sdk.js';
import { freePort } from './helpers/process.js';
import { insertProduct, orderBody, takeOrder } from './helpers/orders.js';
import { gdprDispatcher } from '../src/gdpr/gdpr.dispatch.js';
import { signedHeaders } from '../src/webhooks/deliveries.repo.js';
import { MemoryTokenStore, TokenKeeper } from '../packages/app-sdk/src/index.js';
import { createShippingApp } from '../examples/shipping-app/src/app.js';

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await createWebhookHarness();
  base = await listenOnLoopback(h);
});
afterAll(async () => {
  await h?.close();
});

const rateRequest = (currency: string) => JSON.stringify({
  rate: {
    origin: { country: 'US', province: null, city: 'Exampleville', zip: '10001', address1: '1 Main St', address2: null, phone: null },
    destination: { country: 'US', province: null, city: 'Othertown', zip: '94105', address1: '2 Side St', address2: null, phone: null },
    items: [{ name: 'T-shirt', sku: null, quantity: 1, grams: 200, price: 1500, requires_shipping: true, product_id: 1, variant_id: null }],
    currency, locale: 'en',
  },
});

/** The example app on two stores, installed through its /auth, and one shipped order of `email`'s on each. */
async function twoStores() {
  const lines: string[] = [];
  const partner = await signupPartner(h);
  // The app's URL is needed to register it: a free port first, the app started on it once registered.
  const port = await freePort();
  const appUrl = `http://127.0.0.1:${port}`;
  const app = await createTestApp(h, partner.token, {
    scopes: ['read_orders', 'write_orders', 'read_customers'], tier: 'enterprise', appUrl,
    gdprUrls: { customerDataRequest: `${appUrl}/gdpr`, customerRedact: `${appUrl}/gdpr`, shopRedact: `${appUrl}/gdpr` },
  });
  const creds = { baseUrl: base, clientId: app.clientId, clientSecret: app.clientSecret };
  const keeper = new TokenKeeper(creds, new MemoryTokenStore());
  const shippingApp = createShippingApp({ app: creds, handle: app.handle, publicUrl: appUrl, keeper, log: (l) => lines.push(l) });
  await new Promise<void>((resolve) => shippingApp.listen(port, '127.0.0.1', resolve));

  const email = `ada-${unique()}@example.com`;
  const orderOn = async (merchant: Merchant, webhookId: string) => {
    const order = await takeOrder(h, merchant.token, orderBody(await insertProduct(h, merchant.storeId)));
    const body = JSON.stringify({ id: order.orderId, name: '#1001', email, customer: null, shipping_lines: [{ source: app.handle }] });
    return fetch(`${appUrl}/webhooks`, {
      method: 'POST', body, headers: { ...signedHeaders(app.clientSecret, body, 'orders/create', merchant.slug), 'X-SVC-Webhook-Id': webhookId },
    });
  };
  const stores: Merchant[] = [];
  for (const _ of [1, 2]) {
    const merchant = await signupMerchant(h);
    const installed = await fetch(`${appUrl}/auth?${await handoffFor(h, merchant, app)}`);
    expect(installed.status, await installed.text()).toBe(200);
    const shipped = await orderOn(merchant, `wh-${unique()}`);
    expect(shipped.status, await shipped.text()).toBe(200);
    stores.push(merchant);
  }
  const login = async (m: Merchant) => {
    const res = await h.req('POST', '/auth/login', { body: { email: m.email, password: 'correct-horse' } });
    return res.json().data.token as string;
  };
  const gdpr = async (m: Merchant, path: string, body: Record<string, unknown> = {}) => {
    const res = await h.req('POST', `/apps/gdpr/${path}`, { token: await login(m), body });
    expect(res.statusCode, res.body).toBe(201);
    const requestId = res.json().data.requestId as string;
    await gdprDispatcher(h.deps).settle();
    await expect.poll(() => lines.some((l) => l.includes(`${requestId} on ${m.slug}: completed`)), { timeout: 20_000 }).toBe(true);
    const view = await h.req('GET', `/apps/gdpr/requests/${requestId}`, { token: await login(m) });
    return { requestId, request: view.json().data };
  };
  const rates = async (m: Merchant) => {
    const body = rateRequest('USD');
    const res = await fetch(`${appUrl}/rates`, { method: 'POST', body, headers: signedHeaders(app.clientSecret, body, 'shipping/rates', m.slug) });
    expect(res.status).toBe(200);
    return ((await res.json()) as { rates: unknown[] }).rates;
  };
  const close = async () => {
    shippingApp.closeAllConnections();
    await new Promise((resolve) => shippingApp.close(resolve));
  };
  return { app, appUrl, stores, email, lines, gdpr, rates, orderOn, close };
}

describe('examples/shipping-app with two stores: a GDPR delivery acts on the store its signed body names (C2.5, C9)', () => {
  it("store A's genuine shop/redact, replayed with store B's X-SVC-Shop-Domain, is refused (400): B's shipments and export stay", async () => {
    const s = await twoStores();
    try {
      const [a, b] = s.stores;
      // B's customer asks for their data: the export is built when fetched, so it shows what B still holds.
      const asked = await s.gdpr(b, 'data-request', { customerEmail: s.email });
      const exportUrl: string = asked.request.dataExportUrl;
      expect(((await (await fetch(exportUrl)).json()) as { shipments: unknown[] }).shipments).toHaveLength(1);

      const redacted = await s.gdpr(a, 'shop-redact');
      const { rows } = await h.db.query<{ request_headers: Record<string, string>; request_body: string }>(
        `SELECT request_headers, request_body FROM webhook_deliveries WHERE app_id = $1 AND topic = 'shop/redact' AND request_headers->>'X-SVC-Gdpr-Request-Id' = $2`,
        [s.app.appId, redacted.requestId],
      );
      expect(rows).toHaveLength(1);
      const { request_headers: headers, request_body: body } = rows[0];
      expect(headers['X-SVC-Shop-Domain']).toBe(a.slug);

      // Anyone who saw the delivery (a log, a proxy) sends it again, naming B in the unsigned header.
      const replayed = await fetch(`${s.appUrl}/gdpr`, { method: 'POST', body, headers: { ...headers, 'X-SVC-Shop-Domain': b.slug } });
      expect(replayed.status).toBe(400);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the app works after answering: give it the time
      expect(((await (await fetch(exportUrl)).json()) as { shipments: unknown[] }).shipments).toHaveLength(1);
      expect(await s.rates(b)).toHaveLength(2);
      expect(s.lines.filter((l) => l.includes(b.slug) && l.includes('GDPR request'))).toEqual([]);
    } finally {
      await s.close();
    }
  }, 90_000);
});

describe('examples/shipping-app after shop/redact: it offers nothing it cannot fulfil (C9.1, C15.3, C8)', () => {
  it('a store whose tokens the app forgot gets no rates, and its orders/create is answered 200 and logged, not 500 for ever', async () => {
    const s = await twoStores();
    try {
      const [a, b] = s.stores;
      expect(await s.rates(a)).toHaveLength(2);
      await s.gdpr(a, 'shop-redact');

      expect(await s.rates(a)).toEqual([]);
      expect(await s.rates(b)).toHaveLength(2);
      // An order placed with the app's rate (quoted before the erasure): the app cannot fulfil it,
      // and a 500 would have the platform deliver it again and again until the delivery failed.
      const late = await s.orderOn(a, `wh-${unique()}`);
      expect(late.status, await late.text()).toBe(200);
      expect(s.lines.some((l) => l.includes(a.slug) && l.includes('not installed'))).toBe(true);
      // The other store is served as before.
      const other = await s.orderOn(b, `wh-${unique()}`);
      expect(other.status, await other.text()).toBe(200);
      expect(s.lines.filter((l) => l.startsWith('fulfilled') && l.includes(` on ${b.slug}:`))).toHaveLength(2);
    } finally {
      await s.close();
    }
  }, 90_000);
});
