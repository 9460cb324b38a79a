// Test deliveries (issue 14; C8.9): `POST /apps/developer/{appId}/webhooks/test` sends a topic's
// sample payload to an address, signed and headed as real deliveries are, once, and answers the
// outcome; the delivery is in the app's log (C8.5) and stats (C8.6) with source `test` and no store.
// Real HTTP to a loopback receiver (private addresses are allowed in the test config, C1.2), the
// signature checked with the SDK's own verifyMessage; the address rules on a strict service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { createTestApp, signupPartner, storeWithApp } from './helpers/actors.js';
import { events } from './helpers/events.js';
import { insertProduct, orderBody, takeOrder } from './helpers/orders.js';
import { runDeliveries } from './fixtures/webhook-setup.js';
import { PUBLIC_URL } from './fixtures/addresses.js';
import { verifyMessage } from '../packages/app-sdk/src/webhooks.js';
import { API_VERSION } from '../src/api-version.js';
import { TOPICS } from '../src/webhooks/topics.js';
import { SAMPLE_GDPR_REQUEST_ID, SAMPLE_SHOP_DOMAIN } from '../src/webhooks/samples.js';
import { TEST_DELIVERIES_PER_MINUTE } from '../src/webhooks/test-delivery.js';

let h: Harness;
let strict: Harness;
let rx: Receiver;

beforeAll(async () => {
  [h, strict] = await Promise.all([createWebhookHarness(), createWebhookHarness({ SVC_ALLOW_PRIVATE_WEBHOOKS: '0' })]);
  // `/fail...` answers 500; everything else 200.
  rx = await startReceiver((req) => (req.path.startsWith('/fail') ? { status: 500, body: 'receiver broke' } : { status: 200, body: 'ok' }));
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
  await strict?.close();
});

/** A new developer's app (a public app URL: the strict service resolves it, C8.9). */
async function developerApp(on: Harness = h) {
  const partner = await signupPartner(on);
  return createTestApp(on, partner.token, { appUrl: PUBLIC_URL });
}

const trigger = (app: { appId: string; developerToken: string }, body: unknown, on: Harness = h) =>
  on.req('POST', `/apps/developer/${app.appId}/webhooks/test`, { token: app.developerToken, body });

const envelopeError = (status: number, message: string) => ({ status, state: 'error', message, data: null, count: null, pagination: null });

/**
 * Where two JSON values differ in shape: the keys of their objects, all the way down (arrays by
 * their first elements); a null matches anything (a field that is empty in one of them).
 */
function shapeDiff(a: unknown, b: unknown, path = '$'): string[] {
  if (a === null || b === null) return [];
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b)) return [`${path}: array and not`];
    return a.length && b.length ? shapeDiff(a[0], b[0], `${path}[0]`) : [];
  }
  if (typeof a === 'object' || typeof b === 'object') {
    if (typeof a !== 'object' || typeof b !== 'object') return [`${path}: object and not`];
    const ka = Object.keys(a as object).sort();
    const kb = Object.keys(b as object).sort();
    if (JSON.stringify(ka) !== JSON.stringify(kb)) return [`${path}: keys ${ka.join(',')} vs ${kb.join(',')}`];
    return ka.flatMap((k) => shapeDiff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`));
  }
  return typeof a === typeof b ? [] : [`${path}: ${typeof a} vs ${typeof b}`];
}

describe('POST /apps/developer/{appId}/webhooks/test (issue 14)', () => {
  it('sends the signed sample once, with the headers of real deliveries, and answers the outcome', async () => {
    const app = await developerApp();
    const before = rx.received.length;
    const res = await trigger(app, { topic: 'orders/create', address: `${rx.url}/hooks` });
    expect(res.statusCode, res.body).toBe(200);
    const { delivery, outcome } = res.json().data;
    expect(outcome).toEqual({ success: true, status: 'success', responseStatus: 200, durationMs: expect.any(Number), error: null });
    expect(delivery).toMatchObject({
      source: 'test', topic: 'orders/create', storeId: null, address: `${rx.url}/hooks`, status: 'success', attemptCount: 1, nextAttemptAt: null,
      responseStatus: 200, responseBody: 'ok', attempts: [{ attempt: 1, responseStatus: 200, error: null }],
    });

    const received = rx.received.slice(before);
    expect(received).toHaveLength(1);
    const [req] = received;
    expect(req.path).toBe('/hooks');
    expect(req.raw.toString('utf8')).toBe(delivery.requestBody);
    // The app's client secret signs it (as manifest and GDPR webhooks, C8.7); the SDK verifies it.
    const verified = verifyMessage<any>({ rawBody: req.raw, headers: req.headers, secret: app.clientSecret });
    expect(verified).toMatchObject({ ok: true, topic: 'orders/create', shop: SAMPLE_SHOP_DOMAIN, apiVersion: API_VERSION });
    expect(verifyMessage({ rawBody: req.raw, headers: req.headers, secret: 'another-secret' })).toEqual({ ok: false, reason: 'bad signature' });
    expect(req.headers).toMatchObject({
      'content-type': 'application/json', 'x-svc-topic': 'orders/create', 'x-svc-shop-domain': SAMPLE_SHOP_DOMAIN, 'x-svc-api-version': API_VERSION,
      'x-svc-webhook-id': delivery.webhookId, 'x-svc-delivery-attempt': '1',
    });
    // app-api.md Payload conventions: exactly the orders/create field list, plainly fake values.
    const order = verified.ok ? verified.payload : null;
    expect(Object.keys(order).sort()).toEqual([
      'created_at', 'currency', 'customer', 'email', 'financial_status', 'fulfillment_status', 'id', 'line_items', 'name', 'order_number', 'phone',
      'shipping_address', 'shipping_lines', 'shipping_price', 'subtotal_price', 'total_price',
    ]);
    expect(order).toMatchObject({ id: '00000000-0000-0000-0000-000000000001', email: 'buyer@example.com', total_price: '55.00', line_items: [{ product_id: 0, quantity: 2 }] });
  });

  it('every topic the platform delivers: its sample is sent, verifies and parses, in the shape of its topic', async () => {
    const app = await developerApp();
    expect(TOPICS.length).toBeLessThanOrEqual(TEST_DELIVERIES_PER_MINUTE);
    const wrong: string[] = [];
    for (const topic of TOPICS) {
      const before = rx.received.length;
      const res = await trigger(app, { topic, address: `${rx.url}/all` });
      const req = rx.received[before];
      if (res.statusCode !== 200 || !res.json().data.outcome.success || !req) {
        wrong.push(`${topic}: ${res.statusCode} ${res.body}`);
        continue;
      }
      const m = verifyMessage<any>({ rawBody: req.raw, headers: req.headers, secret: app.clientSecret });
      if (!m.ok || m.topic !== topic || m.shop !== SAMPLE_SHOP_DOMAIN || typeof m.payload !== 'object' || m.payload === null) {
        wrong.push(`${topic}: ${JSON.stringify(m)}`);
        continue;
      }
      const p = m.payload;
      if (topic.startsWith('subscriptions/')) {
        // app-api.md Subscription payload: the same fields for all five topics.
        expect(Object.keys(p).sort(), topic).toEqual([
          'amount', 'billingInterval', 'billingIntervalCount', 'currency', 'currentPeriodEnd', 'currentPeriodStart', 'customerEmail', 'customerId',
          'invoiceId', 'orderId', 'planName', 'status', 'storeId', 'subscriptionId', 'trialEnd',
        ]);
      }
      if (['customers/data_request', 'customers/redact', 'shop/redact'].includes(topic)) {
        // app-api.md GDPR webhooks, and C9.4's request id header.
        expect(req.headers['x-svc-gdpr-request-id'], topic).toBe(SAMPLE_GDPR_REQUEST_ID);
        expect(p.shop_domain, topic).toBe(SAMPLE_SHOP_DOMAIN);
      }
    }
    expect(wrong).toEqual([]);
    const log = (await h.req('GET', `/apps/developer/${app.appId}/webhook-deliveries?limit=100`, { token: app.developerToken })).json().data.deliveries;
    expect(log.map((d: { topic: string }) => d.topic).sort()).toEqual([...TOPICS].sort());
    const gdpr = rx.received.filter((r) => r.headers['x-svc-topic'] === 'customers/data_request').at(-1)!;
    expect(JSON.parse(gdpr.raw.toString())).toEqual({
      shop_id: '00000000-0000-0000-0000-000000000000', shop_domain: SAMPLE_SHOP_DOMAIN,
      customer: { id: '00000000-0000-0000-0000-000000000003', email: 'buyer@example.com', phone: '+1 555 0100' },
      orders_requested: true, data_request: { id: SAMPLE_GDPR_REQUEST_ID },
    });
  }, 60_000);

  it('samples have the shape of real deliveries: an order taken, paid and refunded, with its new customer', async () => {
    const s = await storeWithApp(h, { scopes: ['read_orders', 'write_orders', 'read_customers'], tier: 'enterprise' });
    const product = await insertProduct(h, s.merchant.storeId, { price: 2500 });
    const taken = await takeOrder(h, s.merchant.token, orderBody(product, { paymentMethod: 'card', shipping_line: { title: 'Std', code: 'std', price: '5.00' } }));
    const refund = await h.req('POST', `/orders/${taken.orderId}/refund`, { token: s.merchant.token, body: { reason: 'customer', restock: true } });
    expect(refund.statusCode, refund.body).toBe(200);
    const real = new Map((await events(h, s.merchant.storeId)).map((e) => [e.topic, e.payload]));
    const topics = ['orders/create', 'customers/create', 'refunds/create', 'orders/updated', 'orders/cancelled'];
    expect([...real.keys()]).toEqual(expect.arrayContaining(topics));

    const app = await developerApp();
    for (const topic of topics) {
      const before = rx.received.length;
      expect((await trigger(app, { topic, address: `${rx.url}/shape` })).statusCode).toBe(200);
      expect(shapeDiff(JSON.parse(rx.received[before].raw.toString()), real.get(topic)), topic).toEqual([]);
    }
  }, 60_000);

  it('a receiver answering 500: recorded as failed, and never retried', async () => {
    const app = await developerApp();
    const res = await trigger(app, { topic: 'products/update', address: `${rx.url}/fail-once` });
    expect(res.statusCode).toBe(200);
    const { delivery, outcome } = res.json().data;
    expect(outcome).toEqual({ success: false, status: 'failed', responseStatus: 500, durationMs: expect.any(Number), error: null });
    expect(delivery).toMatchObject({ status: 'failed', attemptCount: 1, nextAttemptAt: null, responseStatus: 500, responseBody: 'receiver broke' });

    // A 500 of a real delivery is retried 60 s later (app-api.md Retries); a test delivery is not.
    await h.advance(3600);
    await runDeliveries(h);
    expect(rx.byWebhookId(delivery.webhookId)).toHaveLength(1);
    const again = (await h.req('GET', `/apps/developer/${app.appId}/webhook-deliveries/${delivery.deliveryId}`, { token: app.developerToken })).json().data.delivery;
    expect(again).toMatchObject({ status: 'failed', attemptCount: 1, attempts: [{ attempt: 1, responseStatus: 500 }] });
  });

  it('no answer at all (nothing listens): failed with the network error, not retried', async () => {
    const app = await developerApp();
    const closed = await startReceiver();
    const address = `${closed.url}/gone`;
    await closed.close();
    const { outcome, delivery } = (await trigger(app, { topic: 'customers/create', address })).json().data;
    expect(outcome).toMatchObject({ success: false, status: 'failed', responseStatus: null, error: expect.stringMatching(/^network_error: /) });
    expect(delivery.nextAttemptAt).toBeNull();
  });

  it("in the app's delivery log and stats (C8.5, C8.6), newest first, with the log's filters", async () => {
    const app = await developerApp();
    const ok = (await trigger(app, { topic: 'orders/paid', address: `${rx.url}/ok` })).json().data.delivery;
    const failed = (await trigger(app, { topic: 'orders/create', address: `${rx.url}/fail` })).json().data.delivery;
    const log = await h.req('GET', `/apps/developer/${app.appId}/webhook-deliveries`, { token: app.developerToken });
    expect(log.statusCode).toBe(200);
    expect(log.json().data.deliveries.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([failed.deliveryId, ok.deliveryId]);
    expect(log.json().data.deliveries[1]).toEqual(ok);
    const paid = await h.req('GET', `/apps/developer/${app.appId}/webhook-deliveries?topic=orders/paid&status=success`, { token: app.developerToken });
    expect(paid.json().data.deliveries.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([ok.deliveryId]);
    const stats = await h.req('GET', `/apps/developer/${app.appId}/webhook-deliveries/stats`, { token: app.developerToken });
    expect(stats.json().data).toEqual({ total: 2, success: 1, failed: 1, pending: 0, retrying: 0 });
    // Another app's log does not show them.
    const other = await developerApp();
    expect((await h.req('GET', `/apps/developer/${other.appId}/webhook-deliveries/stats`, { token: other.developerToken })).json().data.total).toBe(0);
  });

  it('redeliver (C8.5, C14.10) sends the same test delivery once more, same webhook id and body', async () => {
    const app = await developerApp();
    const { delivery } = (await trigger(app, { topic: 'inventory_levels/update', address: `${rx.url}/fail-redeliver` })).json().data;
    const res = await h.req('POST', `/apps/developer/${app.appId}/webhook-deliveries/${delivery.deliveryId}/redeliver`, { token: app.developerToken });
    expect(res.statusCode).toBe(202);
    await runDeliveries(h);
    const sent = rx.byWebhookId(delivery.webhookId);
    expect(sent.map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['1', '2']);
    expect(sent[1].raw.equals(sent[0].raw)).toBe(true);
  });

  it('bodies are pruned after the retention period like every delivery (C8.10); the record stays', async () => {
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const { delivery } = (await trigger(app, { topic: 'shop/redact', address: `${rx.url}/retention` })).json().data;
    await h.advance((h.config.deliveryRetentionDays + 1) * 86_400);
    await h.deps.jobs.run('webhook-retention');
    // The developer's JWT of a month ago has expired: log in again.
    const token = (await h.req('POST', '/auth/login', { body: { email: partner.email, password: 'correct-horse' } })).json().data.token;
    const kept = (await h.req('GET', `/apps/developer/${app.appId}/webhook-deliveries/${delivery.deliveryId}`, { token })).json().data.delivery;
    expect(kept).toMatchObject({ deliveryId: delivery.deliveryId, status: 'success', requestBody: null, responseBody: null, attemptCount: 1 });
  });

  it(`at most ${TEST_DELIVERIES_PER_MINUTE} a minute per app: then 429 with Retry-After, until the minute has passed`, async () => {
    const app = await developerApp();
    for (let i = 0; i < TEST_DELIVERIES_PER_MINUTE; i++) {
      const res = await trigger(app, { topic: 'products/create', address: `${rx.url}/bound` });
      expect(res.statusCode).toBe(200);
    }
    const refused = await trigger(app, { topic: 'products/create', address: `${rx.url}/bound` });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.json()).toEqual(envelopeError(429, `At most ${TEST_DELIVERIES_PER_MINUTE} test deliveries a minute per app`));
    // Another app of the same developer is not held back.
    expect((await trigger(await developerApp(), { topic: 'products/create', address: `${rx.url}/bound` })).statusCode).toBe(200);
    await h.advance(61);
    expect((await trigger(app, { topic: 'products/create', address: `${rx.url}/bound` })).statusCode).toBe(200);
  }, 60_000);
});

describe('refusals', () => {
  it('a topic the platform does not deliver: 422; a missing or non-string field: 400; nothing sent or recorded', async () => {
    const app = await developerApp();
    const before = rx.received.length;
    for (const topic of ['orders/created', 'app/uninstalled', '']) {
      const res = await trigger(app, { topic, address: `${rx.url}/x` });
      expect(res.statusCode, topic).toBe(422);
      expect(res.json()).toEqual(envelopeError(422, 'topic is not a topic the platform delivers'));
    }
    // The rate request has a topic header too: the refusal says what it is and what sends it.
    const rates = await trigger(app, { topic: 'shipping/rates', address: `${rx.url}/x` });
    expect(rates.statusCode).toBe(422);
    expect(rates.json().message).toMatch(/^shipping\/rates is a shipping rate request \(C15\.3\), not a webhook: a checkout .* sends it to extensions\.shipping\.ratesUrl/);
    expect(rates.json()).toMatchObject({ status: 422, state: 'error', data: null });
    expect((await trigger(app, { address: `${rx.url}/x` })).statusCode).toBe(400);
    expect((await trigger(app, { topic: 'orders/create' })).statusCode).toBe(400);
    expect((await trigger(app, { topic: 7, address: `${rx.url}/x` })).statusCode).toBe(400);
    expect(rx.received.length).toBe(before);
    expect((await h.req('GET', `/apps/developer/${app.appId}/webhook-deliveries/stats`, { token: app.developerToken })).json().data.total).toBe(0);
  });

  it('an address that is not an http(s) URL: 422 with the reason', async () => {
    const app = await developerApp();
    for (const [address, reason] of [['not a url', 'must be an absolute URL'], ['ftp://example.com/x', 'must be an http or https URL'], ['https://u:p@example.com/', 'must not carry credentials']]) {
      const res = await trigger(app, { topic: 'orders/create', address });
      expect(res.statusCode, address).toBe(422);
      expect(res.json()).toEqual(envelopeError(422, `address ${reason}`));
    }
  });

  it('C8.9 with private addresses not allowed: http, loopback, private, link-local, metadata, IPv6 forms and unresolvable names are refused', async () => {
    const app = await developerApp(strict);
    const cases: [string, string][] = [
      ['http://example.com/hooks', 'must be an https URL'],
      [`https://127.0.0.1:${rx.port}/hooks`, 'points at a private address'],
      ['https://10.0.0.1/hooks', 'points at a private address'],
      ['https://192.168.1.20/hooks', 'points at a private address'],
      ['https://169.254.169.254/latest/meta-data', 'points at a private address'],
      ['https://[::1]/hooks', 'points at a private address'],
      ['https://[::ffff:127.0.0.1]/hooks', 'points at a private address'],
      ['https://[fd00:ec2::254]/hooks', 'points at a private address'],
      ['https://localhost/hooks', 'points at a private address'],
      ['https://metadata.google.internal/hooks', 'points at a private address'],
      ['https://no-such-host.invalid/hooks', 'host does not resolve'],
    ];
    const before = rx.received.length;
    const wrong: string[] = [];
    for (const [address, reason] of cases) {
      const res = await trigger(app, { topic: 'orders/create', address }, strict);
      if (res.statusCode !== 422 || JSON.stringify(res.json()) !== JSON.stringify(envelopeError(422, `address ${reason}`))) wrong.push(`${address}: ${res.statusCode} ${res.body}`);
    }
    expect(wrong).toEqual([]);
    expect(rx.received.length).toBe(before);
    expect((await strict.req('GET', `/apps/developer/${app.appId}/webhook-deliveries/stats`, { token: app.developerToken })).json().data.total).toBe(0);
  });

  it("another developer's app: 403; an unknown app: 404 (C3.2, as every developer per-app route)", async () => {
    const app = await developerApp();
    const intruder = await signupPartner(h);
    const theirs = await h.req('POST', `/apps/developer/${app.appId}/webhooks/test`, { token: intruder.token, body: { topic: 'orders/create', address: `${rx.url}/x` } });
    expect(theirs.statusCode).toBe(403);
    expect(theirs.json()).toEqual(envelopeError(403, 'You do not own this app'));
    for (const id of ['00000000-0000-0000-0000-0000000000aa', 'not-a-uuid']) {
      const res = await h.req('POST', `/apps/developer/${id}/webhooks/test`, { token: intruder.token, body: { topic: 'orders/create', address: `${rx.url}/x` } });
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual(envelopeError(404, 'App not found'));
    }
    expect((await h.req('GET', `/apps/developer/${app.appId}/webhook-deliveries/stats`, { token: app.developerToken })).json().data.total).toBe(0);
  });
});
