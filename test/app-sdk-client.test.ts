// The app SDK's REST client, typed payloads, adapters, GDPR helpers and function fixtures (issue 14)
// against the real platform listening on loopback: typed products and orders read with a real
// installed app's token; both kinds of paging walked (C5.4 `Link`, envelope `pagination` and flat
// counters); a tiny rate limit kept to and a 429 recovered from (app-api.md Limits, C5.5);
// retries only where safe, provoked by a real HTTP proxy that fails on purpose; GDPR requests moved
// by the app (C9.2); real webhook and rate-request bodies parsed into typed messages (C8.8, C15.3)
// by real node:http servers, Web Requests and the two examples run as processes.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, listenOnLoopback, type Harness } from './helpers/harness.js';
import { createTestApp, installApp, signupMerchant, signupPartner, storeWithApp, type Merchant } from './helpers/actors.js';
import { insertProduct, orderBody, takeOrder } from './helpers/orders.js';
import { freePort, ROOT } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';
import { startFaultyProxy, type FaultyProxy } from './helpers/faulty-proxy.js';
import { privateDatabase } from './fixtures/webhook-harness.js';
import { openPostgres } from '../src/db/postgres.js';
import { tinyLimiter } from './helpers/tiny-limits.js';
import { gdprDispatcher } from '../src/gdpr/gdpr.dispatch.js';
import { quoteAppRates } from '../src/checkout/app-rates.js';
import type { RateItem, ShippingAddress } from '../src/checkout/rate-request.js';
import { sdkTypesText, SDK_TYPES_PATH } from '../scripts/sdk-types.js';
import {
  acknowledgeGdprRequest, ApiError, assertFixtures, completeGdprRequest, createAppClient, exchangeCode, expectFunction, FixtureMismatchError,
  MemoryTokenStore, nextLink, parseWebhook, rateResponse, receiveNodeRequest, receiveWebRequest, runFixtures, sendRates, sendRefusal, signBody,
  TokenKeeper, verifyHandoff, type OrderCreatePayload, type WebhookMessage,
} from '../packages/app-sdk/src/index.js';
import { errorMessage } from '../packages/app-sdk/src/client.js';

// ---------------------------------------------------------------------------------------------
// The platform, with a rate limiter that holds some apps to a tiny limit

const TINY = 3;
const { limiter, tinyApps, refusals } = tinyLimiter(TINY);

let h: Harness;
let base: string;
beforeAll(async () => {
  // A database of this file's own on PostgreSQL: its webhook deliveries are its workers' alone.
  const own = await privateDatabase();
  const db = own ? await openPostgres(own.url, { max: 5 }) : undefined;
  h = await createHarness({}, { limiter, ...(own ? { db, afterClose: own.drop } : {}) });
  base = await listenOnLoopback(h);
});
afterAll(async () => {
  await h?.close();
});

const ALL_SCOPES = ['read_products', 'write_products', 'read_orders', 'write_orders', 'read_shipping', 'write_shipping', 'read_discounts', 'read_customers'];

async function installedStore(appBody: Record<string, unknown> = {}) {
  const s = await storeWithApp(h, { scopes: ALL_SCOPES, tier: 'enterprise', ...appBody });
  return { ...s, client: createAppClient({ baseUrl: base, accessToken: s.accessToken }) };
}

const refusalsOf = (appId: string) => refusals.filter((k) => k.startsWith(`${appId}:`)).length;

// ---------------------------------------------------------------------------------------------

describe('the generated types', () => {
  it(`${SDK_TYPES_PATH} is what openapi-typescript makes of docs/openapi.json (run \`npm run sdk:types\` after \`npm run openapi\`)`, async () => {
    expect(readFileSync(join(ROOT, SDK_TYPES_PATH), 'utf8') === (await sdkTypesText()), `${SDK_TYPES_PATH} is stale: run \`npm run sdk:types\` and commit it`).toBe(true);
  }, 60_000);
});

describe('createAppClient: typed reads with a real token', () => {
  it('creates and reads products and reads orders, typed from the OpenAPI document; the token may come from a TokenKeeper', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { scopes: ALL_SCOPES, tier: 'enterprise' });
    // Installed the SDK's way: the handoff checked, the code exchanged, the tokens kept.
    const auth = await h.req('GET', `/apps/oauth/authorize?client_id=${app.clientId}`, { token: merchant.token });
    const handoff = verifyHandoff(new URL(auth.json().data.redirectUrl).searchParams, app.clientSecret);
    if (!handoff.ok) throw new Error(handoff.reason);
    const keeper = new TokenKeeper({ baseUrl: base, clientId: app.clientId, clientSecret: app.clientSecret }, new MemoryTokenStore());
    await keeper.install(handoff.shop, await exchangeCode({ baseUrl: base, clientId: app.clientId, clientSecret: app.clientSecret }, handoff));
    const client = createAppClient({ baseUrl: base, tokenProvider: () => keeper.accessToken(handoff.shop) });

    const created = await client.POST('/api/v1/products.json', { body: { product: { title: 'Blue mug', price: '12.50', inventory_quantity: 4 } } });
    expect(created.response.status).toBe(201);
    const id = created.data!.product.id;
    const { data, response } = await client.GET('/api/v1/products/{id}.json', { params: { path: { id: String(id) } } });
    expect(response.headers.get('x-ratelimit-limit')).toBe('500');
    const title: string = data!.product.title;
    const price: string | null = data!.product.price;
    expect({ title, price }).toEqual({ title: 'Blue mug', price: '12.50' });
    expect(client.rateLimit).toMatchObject({ limit: 500 });

    const product = await insertProduct(h, merchant.storeId, { title: 'Teapot', price: 3000 });
    const order = await takeOrder(h, merchant.token, orderBody(product));
    const got = await client.GET('/api/v1/orders/{id}.json', { params: { path: { id: order.orderId } } });
    expect(got.response.status).toBe(200);
    const quantity: number = got.data!.order.line_items[0].quantity;
    const total: string = got.data!.order.total_price;
    expect({ quantity, total, title: got.data!.order.line_items[0].title }).toEqual({ quantity: 1, total: '30.00', title: 'Teapot' });

    // An error comes back as openapi-fetch's `error` (the errors body, C5.1), not as a throw.
    const missing = await client.GET('/api/v1/orders/{id}.json', { params: { path: { id: '00000000-0000-7000-8000-000000000000' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toHaveProperty('errors');

    if (false as boolean) {
      // @ts-expect-error: no such route in the document
      await client.GET('/api/v1/nothing-here.json');
      // @ts-expect-error: the order route needs its path parameter
      await client.GET('/api/v1/orders/{id}.json', {});
    }
  });

  it('refuses to start without a token', () => {
    expect(() => createAppClient({ baseUrl: base })).toThrow(/accessToken or tokenProvider/);
  });

  it('refuses a baseUrl that is not an http(s) URL, naming it (every call would fail with a bare "fetch failed")', () => {
    for (const baseUrl of ['localhost:3000', '', 'ftp://localhost:3000', '/api']) {
      expect(() => createAppClient({ baseUrl, accessToken: 'svcat_x' })).toThrow(`baseUrl must be the platform's http(s) URL, e.g. http://localhost:3000 (got ${JSON.stringify(baseUrl)})`);
    }
    expect(() => createAppClient({ baseUrl: 'HTTPS://platform.example/', accessToken: 'svcat_x' })).not.toThrow();
  });
});

describe('paginate: Link pages (C5.4) and envelope pages', () => {
  it('walks every product and order page by the Link header, filters and limit carried along', async () => {
    const s = await installedStore();
    const ids: number[] = [];
    for (let i = 0; i < 7; i++) {
      const { data } = await s.client.POST('/api/v1/products.json', { body: { title: `P${i}`, status: i === 3 ? 'draft' : 'active' } });
      ids.push(data!.product.id);
    }
    const seen: number[] = [];
    for await (const product of s.client.paginate('/api/v1/products.json', { params: { query: { limit: 3 } } })) {
      const handle: string = product.handle;
      expect(handle).toEqual(expect.any(String));
      seen.push(product.id);
    }
    expect(seen.sort()).toEqual([...ids].sort());

    const pages = [];
    for await (const page of s.client.pages('/api/v1/products.json', { params: { query: { limit: 3, status: 'active' } } })) pages.push(page);
    expect(pages.map((p) => p.items.length)).toEqual([3, 3]);
    expect(pages[0].response.headers.get('link')).toContain('rel="next"');
    expect(pages.flatMap((p) => p.body.products.map((x) => x.status))).toEqual(Array(6).fill('active'));

    const product = await insertProduct(h, s.merchant.storeId);
    const orders: string[] = [];
    for (let i = 0; i < 5; i++) orders.push((await takeOrder(h, s.merchant.token, orderBody(product))).orderId);
    const walked: string[] = [];
    for await (const order of s.client.paginate('/api/v1/orders.json', { params: { query: { limit: 2 } } })) walked.push(order.id);
    expect(walked).toEqual([...orders].reverse()); // newest first (C5.4)
  });

  it('walks envelope lists: `pagination` (shipping zones) and flat `data` counters (discounts)', async () => {
    const s = await installedStore();
    const zones: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await s.client.POST('/api/v1/shipping_zones.json', { body: { name: `Zone ${i}`, countries: ['FR'], price: 5 } });
      expect(res.response.status).toBe(201);
      zones.push(res.data!.data.shipping_zone.shippingZoneId);
    }
    const walked: string[] = [];
    for await (const zone of s.client.paginate('/api/v1/shipping_zones.json', { params: { query: { limit: 2 } } })) walked.push(zone.shippingZoneId);
    expect(walked.sort()).toEqual([...zones].sort());

    for (let i = 0; i < 5; i++) {
      const res = await h.req('POST', '/discounts', { token: s.merchant.token, body: { code: `SDK${i}X${Date.now()}`, type: 'Percentage', discountPercentage: 10 } });
      expect(res.statusCode, res.body).toBe(201);
    }
    const pages = [];
    for await (const page of s.client.pages('/api/v1/discounts.json', { params: { query: { limit: 2 } } })) pages.push(page);
    expect(pages.map((p) => p.body.data.page)).toEqual([1, 2, 3]);
    const codes = pages.flatMap((p) => p.items.map((d) => d.code));
    expect(new Set(codes).size).toBe(5);
  });

  it('reads the next link of a Link header as RFC 8288 writes it', () => {
    expect(nextLink('<http://x/a?page=1>; rel="previous", <http://x/a?page=3&limit=2>; rel="next"')).toBe('http://x/a?page=3&limit=2');
    expect(nextLink('<http://x/a?page=1>; rel="previous"')).toBeNull();
    expect(nextLink('<http://x/b>; rel=next')).toBe('http://x/b');
    expect(nextLink(null)).toBeNull();
  });

  it('a page that fails throws an ApiError with the status and body', async () => {
    const s = await installedStore({ scopes: ['read_products'] });
    const walk = async () => {
      for await (const _ of s.client.paginate('/api/v1/orders.json')) void _;
    };
    const err = await walk().catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(403);
    expect(err.body).toHaveProperty('errors');
    // The App API's { errors: { base: [...] } } read as its sentence, not as JSON.
    expect(err.message).toBe('This endpoint requires the read_orders scope');
    const refused = createAppClient({ baseUrl: base, accessToken: 'svcat_not-a-token' });
    const unauthorized = await (async () => {
      for await (const _ of refused.paginate('/api/v1/products.json')) void _;
    })().catch((e) => e);
    expect(unauthorized).toMatchObject({ status: 401, message: 'Invalid, expired or revoked access token' });
  });

  it('an ApiError names each field of a validation error', () => {
    expect(errorMessage({ errors: { title: ["can't be blank"], status: ['must be active, draft or archived'] } }, 'x')).toBe("title: can't be blank; status: must be active, draft or archived");
    expect(errorMessage({ errors: { base: ['Order not found'] } }, 'x')).toBe('Order not found');
    expect(errorMessage({ status: 404, message: 'GDPR request not found' }, 'x')).toBe('GDPR request not found');
    expect(errorMessage('<html>', 'GET /x answered 502')).toBe('GET /x answered 502');
  });
});

describe('the rate limit (app-api.md Limits; C5.5)', () => {
  it(`stays under a limit of ${TINY} per second: concurrent calls wait for the window instead of meeting a 429`, async () => {
    const s = await installedStore();
    tinyApps.add(s.app.appId);
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 3 * TINY }, () => s.client.GET('/api/v1/products.json')));
    expect(results.map((r) => r.response.status)).toEqual(Array(3 * TINY).fill(200));
    expect(refusalsOf(s.app.appId)).toBe(0);
    // Three windows' worth of requests: at least two windows went by.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(s.client.rateLimit.limit).toBe(TINY);
  });

  it('a 429 met anyway (another client spent the budget) is waited out for Retry-After seconds, then sent again; a POST too', async () => {
    const s = await installedStore();
    tinyApps.add(s.app.appId);
    const spend = async () => {
      for (let i = 0; i < TINY; i++) await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${s.accessToken}` } });
    };
    await spend();
    let before = refusalsOf(s.app.appId);
    const fresh = createAppClient({ baseUrl: base, accessToken: s.accessToken });
    const started = Date.now();
    const res = await fresh.GET('/api/v1/products.json');
    expect(res.response.status).toBe(200);
    expect(refusalsOf(s.app.appId) - before).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900); // Retry-After: 1

    // A 429 is refused before any work: sending a POST again creates the product once.
    await spend();
    before = refusalsOf(s.app.appId);
    const other = createAppClient({ baseUrl: base, accessToken: s.accessToken });
    const created = await other.POST('/api/v1/products.json', { body: { title: 'Once only' } });
    expect(created.response.status).toBe(201);
    expect(refusalsOf(s.app.appId) - before).toBe(1);
    const { rows } = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM products WHERE store_id = $1 AND title = 'Once only'`, [s.merchant.storeId]);
    expect(rows[0].n).toBe(1);
  });

  it('a Retry-After longer than the client will wait returns the 429', async () => {
    const s = await installedStore();
    tinyApps.add(s.app.appId);
    for (let i = 0; i < TINY; i++) await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${s.accessToken}` } });
    const impatient = createAppClient({ baseUrl: base, accessToken: s.accessToken, retry: { maxRetryAfterSeconds: 0 } });
    const res = await impatient.GET('/api/v1/products.json');
    expect(res.response.status).toBe(429);
    expect(res.response.headers.get('retry-after')).toBe('1');
    expect(res.error).toMatchObject({ error: expect.any(String), message: expect.any(String) });
  });
});

// ---------------------------------------------------------------------------------------------
// Retries, through a real proxy that fails on purpose

describe('retries: network errors and 5xx, only where a repeat is harmless', () => {
  let proxy: FaultyProxy;
  beforeAll(async () => {
    proxy = await startFaultyProxy(base);
  });
  afterAll(() => proxy?.close());
  const fast = { maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 50 };

  it('a GET, PUT or DELETE answered 503 or cut off is sent again, with backoff, until it succeeds', async () => {
    const s = await installedStore();
    const client = createAppClient({ baseUrl: proxy.url, accessToken: s.accessToken, retry: fast });
    proxy.seen.length = 0;
    proxy.plan = (_req, n) => (n <= 2 ? 'fail' : 'pass');
    const list = await client.GET('/api/v1/products.json');
    expect(list.response.status).toBe(200);
    expect(proxy.seen.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);

    const { data } = await createAppClient({ baseUrl: base, accessToken: s.accessToken }).POST('/api/v1/products.json', { body: { title: 'Before' } });
    const id = String(data!.product.id);
    proxy.seen.length = 0;
    proxy.plan = (_req, n) => (n === 1 ? 'drop' : 'pass');
    const put = await client.PUT('/api/v1/products/{id}.json', { params: { path: { id } }, body: { product: { title: 'After' } } });
    expect(put.response.status).toBe(200);
    expect(put.data!.product.title).toBe('After');
    expect(proxy.seen.map((r) => r.method)).toEqual(['PUT', 'PUT']);

    proxy.seen.length = 0;
    proxy.plan = (_req, n) => (n === 1 ? 'fail' : 'pass');
    const del = await client.DELETE('/api/v1/products/{id}.json', { params: { path: { id } } });
    expect(del.response.status).toBe(200);
    expect(proxy.seen.map((r) => r.method)).toEqual(['DELETE', 'DELETE']);
  });

  it('a POST answered 503 or cut off is not sent again (the platform has no idempotency key): one attempt, one outcome', async () => {
    const s = await installedStore();
    const client = createAppClient({ baseUrl: proxy.url, accessToken: s.accessToken, retry: fast });
    proxy.seen.length = 0;
    proxy.plan = () => 'fail';
    const res = await client.POST('/api/v1/products.json', { body: { title: 'Maybe' } });
    expect(res.response.status).toBe(503);
    expect(proxy.seen).toHaveLength(1);

    proxy.seen.length = 0;
    proxy.plan = () => 'drop';
    await expect(client.POST('/api/v1/products.json', { body: { title: 'Maybe' } })).rejects.toThrow();
    expect(proxy.seen).toHaveLength(1);
  });

  it('attempts are bounded: a GET that keeps failing returns the last 503 after maxAttempts', async () => {
    const s = await installedStore();
    const client = createAppClient({ baseUrl: proxy.url, accessToken: s.accessToken, retry: { ...fast, maxAttempts: 3 } });
    proxy.seen.length = 0;
    proxy.plan = () => 'fail';
    const res = await client.GET('/api/v1/products.json');
    expect(res.response.status).toBe(503);
    expect(proxy.seen).toHaveLength(3);
  });

  it('a request that never left (connection refused) is sent again whatever its method, up to maxAttempts', async () => {
    const port = await freePort(); // nothing listens there
    let sends = 0;
    const client = createAppClient({
      baseUrl: `http://127.0.0.1:${port}`, accessToken: 'svcat_x', retry: { ...fast, maxAttempts: 3 },
      fetch: (request) => (sends++, fetch(request)),
    });
    await expect(client.POST('/api/v1/products.json', { body: { title: 'x' } })).rejects.toThrow();
    expect(sends).toBe(3);
  });
});

// ---------------------------------------------------------------------------------------------
// Receiving: an app server built on the SDK's Node adapter

interface AppServer {
  url: string;
  /** The app's client secret: set once the app exists (its manifest needs this server's address first). */
  secret: string;
  messages: WebhookMessage[];
  refusals: string[];
  close(): Promise<void>;
}

/** A node:http app on the SDK's Node adapter: verifies and parses everything, answers rate requests (C15.3). */
async function startAppServer(options: { maxBytes?: number } = {}): Promise<AppServer> {
  const app: AppServer = { url: '', secret: '', messages: [], refusals: [], close: async () => {} };
  const server = createServer(async (req, res) => {
    const message = await receiveNodeRequest(req, { secret: app.secret, maxBytes: options.maxBytes });
    if (!message.ok) {
      app.refusals.push(message.reason);
      return sendRefusal(res, message);
    }
    app.messages.push(message);
    if (message.topic === 'shipping/rates') {
      const grams = message.payload.rate.items.reduce((n, i) => n + i.grams * i.quantity, 0);
      return sendRates(res, [{ service_name: 'By weight', service_code: 'weight', total_price: 100 + grams, currency: message.payload.rate.currency }]);
    }
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  app.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  app.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return app;
}

async function until<T>(what: () => T | undefined, label: string, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const got = what();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const DESTINATION: ShippingAddress = {
  first_name: 'Ada', last_name: 'Lovelace', company: null, address1: '1 Rue de Rivoli', address2: '', city: 'Paris',
  province: null, province_code: null, country: 'France', country_code: 'FR', zip: '75001', phone: null,
};
const ITEMS: RateItem[] = [{ name: 'Mug', sku: 'MUG-1', quantity: 2, grams: 454, priceMinor: 1999, requiresShipping: true, productId: 1001, variantId: 2001 }];

describe('webhooks and rate requests, typed (C8.8, C15.3), through the adapters', () => {
  it('a real orders/create delivery parses into a typed message: shipping_lines[0].source is the shipping app\'s handle', async () => {
    const partner = await signupPartner(h);
    const merchant = await signupMerchant(h);
    const server = await startAppServer();
    try {
      const app = await createTestApp(h, partner.token, {
        scopes: ALL_SCOPES, tier: 'enterprise', extensions: { webhooks: [{ topic: 'orders/create', uri: `${server.url}/webhooks` }] },
      });
      server.secret = app.clientSecret;
      const installed = await installApp(h, merchant, app);
      const product = await insertProduct(h, merchant.storeId, { title: 'Kettle', price: 4500 });
      const order = await takeOrder(h, merchant.token, orderBody(product, {
        shipping_line: { title: 'Express', code: `${app.handle}-express`, source: app.handle, price: '7.00' },
      }));
      await h.deps.jobs.run('webhook-deliveries');
      const message = await until(() => server.messages.find((m) => m.topic === 'orders/create'), 'orders/create');
      if (message.topic !== 'orders/create') throw new Error('narrowing');
      const payload: OrderCreatePayload = message.payload;
      expect(payload.shipping_lines[0].source).toBe(app.handle);
      expect(payload.shipping_lines[0]).toEqual({ title: 'Express', code: `${app.handle}-express`, source: app.handle, price: '7.00', currency: expect.any(String) });
      expect(message).toMatchObject({ ok: true, shop: merchant.slug, apiVersion: '2026-06', attempt: 1, webhookId: expect.any(String), gdprRequestId: null });
      expect(payload.id).toBe(order.orderId);
      // The same order through the typed client: the webhook is the REST order cut to app-api.md's list (C8.8).
      const rest = await createAppClient({ baseUrl: base, accessToken: installed.accessToken }).GET('/api/v1/orders/{id}.json', { params: { path: { id: order.orderId } } });
      const o = rest.data!.order;
      expect(payload).toEqual({
        id: o.id, name: o.name, order_number: o.order_number, email: o.email, phone: o.phone, financial_status: o.financial_status,
        fulfillment_status: o.fulfillment_status, currency: o.currency, total_price: o.total_price, subtotal_price: o.subtotal_price,
        shipping_price: o.shipping_price, created_at: o.created_at, shipping_lines: o.shipping_lines,
        customer: { id: o.customer!.id, first_name: o.customer!.first_name, last_name: o.customer!.last_name, email: o.customer!.email },
        shipping_address: (({ address1, address2, city, province, country, zip, phone }) => ({ address1, address2, city, province, country, zip, phone }))(o.shipping_address!),
        line_items: o.line_items.map(({ id, product_id, variant_id, title, quantity, price, sku }) => ({ id, product_id, variant_id, title, quantity, price, sku })),
      });
    } finally {
      await server.close();
    }
  });

  it("the platform's own rate request reaches a node:http app, which answers 200 JSON in the C15.3 shape; a forged, unsigned or oversized one is refused", async () => {
    const partner = await signupPartner(h);
    const merchant = await signupMerchant(h);
    const server = await startAppServer({ maxBytes: 1024 });
    try {
      const app = await createTestApp(h, partner.token, { appUrl: 'https://1.1.1.1', scopes: ['read_shipping', 'write_shipping'], extensions: { shipping: { ratesUrl: `${server.url}/rates` } } });
      server.secret = app.clientSecret;
      await installApp(h, merchant, app);
      const rates = await quoteAppRates(h.deps, { storeId: merchant.storeId, currency: 'USD', destination: DESTINATION, items: ITEMS });
      expect(rates).toEqual([{
        handle: `app-${app.handle}-weight`, title: 'By weight', price: '10.08', code: `${app.handle}-weight`, source: app.handle,
        description: null, min_delivery_date: null, max_delivery_date: null,
      }]);
      const message = server.messages.find((m) => m.topic === 'shipping/rates');
      if (message?.topic !== 'shipping/rates') throw new Error('no rate request');
      expect(message.payload.rate).toMatchObject({ currency: 'USD', locale: 'en', destination: { country: 'FR', city: 'Paris' } });
      expect(message.payload.rate.items).toEqual([{ name: 'Mug', sku: 'MUG-1', quantity: 2, grams: 454, price: 1999, requires_shipping: true, product_id: 1001, variant_id: 2001 }]);

      const body = JSON.stringify({ rate: message.payload.rate });
      const headers = { 'content-type': 'application/json', 'x-svc-topic': 'shipping/rates', 'x-svc-shop-domain': merchant.slug };
      const signed = await fetch(`${server.url}/rates`, { method: 'POST', headers: { ...headers, 'x-svc-hmac-sha256': signBody(body, app.clientSecret) }, body });
      expect(signed.status).toBe(200);
      expect(signed.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await signed.json()).toEqual({ rates: [{ service_name: 'By weight', service_code: 'weight', total_price: 1008, currency: 'USD' }] });

      const forged = await fetch(`${server.url}/rates`, { method: 'POST', headers: { ...headers, 'x-svc-hmac-sha256': signBody(body, 'not-the-secret') }, body });
      expect(forged.status).toBe(401);
      const unsigned = await fetch(`${server.url}/rates`, { method: 'POST', headers, body });
      expect(unsigned.status).toBe(401);
      const big = 'x'.repeat(2048);
      const oversized = await fetch(`${server.url}/rates`, { method: 'POST', headers: { ...headers, 'x-svc-hmac-sha256': signBody(big, app.clientSecret) }, body: big });
      expect(oversized.status).toBe(413);
      expect(server.refusals).toEqual(['bad signature', 'missing signature', 'body too large']);
    } finally {
      await server.close();
    }
  });

  it('a Web Request: read within its bound, verified, parsed; the answer is a Web Response in the C15.3 shape', async () => {
    const secret = 'web-secret';
    const rate = { origin: { country: 'US' }, destination: { country: 'FR' }, items: [], currency: 'EUR', locale: 'en' };
    const body = JSON.stringify({ rate });
    const request = (b: BodyInit, extra: Record<string, string> = {}) =>
      new Request('https://app.example/rates', { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-topic': 'shipping/rates', 'x-svc-shop-domain': 'demo', ...extra }, body: b });

    const message = await receiveWebRequest(request(body, { 'x-svc-hmac-sha256': signBody(body, secret) }), { secret });
    if (!message.ok || message.topic !== 'shipping/rates') throw new Error(`not parsed: ${JSON.stringify(message)}`);
    expect(message.payload.rate.currency).toBe('EUR');
    const answer = rateResponse([{ service_name: 'Ground', service_code: 'ground', total_price: 900, currency: message.payload.rate.currency }]);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await answer.json()).toEqual({ rates: [{ service_name: 'Ground', service_code: 'ground', total_price: 900, currency: 'EUR' }] });

    expect(await receiveWebRequest(request(body, { 'x-svc-hmac-sha256': signBody(body, 'other') }), { secret })).toEqual({ ok: false, reason: 'bad signature' });
    // A streamed body with no length declared is cut at the bound.
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 4; i++) c.enqueue(new TextEncoder().encode('y'.repeat(400)));
        c.close();
      },
    });
    const streamed = new Request('https://app.example/rates', { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect(await receiveWebRequest(streamed, { secret, maxBytes: 1000 })).toEqual({ ok: false, reason: 'body too large' });
    // A topic outside the platform's list is refused, not passed on untyped.
    const odd = JSON.stringify({});
    expect(await receiveWebRequest(request(odd, { 'x-svc-topic': 'made/up', 'x-svc-hmac-sha256': signBody(odd, secret) }), { secret })).toEqual({ ok: false, reason: 'unknown topic', topic: 'made/up' });
  });

  it('parseWebhook narrows the subscription topics and carries the delivery headers', () => {
    const secret = 's3';
    const body = JSON.stringify({
      orderId: 'o1', invoiceId: 'INV-1', storeId: 'st', subscriptionId: 'sub_1', customerId: 'cus_1', customerEmail: 'a@b.c', status: 'active',
      planName: 'Pro', amount: 19.9, currency: 'usd', billingInterval: 'month', billingIntervalCount: 1, currentPeriodStart: 1, currentPeriodEnd: 2, trialEnd: null,
    });
    const msg = parseWebhook({ rawBody: body, secret, headers: { 'x-svc-hmac-sha256': signBody(body, secret), 'x-svc-topic': 'subscriptions/renew', 'x-svc-webhook-id': 'w1', 'x-svc-delivery-attempt': '2' } });
    if (!msg.ok || msg.topic !== 'subscriptions/renew') throw new Error('not narrowed');
    const amount: number = msg.payload.amount;
    expect({ amount, webhookId: msg.webhookId, attempt: msg.attempt }).toEqual({ amount: 19.9, webhookId: 'w1', attempt: 2 });
  });
});

// ---------------------------------------------------------------------------------------------

describe('GDPR: the app acknowledges and completes (C9.2)', () => {
  const settle = () => gdprDispatcher(h.deps).settle();
  const detail = async (merchant: Merchant, id: string) => (await h.req('GET', `/apps/gdpr/requests/${id}`, { token: merchant.token })).json().data;

  async function gdprApp(server: AppServer) {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, {
      scopes: ['read_shop', 'read_customers', 'read_orders'], tier: 'enterprise',
      gdprUrls: { customerDataRequest: `${server.url}/gdpr/data`, customerRedact: `${server.url}/gdpr/redact`, shopRedact: `${server.url}/gdpr/shop` },
    });
    server.secret = app.clientSecret;
    const installed = await installApp(h, merchant, app);
    return { merchant, app, ...installed };
  }

  it('customers/redact arrives typed with its request id; acknowledge then complete move the request to acknowledged, then completed', async () => {
    const server = await startAppServer();
    try {
      const s = await gdprApp(server);
      const product = await insertProduct(h, s.merchant.storeId);
      const order = await takeOrder(h, s.merchant.token, orderBody(product));
      const customerId = (await detailOfOrderCustomer(s.merchant, order.orderId));
      const res = await h.req('POST', '/apps/gdpr/customer-redact', { token: s.merchant.token, body: { customerId } });
      expect(res.statusCode, res.body).toBe(201);
      const { requestId } = res.json().data;
      await settle();
      const message = await until(() => server.messages.find((m) => m.topic === 'customers/redact'), 'customers/redact');
      if (message.topic !== 'customers/redact') throw new Error('narrowing');
      expect(message.gdprRequestId).toBe(requestId);
      const toRedact: string[] = message.payload.orders_to_redact;
      expect(toRedact).toEqual([order.orderId]);
      expect(message.payload).toMatchObject({ shop_id: s.merchant.storeId, shop_domain: s.merchant.slug, customer: { id: customerId } });

      const client = createAppClient({ baseUrl: base, accessToken: s.accessToken });
      const acked = await acknowledgeGdprRequest(client, message.gdprRequestId!);
      expect(acked.appAcknowledgments).toEqual([expect.objectContaining({ appId: s.app.appId, status: 'acknowledged' })]);
      expect((await detail(s.merchant, requestId)).status).toBe('acknowledged');
      const done = await completeGdprRequest(client, requestId);
      expect(done).toMatchObject({ status: 'completed', dataExportUrl: null });
      expect((await detail(s.merchant, requestId)).status).toBe('completed');
    } finally {
      await server.close();
    }
  });

  it('customers/data_request: the id in the body; completed with a dataExportUrl from { baseUrl, accessToken }; an unknown request -> ApiError 404', async () => {
    const server = await startAppServer();
    try {
      const s = await gdprApp(server);
      const res = await h.req('POST', '/apps/gdpr/data-request', { token: s.merchant.token, body: { customerEmail: 'grace@example.com' } });
      const { requestId } = res.json().data;
      await settle();
      const message = await until(() => server.messages.find((m) => m.topic === 'customers/data_request'), 'customers/data_request');
      if (message.topic !== 'customers/data_request') throw new Error('narrowing');
      expect(message.payload.data_request.id).toBe(requestId);
      expect(message.payload.customer.email).toBe('grace@example.com');

      const target = { baseUrl: base, accessToken: s.accessToken };
      await acknowledgeGdprRequest(target, requestId);
      const done = await completeGdprRequest(target, requestId, { dataExportUrl: 'https://app.example.com/export.zip' });
      expect(done).toMatchObject({ status: 'completed', dataExportUrl: 'https://app.example.com/export.zip' });
      expect(await detail(s.merchant, requestId)).toMatchObject({ status: 'completed', dataExportUrl: 'https://app.example.com/export.zip' });

      const err = await acknowledgeGdprRequest(target, '00000000-0000-7000-8000-000000000000').catch((e) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err.status).toBe(404);
      const bad = await completeGdprRequest(target, requestId, { dataExportUrl: 'not a url' }).catch((e) => e);
      expect(bad).toMatchObject({ status: 400 });
    } finally {
      await server.close();
    }
  });

  async function detailOfOrderCustomer(merchant: Merchant, orderId: string): Promise<string> {
    const { rows } = await h.db.query<{ customer_id: string }>('SELECT customer_id FROM orders WHERE id = $1 AND store_id = $2', [orderId, merchant.storeId]);
    return rows[0].customer_id;
  }
});

// ---------------------------------------------------------------------------------------------

describe('function fixtures (C11) with the platform runtime', () => {
  const target = 'cart.validations.generate.run';
  const SLOW_MACHINE_MS = 1000;
  const expression = 'input.total > 10 ? {"operations": [{"validationAdd": {"errors": [{"message": "too much", "target": "cart"}]}}]} : {"operations": []}';
  const tooMuch = { operations: [{ validationAdd: { errors: [{ message: 'too much', target: 'cart' }] } }] };

  // What is compared is the output; the 50 ms limit itself is the runtime's test (a loaded machine
  // must not turn these into TimeoutErrors).
  it('expectFunction returns the result when the output matches and throws a path-by-path difference when it does not', () => {
    expect(expectFunction({ target, expression, input: { total: 12 }, timeoutMs: SLOW_MACHINE_MS, expectOutput: tooMuch }).status).toBe('success');
    expect(expectFunction({ target, expression, input: { total: 2 }, timeoutMs: SLOW_MACHINE_MS, expectOutput: { operations: [] } }).output).toEqual({ operations: [] });

    let err: unknown;
    try {
      expectFunction({ target, expression, input: { total: 12 }, timeoutMs: SLOW_MACHINE_MS, expectOutput: { operations: [{ validationAdd: { errors: [{ message: 'too many', target: 'cart' }] } }] } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FixtureMismatchError);
    expect((err as Error).message).toBe(
      `function fixture "${target}" (${target}) does not hold:\n  $.operations[0].validationAdd.errors[0].message: expected "too many", got "too much"`,
    );
    expect(() => expectFunction({ target, expression: 'input.nothing.here', input: {}, timeoutMs: SLOW_MACHINE_MS, expectOutput: { operations: [] } })).toThrow(/expected success, got \w+Error/);
    expect(expectFunction({ target, expression: 'input.nothing.here', input: {}, timeoutMs: SLOW_MACHINE_MS, expectErrorType: 'RuntimeError' }).status).toBe('failure');
  });

  it('runFixtures reads a folder of JSON fixtures (expression inline or in a file); assertFixtures throws listing the failures', async () => {
    const dir = tempDir('svc-sdk-fixtures-');
    writeFileSync(join(dir, 'limit.cel'), expression);
    writeFileSync(join(dir, 'a-over.json'), JSON.stringify({ target, expressionFile: 'limit.cel', input: { total: 12 }, timeoutMs: SLOW_MACHINE_MS, expectOutput: tooMuch }));
    writeFileSync(join(dir, 'b-under.json'), JSON.stringify({ name: 'under the limit', target, expression, input: { total: 3 }, timeoutMs: SLOW_MACHINE_MS, expectOutput: tooMuch }));
    const outcomes = await runFixtures(dir);
    expect(outcomes.map((o) => [o.name, o.pass])).toEqual([['a-over', true], ['under the limit', false]]);
    expect(outcomes[1].differences).toEqual(['$.operations[0]: expected {"validationAdd":{"errors":[{"message":"too much","target":"cart"}]}}, got nothing (array too short)']);
    await expect(assertFixtures(dir)).rejects.toThrow(/"under the limit"/);
    await expect(assertFixtures([{ target, expression, input: { total: 1 }, timeoutMs: SLOW_MACHINE_MS, expectOutput: { operations: [] } }])).resolves.toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the examples (packages/app-sdk/examples), run as processes', () => {
  /** Starts an example as its README says (with the repository's svc-source condition); resolves once it listens. */
  async function runExample(file: string, env: Record<string, string>) {
    const child = spawn(process.execPath, ['--conditions=svc-source', '--import', 'tsx', join('packages/app-sdk/examples', file)], {
      cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (out += c));
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
      await exited;
    };
    try {
      await until(() => {
        if (child.exitCode !== null) throw new Error(`${file} exited (${child.exitCode}):\n${out}`);
        return /listening on/.test(out) ? true : undefined;
      }, `${file} to listen`, 30_000);
    } catch (err) {
      await stop();
      throw err;
    }
    return { output: () => out, stop };
  }

  for (const [file, path] of [['node-http.ts', '/'], ['fastify.ts', '/platform/rates']] as const) {
    it(`${file}: answers the platform's own rate request; refuses an unsigned one with 401`, async () => {
      const partner = await signupPartner(h);
      const merchant = await signupMerchant(h);
      const port = await freePort();
      const ratesUrl = `http://127.0.0.1:${port}${path}`;
      const app = await createTestApp(h, partner.token, { appUrl: 'https://1.1.1.1', scopes: ['read_shipping', 'write_shipping'], extensions: { shipping: { ratesUrl } } });
      const example = await runExample(file, { CLIENT_SECRET: app.clientSecret, PORT: String(port) });
      try {
        await installApp(h, merchant, app);
        const rates = await quoteAppRates(h.deps, { storeId: merchant.storeId, currency: 'USD', destination: DESTINATION, items: ITEMS });
        // 908 g abroad (the store has no address): Standard 15.00 + 2.00, Express 35.00 + 4.00.
        expect(rates).toEqual([
          { handle: `app-${app.handle}-standard`, title: 'Standard', price: '17.00', code: `${app.handle}-standard`, source: app.handle, description: '5 to 10 days', min_delivery_date: null, max_delivery_date: null },
          { handle: `app-${app.handle}-express`, title: 'Express', price: '39.00', code: `${app.handle}-express`, source: app.handle, description: '2 to 3 days', min_delivery_date: null, max_delivery_date: null },
        ]);
        const unsigned = await fetch(ratesUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-topic': 'shipping/rates' }, body: '{"rate":{}}' });
        expect(unsigned.status).toBe(401);
      } finally {
        await example.stop();
      }
    }, 60_000);
  }
});
