// GDPR requests (app-api.md GDPR request, GDPR routes, GDPR webhooks; C9.1, C9.2, C9.4, C14.8,
// C14.10, C14.11): the merchant routes, the webhooks at a real receiver (bodies, headers,
// signatures, no retry), the app routes and their per-app states, the list and detail, and the
// platform's own erasure once a customers/redact request is done. Deadlines: gdpr-deadlines.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { createTestApp, installApp, type Merchant, operatorToken, signupMerchant, signupPartner, staffToken, storeWithApp } from './helpers/actors.js';
import { gdprAppBody } from './helpers/gdpr.js';
import { startReceiver, verifySignature, type Receiver } from './fixtures/webhook-receiver.js';
import { gdprDispatcher } from '../src/gdpr/gdpr.dispatch.js';

let h: Harness;
let rx: Receiver;
/** Per path: the status the receiver answers (200 when not set). */
const statusOf: Record<string, number> = {};
beforeAll(async () => {
  h = await createWebhookHarness();
  rx = await startReceiver((req) => ({ status: statusOf[req.path] ?? 200, body: 'ok' }));
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAY_MS = 86_400_000;
let seq = 0;

/** Waits for the background dispatches (webhooks go out after the response). */
const settle = () => gdprDispatcher(h.deps).settle();

async function gdprStore(extra: Record<string, unknown> = {}) {
  const tag = `s${++seq}`;
  const s = await storeWithApp(h, gdprAppBody(rx.url, tag, extra));
  return { ...s, tag };
}

/** A second app, of another developer, installed on the same store. */
async function secondApp(merchant: Merchant, body: Record<string, unknown>) {
  const partner = await signupPartner(h);
  const app = await createTestApp(h, partner.token, body);
  const installed = await installApp(h, merchant, app);
  return { partner, app, ...installed };
}

const received = (path: string) => rx.received.filter((r) => r.path === path);
const bodyOf = (r: { raw: Buffer }) => JSON.parse(r.raw.toString('utf8'));

async function customer(merchant: Merchant, extra: Record<string, unknown> = {}) {
  const email = `ada-${++seq}@example.com`;
  const res = await h.req('POST', '/customers', {
    token: merchant.token,
    body: { email, first_name: 'Ada', last_name: 'Lovelace', phone: '+15550101', addresses: [{ address1: '1 Main St', city: 'London', country: 'GB', zip: 'N1', phone: '+15550101' }], ...extra },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string; email: string };
}

async function order(merchant: Merchant, email: string) {
  const res = await h.req('POST', '/orders', {
    token: merchant.token,
    body: {
      customer: { email, first_name: 'Ada', last_name: 'Lovelace', phone: '+15550101' },
      line_items: [{ title: 'Print', price: '20.00', quantity: 2 }],
      shipping_address: { first_name: 'Ada', last_name: 'Lovelace', address1: '1 Main St', city: 'London', province: 'Greater London', country: 'GB', zip: 'N1 1AA', phone: '+4420' },
      paymentMethod: 'card',
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { orderId: string; totalPrice: string };
}

const post = (token: string, path: string, body?: unknown) => h.req('POST', `/apps/gdpr/${path}`, { token, body });
const detail = async (token: string, id: string) => {
  const res = await h.req('GET', `/apps/gdpr/requests/${id}`, { token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
};

describe('C9.1 merchant routes and the webhooks (app-api.md GDPR webhooks)', () => {
  it('data-request: 201 envelope; exact body, headers and client-secret signature at every target; logged as gdpr; dispatched', async () => {
    const s = await gdprStore({ extensions: { webhooks: [{ topic: 'customers/data_request', uri: `${rx.url}/manifest-data` }] } });
    const sub = await h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { topic: 'customers/data_request', address: `${rx.url}/${s.tag}/sub` } });
    expect(sub.statusCode, sub.body).toBe(201);
    const subSecret = sub.json().webhook.secret;
    // Another topic's subscription gets nothing.
    await h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { topic: 'customers/redact', address: `${rx.url}/${s.tag}/other` } });
    const c = await customer(s.merchant);

    const before = h.clock.now().getTime();
    const res = await post(s.merchant.token, 'data-request', { customerId: c.id, customerEmail: c.email, customerPhone: '+15550199' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      status: 201, state: 'success', message: null, count: null, pagination: null,
      data: {
        requestId: expect.stringMatching(UUID), requestType: 'data_request', status: 'pending',
        acknowledgeDeadline: expect.stringMatching(ISO), completionDeadline: expect.stringMatching(ISO), appsNotified: 1,
      },
    });
    const { requestId, acknowledgeDeadline, completionDeadline } = body.data;
    // app-api.md Limits: 30 and 90 days.
    expect(Date.parse(acknowledgeDeadline) - before).toBeGreaterThanOrEqual(30 * DAY_MS);
    expect(Date.parse(acknowledgeDeadline) - before).toBeLessThan(30 * DAY_MS + 60_000);
    expect(Date.parse(completionDeadline) - Date.parse(acknowledgeDeadline)).toBe(60 * DAY_MS);
    await settle();

    const expected = {
      shop_id: s.merchant.storeId, shop_domain: s.merchant.slug,
      customer: { id: c.id, email: c.email, phone: '+15550199' }, orders_requested: true, data_request: { id: requestId },
    };
    const paths = [`/${s.tag}/data`, `/${s.tag}/sub`, '/manifest-data'];
    const webhookIds = new Set<string>();
    for (const path of paths) {
      const got = received(path).filter((r) => r.headers['x-svc-gdpr-request-id'] === requestId);
      expect(got, path).toHaveLength(1);
      const [r] = got;
      expect(bodyOf(r)).toEqual(expected);
      // C9.4: the app's client secret, also for the API subscription (not the subscription's own secret).
      expect(verifySignature(r.raw, r.headers['x-svc-hmac-sha256'], s.app.clientSecret), path).toBe(true);
      expect(verifySignature(r.raw, r.headers['x-svc-hmac-sha256'], subSecret)).toBe(false);
      expect(r.headers).toMatchObject({
        'content-type': 'application/json', 'x-svc-topic': 'customers/data_request', 'x-svc-shop-domain': s.merchant.slug,
        'x-svc-api-version': '2026-06', 'x-svc-delivery-attempt': '1', 'x-svc-gdpr-request-id': requestId,
      });
      expect(r.headers['x-svc-webhook-id']).toMatch(UUID);
      webhookIds.add(r.headers['x-svc-webhook-id'] as string);
    }
    expect(webhookIds.size).toBe(3);
    expect(received(`/${s.tag}/other`)).toHaveLength(0);

    // C8.5: in the developer's delivery log with source gdpr.
    const log = (await h.req('GET', `/apps/developer/${s.app.appId}/webhook-deliveries?topic=customers/data_request`, { token: s.partner.token })).json();
    expect(log.data.deliveries).toHaveLength(3);
    for (const d of log.data.deliveries) {
      expect(d).toMatchObject({ source: 'gdpr', topic: 'customers/data_request', status: 'success', attemptCount: 1, storeId: s.merchant.storeId });
      expect(d.requestHeaders['X-SVC-Gdpr-Request-Id']).toBe(requestId);
      expect(JSON.parse(d.requestBody)).toEqual(expected);
    }

    // pending -> dispatched once sent.
    const view = await detail(s.merchant.token, requestId);
    expect(view).toEqual({
      requestId, requestType: 'data_request', status: 'dispatched', customerId: c.id, customerEmail: c.email,
      requestedAt: expect.stringMatching(ISO), acknowledgeDeadline, completionDeadline, completedAt: null,
      appAcknowledgments: [{ appId: s.app.appId, appName: expect.any(String), status: 'pending', acknowledgedAt: null, completedAt: null, errorMessage: null, dataExportUrl: null }],
      dataExportUrl: null, metadata: { ordersRequested: true },
    });
  });

  it('data-request: ordersRequested false is sent as orders_requested; a customer by email alone; phone and id from the customer record', async () => {
    const s = await gdprStore();
    const c = await customer(s.merchant);
    const res = await post(s.merchant.token, 'data-request', { customerEmail: c.email.toUpperCase(), ordersRequested: false });
    expect(res.statusCode, res.body).toBe(201);
    await settle();
    const [r] = received(`/${s.tag}/data`);
    expect(bodyOf(r)).toEqual({
      shop_id: s.merchant.storeId, shop_domain: s.merchant.slug,
      customer: { id: c.id, email: c.email.toUpperCase(), phone: '+15550101' }, orders_requested: false, data_request: { id: res.json().data.requestId },
    });
    expect((await detail(s.merchant.token, res.json().data.requestId)).metadata).toEqual({ ordersRequested: false });

    // Someone the store has no customer record of: customer.id null.
    const stranger = await post(s.merchant.token, 'data-request', { customerEmail: 'stranger@example.com' });
    expect(stranger.statusCode).toBe(201);
    await settle();
    const got = received(`/${s.tag}/data`).find((x) => x.headers['x-svc-gdpr-request-id'] === stranger.json().data.requestId)!;
    expect(bodyOf(got).customer).toEqual({ id: null, email: 'stranger@example.com', phone: null });
  });

  it('customer-redact: ordersToRedact count; orders_to_redact lists the customer\'s order ids; customer { id, email } only', async () => {
    const s = await gdprStore();
    const c = await customer(s.merchant);
    const o1 = await order(s.merchant, c.email);
    const o2 = await order(s.merchant, c.email);
    const other = await customer(s.merchant);
    await order(s.merchant, other.email);

    const res = await post(s.merchant.token, 'customer-redact', { customerId: c.id, customerEmail: c.email });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toEqual({
      requestId: expect.stringMatching(UUID), requestType: 'customer_redact', status: 'pending',
      acknowledgeDeadline: expect.stringMatching(ISO), completionDeadline: expect.stringMatching(ISO), appsNotified: 1, ordersToRedact: 2,
    });
    await settle();
    const [r] = received(`/${s.tag}/redact`);
    expect(r.headers['x-svc-topic']).toBe('customers/redact');
    expect(bodyOf(r)).toEqual({
      shop_id: s.merchant.storeId, shop_domain: s.merchant.slug, customer: { id: c.id, email: c.email }, orders_to_redact: [o1.orderId, o2.orderId],
    });
    expect(verifySignature(r.raw, r.headers['x-svc-hmac-sha256'], s.app.clientSecret)).toBe(true);
  });

  it('shop-redact: no body; exactly { shop_id, shop_domain }; every active app counts, with or without a URL; an uninstalled app is not notified', async () => {
    const s = await gdprStore();
    // An app with no gdprUrls and no subscription: still notified (counted, and owes an answer).
    const silent = await secondApp(s.merchant, { scopes: ['read_shop'] });
    const gone = await secondApp(s.merchant, gdprAppBody(rx.url, `${s.tag}-gone`));
    expect((await h.req('DELETE', `/apps/installations/${gone.installationId}`, { token: s.merchant.token })).statusCode).toBe(200);

    const res = await h.req('POST', '/apps/gdpr/shop-redact', { token: s.merchant.token });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toEqual({
      requestId: expect.stringMatching(UUID), requestType: 'shop_redact', status: 'pending',
      acknowledgeDeadline: expect.stringMatching(ISO), completionDeadline: expect.stringMatching(ISO), appsNotified: 2,
    });
    // An empty JSON body is no body.
    const empty = await h.req('POST', '/apps/gdpr/shop-redact', { token: s.merchant.token, payload: '', headers: { 'content-type': 'application/json' } });
    expect(empty.statusCode, empty.body).toBe(201);
    await settle();
    const got = received(`/${s.tag}/shop`);
    expect(got).toHaveLength(2);
    expect(bodyOf(got[0])).toEqual({ shop_id: s.merchant.storeId, shop_domain: s.merchant.slug });
    expect(got[0].raw.toString('utf8')).toBe(JSON.stringify({ shop_id: s.merchant.storeId, shop_domain: s.merchant.slug }));
    expect(received(`/${s.tag}-gone/shop`)).toHaveLength(0);
    const view = await detail(s.merchant.token, res.json().data.requestId);
    expect(view).toMatchObject({ requestType: 'shop_redact', status: 'dispatched', customerId: null, customerEmail: null, metadata: {} });
    expect(view.appAcknowledgments.map((a: any) => a.appId)).toEqual([s.app.appId, silent.app.appId]);
  });

  it('a store with no app: appsNotified 0, and the request is completed once dispatched', async () => {
    const m = await signupMerchant(h);
    const res = await h.req('POST', '/apps/gdpr/shop-redact', { token: m.token });
    expect(res.json().data).toMatchObject({ status: 'pending', appsNotified: 0 });
    await settle();
    expect(await detail(m.token, res.json().data.requestId)).toMatchObject({ status: 'completed', completedAt: expect.stringMatching(ISO), appAcknowledgments: [] });
  });

  it('webhooks go out after the response: a hanging receiver does not hold the request, which stays pending until sent', async () => {
    const slow = await startReceiver(() => 'hang');
    try {
      const s = await storeWithApp(h, { scopes: ['read_shop'], gdprUrls: { shopRedact: `${slow.url}/shop` } });
      const res = await h.req('POST', '/apps/gdpr/shop-redact', { token: s.merchant.token });
      expect(res.statusCode).toBe(201);
      const { requestId } = res.json().data;
      for (let i = 0; i < 800 && slow.received.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(slow.received).toHaveLength(1);
      expect((await detail(s.merchant.token, requestId)).status).toBe('pending');
      // The connection drops: a failed delivery still counts as sent.
      await slow.close();
      await settle();
      expect((await detail(s.merchant.token, requestId)).status).toBe('dispatched');
      const { rows } = await h.db.query(`SELECT status, attempt_count FROM webhook_deliveries WHERE request_headers->>'X-SVC-Gdpr-Request-Id' = $1`, [requestId]);
      expect(rows).toEqual([{ status: 'failed', attempt_count: 1 }]);
    } finally {
      await slow.close().catch(() => {});
    }
  });

  it('Retries 5: a failed GDPR delivery is never retried; the request is dispatched and the app acknowledges all the same', async () => {
    const s = await gdprStore();
    statusOf[`/${s.tag}/data`] = 503;
    const res = await post(s.merchant.token, 'data-request', { customerEmail: 'x@example.com' });
    const { requestId } = res.json().data;
    await settle();
    expect(received(`/${s.tag}/data`)).toHaveLength(1);
    const log = (await h.req('GET', `/apps/developer/${s.app.appId}/webhook-deliveries`, { token: s.partner.token })).json().data.deliveries;
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ source: 'gdpr', status: 'failed', attemptCount: 1, responseStatus: 503, nextAttemptAt: null });
    // Well past every retry delay, the delivery job finds nothing of it to attempt.
    await h.advance(3600);
    await h.deps.jobs.run('webhook-deliveries');
    expect(received(`/${s.tag}/data`)).toHaveLength(1);
    expect((await detail(s.merchant.token, requestId)).status).toBe('dispatched');

    const ack = await post(s.accessToken, `acknowledge/${requestId}`);
    expect(ack.statusCode, ack.body).toBe(200);
    expect(ack.json().data.appAcknowledgments).toEqual([expect.objectContaining({ appId: s.app.appId, status: 'acknowledged', acknowledgedAt: expect.stringMatching(ISO) })]);
    expect(ack.json().data.status).toBe('acknowledged');
  });

  it('validation: 400 envelope for a missing customer, a bad email or a wrong type; 404 for a customer id of no customer of the store', async () => {
    const s = await gdprStore();
    const elsewhere = await customer((await gdprStore()).merchant);
    const cases: [string, unknown, number][] = [
      ['data-request', {}, 400],
      ['data-request', { customerEmail: 'not-an-email' }, 400],
      ['data-request', { customerEmail: 'a@example.com', ordersRequested: 'maybe' }, 400],
      ['customer-redact', { customerPhone: '+1555' }, 400],
      ['customer-redact', { customerEmail: 42 }, 400],
      ['customer-redact', { customerId: elsewhere.id }, 404],
      ['data-request', { customerId: 'nope' }, 404],
    ];
    for (const [path, body, status] of cases) {
      const res = await post(s.merchant.token, path, body);
      expect(res.statusCode, `${path} ${JSON.stringify(body)}`).toBe(status);
      expect(res.json()).toEqual({ status, state: 'error', message: expect.any(String), data: null, count: null, pagination: null });
    }
    const malformed = await h.req('POST', '/apps/gdpr/data-request', { token: s.merchant.token, payload: '{"customerEmail":', headers: { 'content-type': 'application/json' } });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().state).toBe('error');
    expect((await h.req('GET', '/apps/gdpr/requests', { token: s.merchant.token })).json().count).toBe(0);
  });

  it('merchant routes: 401 without or with a bad token, 403 for a partner; staff may; the operator names the store', async () => {
    const s = await gdprStore();
    for (const token of [undefined, 'not-a-jwt']) {
      const res = await h.req('POST', '/apps/gdpr/shop-redact', { token });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ status: 401, state: 'error', data: null });
    }
    expect((await h.req('GET', '/apps/gdpr/requests', { token: s.partner.token })).statusCode).toBe(403);
    // The app's access token is no merchant credential.
    expect((await h.req('GET', '/apps/gdpr/requests', { token: s.accessToken })).statusCode).toBe(401);

    const op = await operatorToken(h);
    expect((await h.req('POST', '/apps/gdpr/shop-redact', { token: op })).statusCode).toBe(400);
    const byOp = await h.req('POST', `/apps/gdpr/shop-redact?storeId=${s.merchant.storeId}`, { token: op });
    expect(byOp.statusCode, byOp.body).toBe(201);
    const byOpBody = await post(op, 'data-request', { storeId: s.merchant.storeId, customerEmail: 'a@example.com' });
    expect(byOpBody.statusCode, byOpBody.body).toBe(201);
    await settle();
    expect((await h.req('GET', `/apps/gdpr/requests/${byOp.json().data.requestId}`, { token: op })).statusCode).toBe(200);
    expect((await h.req('GET', `/apps/gdpr/requests?storeId=${s.merchant.storeId}`, { token: op })).json().count).toBe(2);

    const staff = await staffToken(h, s.merchant, 'MANAGER');
    expect((await h.req('GET', '/apps/gdpr/requests', { token: staff })).json().count).toBe(2);
  });
});

describe('C9.2 app routes: acknowledge and complete', () => {
  it('per-app states and the request state: acknowledged when every app acknowledged, completed when every app completed', async () => {
    const s = await gdprStore();
    const b = await secondApp(s.merchant, gdprAppBody(rx.url, `${s.tag}-b`));
    const res = await post(s.merchant.token, 'data-request', { customerEmail: 'ada@example.com' });
    expect(res.json().data.appsNotified).toBe(2);
    const { requestId } = res.json().data;
    await settle();
    expect(received(`/${s.tag}/data`)).toHaveLength(1);
    expect(received(`/${s.tag}-b/data`)).toHaveLength(1);

    // dispatched -> (A acknowledges) still dispatched -> (B acknowledges) acknowledged
    const a1 = await post(s.accessToken, `acknowledge/${requestId}`);
    expect(a1.statusCode, a1.body).toBe(200);
    expect(a1.json()).toMatchObject({ status: 200, state: 'success', message: null, count: null, pagination: null });
    expect(a1.json().data).toMatchObject({ requestId, status: 'dispatched' });
    // The app sees its own state only.
    expect(a1.json().data.appAcknowledgments).toEqual([
      { appId: s.app.appId, appName: expect.any(String), status: 'acknowledged', acknowledgedAt: expect.stringMatching(ISO), completedAt: null, errorMessage: null, dataExportUrl: null },
    ]);
    const ackedAt = a1.json().data.appAcknowledgments[0].acknowledgedAt;
    // Repeating is harmless and keeps the first time.
    await h.advance(60);
    const again = await post(s.accessToken, `acknowledge/${requestId}`, {});
    expect(again.json().data.appAcknowledgments[0].acknowledgedAt).toBe(ackedAt);

    const b1 = await post(b.accessToken, `acknowledge/${requestId}`);
    expect(b1.json().data.status).toBe('acknowledged');
    expect((await detail(s.merchant.token, requestId)).status).toBe('acknowledged');

    // acknowledged -> (A completes with its export) still acknowledged -> (B completes) completed
    const c1 = await post(s.accessToken, `complete/${requestId}`, { dataExportUrl: 'https://app-a.example.com/exports/1.zip' });
    expect(c1.statusCode, c1.body).toBe(200);
    expect(c1.json().data).toMatchObject({ status: 'acknowledged', completedAt: null, dataExportUrl: 'https://app-a.example.com/exports/1.zip' });
    // Found in review: B's answer carried A's export link (the request's latest), a signed URL to
    // the customer's data handed to another developer. Each app sees its own export only.
    const b2 = await post(b.accessToken, `acknowledge/${requestId}`);
    expect(b2.json().data.dataExportUrl).toBeNull();
    expect(b2.body).not.toContain('app-a.example.com');
    const c2 = await post(b.accessToken, `complete/${requestId}`, { dataExportUrl: 'https://app-b.example.com/b.zip' });
    expect(c2.json().data).toMatchObject({ status: 'completed', completedAt: expect.stringMatching(ISO), dataExportUrl: 'https://app-b.example.com/b.zip' });
    const a2 = await post(s.accessToken, `acknowledge/${requestId}`);
    expect(a2.json().data.dataExportUrl).toBe('https://app-a.example.com/exports/1.zip');
    expect(a2.body).not.toContain('app-b.example.com');

    // The merchant sees every app's export, each with its app, and the latest on the request.
    const view = await detail(s.merchant.token, requestId);
    expect(view).toMatchObject({ status: 'completed', completedAt: expect.stringMatching(ISO), dataExportUrl: 'https://app-b.example.com/b.zip' });
    expect(view.appAcknowledgments).toEqual([
      { appId: s.app.appId, appName: expect.any(String), status: 'completed', acknowledgedAt: ackedAt, completedAt: expect.stringMatching(ISO), errorMessage: null, dataExportUrl: 'https://app-a.example.com/exports/1.zip' },
      { appId: b.app.appId, appName: expect.any(String), status: 'completed', acknowledgedAt: expect.stringMatching(ISO), completedAt: expect.stringMatching(ISO), errorMessage: null, dataExportUrl: 'https://app-b.example.com/b.zip' },
    ]);
    // Completing again changes nothing.
    expect((await post(b.accessToken, `complete/${requestId}`)).json().data.status).toBe('completed');
  });

  it('complete straight from pending sets acknowledgedAt; dataExportUrl must be an absolute URL', async () => {
    const s = await gdprStore();
    const { requestId } = (await post(s.merchant.token, 'data-request', { customerEmail: 'grace@example.com' })).json().data;
    await settle();
    const bad = await post(s.accessToken, `complete/${requestId}`, { dataExportUrl: 'not a url' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ status: 400, state: 'error', data: null });
    const res = await post(s.accessToken, `complete/${requestId}`, { dataExportUrl: 'https://app.example.com/export.zip' });
    expect(res.statusCode, res.body).toBe(200);
    const [mine] = res.json().data.appAcknowledgments;
    expect(mine).toMatchObject({ status: 'completed', acknowledgedAt: expect.stringMatching(ISO), completedAt: expect.stringMatching(ISO) });
    expect(mine.acknowledgedAt).toBe(mine.completedAt);
    expect(res.json().data).toMatchObject({ status: 'completed', dataExportUrl: 'https://app.example.com/export.zip' });
    // Acknowledging after completing changes nothing.
    expect((await post(s.accessToken, `acknowledge/${requestId}`)).json().data.appAcknowledgments[0].status).toBe('completed');
  });

  it('401 without or with a bad token; 404 envelope for an unknown request, another store\'s, or one the app was not notified of', async () => {
    const s = await gdprStore();
    const { requestId } = (await post(s.merchant.token, 'data-request', { customerEmail: 'ada@example.com' })).json().data;
    await settle();
    for (const token of [undefined, 'svcat_bogus']) {
      const res = await h.req('POST', `/apps/gdpr/acknowledge/${requestId}`, { token });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ status: 401, state: 'error', message: expect.any(String), data: null, count: null, pagination: null });
    }
    // A merchant JWT is not an app token.
    expect((await h.req('POST', `/apps/gdpr/acknowledge/${requestId}`, { token: s.merchant.token })).statusCode).toBe(401);

    const late = await secondApp(s.merchant, gdprAppBody(rx.url, `${s.tag}-late`)); // installed after the request
    const elsewhere = await gdprStore(); // the same kind of app, on another store
    const cases: [string, string][] = [
      [late.accessToken, requestId],
      [elsewhere.accessToken, requestId],
      [s.accessToken, '0190a0b0-0000-7000-8000-000000000000'],
      [s.accessToken, 'not-a-uuid'],
    ];
    for (const [token, id] of cases) {
      for (const action of ['acknowledge', 'complete']) {
        const res = await post(token, `${action}/${id}`);
        expect(res.statusCode, `${action} ${id}`).toBe(404);
        expect(res.json()).toEqual({ status: 404, state: 'error', message: expect.any(String), data: null, count: null, pagination: null });
      }
    }
    // Nothing changed for the app that was notified.
    expect((await detail(s.merchant.token, requestId)).appAcknowledgments.map((a: any) => [a.appId, a.status])).toEqual([[s.app.appId, 'pending']]);
  });

  it('an uninstalled app\'s token is refused (401)', async () => {
    const s = await gdprStore();
    const { requestId } = (await post(s.merchant.token, 'data-request', { customerEmail: 'ada@example.com' })).json().data;
    await settle();
    await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.merchant.token });
    expect((await post(s.accessToken, `acknowledge/${requestId}`)).statusCode).toBe(401);
  });
});

describe('C14.8 list and detail', () => {
  it('lists newest first, 20 a page by default, filters by status and requestType; 400 for an unknown filter value', async () => {
    const m = await signupMerchant(h);
    const ids: string[] = [];
    for (let i = 0; i < 21; i++) {
      const res = i % 3 === 0
        ? await h.req('POST', '/apps/gdpr/shop-redact', { token: m.token })
        : await post(m.token, 'data-request', { customerEmail: `p${i}@example.com` });
      ids.push(res.json().data.requestId);
    }
    await settle();
    const first = (await h.req('GET', '/apps/gdpr/requests', { token: m.token })).json();
    expect(first).toMatchObject({ status: 200, state: 'success', message: null, count: 21, pagination: { page: 1, limit: 20, totalPages: 2, resultCount: 20, totalResult: 21 } });
    expect(first.data.requests.map((r: any) => r.requestId)).toEqual([...ids].reverse().slice(0, 20));
    expect(first.data.requests[0]).toEqual(expect.objectContaining({ requestType: expect.any(String), status: 'completed', appAcknowledgments: [], metadata: expect.any(Object) }));
    const second = (await h.req('GET', '/apps/gdpr/requests?page=2', { token: m.token })).json();
    expect(second.data.requests.map((r: any) => r.requestId)).toEqual([ids[0]]);

    const shops = (await h.req('GET', '/apps/gdpr/requests?requestType=shop_redact&limit=50', { token: m.token })).json();
    expect(shops.count).toBe(7);
    expect(shops.data.requests.every((r: any) => r.requestType === 'shop_redact')).toBe(true);
    expect((await h.req('GET', '/apps/gdpr/requests?status=completed&requestType=data_request', { token: m.token })).json().count).toBe(14);
    expect((await h.req('GET', '/apps/gdpr/requests?status=pending', { token: m.token })).json().count).toBe(0);
    for (const q of ['status=done', 'requestType=everything']) {
      const res = await h.req('GET', `/apps/gdpr/requests?${q}`, { token: m.token });
      expect(res.statusCode, q).toBe(400);
      expect(res.json().state).toBe('error');
    }
  });

  it('detail: another store\'s request 403, an unknown one 404', async () => {
    const a = await signupMerchant(h);
    const b = await signupMerchant(h);
    const { requestId } = (await h.req('POST', '/apps/gdpr/shop-redact', { token: a.token })).json().data;
    await settle();
    expect((await h.req('GET', `/apps/gdpr/requests/${requestId}`, { token: b.token })).statusCode).toBe(403);
    expect((await h.req('GET', '/apps/gdpr/requests', { token: b.token })).json().count).toBe(0);
    for (const id of ['0190a0b0-0000-7000-8000-000000000000', 'nope']) {
      const res = await h.req('GET', `/apps/gdpr/requests/${id}`, { token: a.token });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ status: 404, state: 'error', data: null });
    }
  });
});

describe('platform-side erasure of a customers/redact request', () => {
  it('once every app completed: the customer and their orders lose name, email, phone and addresses; totals stay; others untouched', async () => {
    const s = await gdprStore();
    const b = await secondApp(s.merchant, gdprAppBody(rx.url, `${s.tag}-b`));
    const c = await customer(s.merchant);
    const o1 = await order(s.merchant, c.email);
    const other = await customer(s.merchant);
    const o2 = await order(s.merchant, other.email);

    const { requestId } = (await post(s.merchant.token, 'customer-redact', { customerEmail: c.email })).json().data;
    await settle();
    await post(s.accessToken, `complete/${requestId}`);
    // One app still owes: nothing is erased yet.
    const still = await h.db.query('SELECT email FROM customers WHERE id = $1', [c.id]);
    expect(still.rows[0].email).toBe(c.email);

    await post(b.accessToken, `complete/${requestId}`);
    const cust = (await h.db.query('SELECT email, name, phone, address, note FROM customers WHERE id = $1', [c.id])).rows[0];
    expect(cust).toEqual({ email: `redacted-${c.id}@redacted.invalid`, name: '', phone: null, address: null, note: null });
    const ord = (await h.db.query('SELECT email, phone, shipping_address, billing_address, total_minor, customer_id FROM orders WHERE id = $1', [o1.orderId])).rows[0];
    expect(ord).toEqual({
      email: null, phone: null, customer_id: c.id, total_minor: 4000,
      shipping_address: { province: 'Greater London', country: 'GB', country_code: 'GB' }, billing_address: { province: 'Greater London', country: 'GB', country_code: 'GB' },
    });
    // As an app reads the order: no personal data, the same totals.
    const viaApi = await h.req('GET', `/api/v1/orders/${o1.orderId}.json`, { token: s.accessToken });
    expect(viaApi.statusCode, viaApi.body).toBe(200);
    const apiOrder = viaApi.json().order;
    expect(apiOrder).toMatchObject({ email: null, phone: null, total_price: o1.totalPrice });
    expect(JSON.stringify(apiOrder)).not.toContain('Lovelace');
    expect(JSON.stringify(apiOrder)).not.toContain(c.email);

    // Another customer's data is untouched.
    expect((await h.db.query('SELECT email FROM customers WHERE id = $1', [other.id])).rows[0].email).toBe(other.email);
    expect((await h.db.query('SELECT email FROM orders WHERE id = $1', [o2.orderId])).rows[0].email).toBe(other.email);
  });

  it('a data request erases nothing', async () => {
    const s = await gdprStore();
    const c = await customer(s.merchant);
    const { requestId } = (await post(s.merchant.token, 'data-request', { customerId: c.id })).json().data;
    await settle();
    await post(s.accessToken, `complete/${requestId}`);
    expect((await h.db.query('SELECT email FROM customers WHERE id = $1', [c.id])).rows[0].email).toBe(c.email);
  });
});
