// Webhook subscriptions (C6.4) and delivery (C8.1-C8.4, C8.7; app-api.md Delivery headers,
// Signature, Retries), against a real HTTP receiver on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { operatorToken, storeWithApp } from './helpers/actors.js';
import { startReceiver, verifySignature, type Receiver } from './fixtures/webhook-receiver.js';
import { attemptsOf, deliveriesOfStore, emitEvent, runDeliveries, subscribe, webhookStore } from './fixtures/webhook-setup.js';
import fc from 'fast-check';
import { emit } from '../src/outbox/emit.js';
import { nextState, retryDelayMs, verdictOf } from '../src/webhooks/retry-policy.js';

let h: Harness;
let rx: Receiver;
beforeAll(async () => {
  h = await createWebhookHarness();
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('C6.4 subscriptions API', () => {
  it('creates a subscription and returns its secret once; lists without secrets; deletes', async () => {
    const s = await webhookStore(h);
    const res = await h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { webhook: { topic: 'orders/create', address: `${rx.url}/orders` } } });
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-svc-api-version']).toBe('2026-06');
    const { webhook } = res.json();
    expect(webhook).toEqual({
      id: expect.stringMatching(UUID), topic: 'orders/create', address: `${rx.url}/orders`, format: 'json', api_version: '2026-06',
      created_at: expect.any(String), updated_at: expect.any(String), secret: expect.stringMatching(/^svcwh_/),
    });
    // A flat body is accepted too.
    const flat = await h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { topic: 'products/update', address: `${rx.url}/p` } });
    expect(flat.statusCode).toBe(201);

    const list = await h.req('GET', '/api/v1/webhooks.json', { token: s.accessToken });
    expect(list.statusCode).toBe(200);
    expect(list.json().webhooks.map((w: any) => w.topic).sort()).toEqual(['orders/create', 'products/update']);
    for (const w of list.json().webhooks) expect(w).not.toHaveProperty('secret');

    expect((await h.req('DELETE', `/api/v1/webhooks/${webhook.id}.json`, { token: s.accessToken })).json()).toEqual({});
    const again = await h.req('DELETE', `/api/v1/webhooks/${webhook.id}.json`, { token: s.accessToken });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ errors: { base: [expect.any(String)] } });
  });

  it('422 in the errors body: unknown topic, bad address, duplicate pair; GDPR topics accepted', async () => {
    const s = await webhookStore(h);
    const post = (body: unknown) => h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body });
    const unknown = await post({ webhook: { topic: 'orders/exploded', address: `${rx.url}/x` } });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json()).toEqual({ errors: { topic: [expect.any(String)] } });
    for (const address of ['not a url', '/relative/path', 'ftp://example.com/hook', undefined]) {
      const bad = await post({ webhook: { topic: 'orders/create', address } });
      expect(bad.statusCode, String(address)).toBe(422);
      expect(bad.json().errors.address).toEqual([expect.any(String)]);
    }
    await subscribe(h, s.accessToken, 'orders/create', `${rx.url}/dup`);
    const dup = await post({ webhook: { topic: 'orders/create', address: `${rx.url}/dup` } });
    expect(dup.statusCode).toBe(422);
    expect(dup.json().errors.address).toEqual([expect.any(String)]);
    for (const topic of ['customers/data_request', 'customers/redact', 'shop/redact']) {
      expect((await post({ webhook: { topic, address: `${rx.url}/gdpr` } })).statusCode, topic).toBe(201);
    }
    const malformed = await h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, payload: '{"webhook":', headers: { 'content-type': 'application/json' } });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().errors.base).toEqual([expect.any(String)]);
  });

  it('401 without a token; 403 without read_shop or without the topic read scope', async () => {
    expect((await h.req('GET', '/api/v1/webhooks.json')).json()).toEqual({ errors: { base: [expect.any(String)] } });
    const noShop = await storeWithApp(h, { scopes: ['read_orders'] });
    const r1 = await h.req('POST', '/api/v1/webhooks.json', { token: noShop.accessToken, body: { topic: 'orders/create', address: `${rx.url}/a` } });
    expect(r1.statusCode).toBe(403);
    expect(r1.json()).toEqual({ errors: { base: [expect.any(String)] } });

    const shopOnly = await storeWithApp(h, { scopes: ['read_shop', 'read_inventory'] });
    const cases: [string, number][] = [
      ['orders/create', 403], ['refunds/create', 403], ['fulfillments/update', 403], ['subscriptions/renew', 403],
      ['products/create', 201], ['customers/update', 403], ['customers/redact', 403],
      ['inventory_levels/update', 201], ['shop/redact', 201], // C6.4: read_products or read_inventory opens both
    ];
    for (const [topic, status] of cases) {
      const res = await h.req('POST', '/api/v1/webhooks.json', { token: shopOnly.accessToken, body: { topic, address: `${rx.url}/s` } });
      expect(res.statusCode, topic).toBe(status);
    }
  });
});

describe('C8.2 fan-out and delivery', () => {
  it('one delivery per target, each signed with its own kind of secret, every header as specified', async () => {
    const s = await webhookStore(h, { extensions: { webhooks: [{ topic: 'products/create', uri: `${rx.url}/manifest` }] } });
    const sub = await subscribe(h, s.accessToken, 'products/create', `${rx.url}/subscription`);
    const store = await h.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'products/create', address: `${rx.url}/store` } });
    expect(store.statusCode).toBe(201);
    const storeSecret = store.json().data.webhook.secret;

    const payload = { id: 42, title: 'Ünïcode "quoted" tee', body_html: '<p>€</p>', price: '19.90' };
    await emitEvent(h, s.merchant.storeId, 'products/create', payload);
    // C12.2: the operator runs the job and gets the attempts it made.
    const run = await h.req('POST', '/apps/admin/jobs/webhook-deliveries/run', { token: await operatorToken(h) });
    expect(run.json()).toMatchObject({ status: 200, data: { job: 'webhook-deliveries', processed: 3 } });

    const got = (path: string) => rx.received.filter((r) => r.path === path && r.headers['x-svc-shop-domain'] === s.merchant.slug);
    const secrets: Record<string, string> = { '/subscription': sub.secret, '/manifest': s.app.clientSecret, '/store': storeSecret };
    const ids = new Set<string>();
    for (const [path, secret] of Object.entries(secrets)) {
      const [req] = got(path);
      expect(req, path).toBeDefined();
      expect(JSON.parse(req.raw.toString('utf8'))).toEqual(payload);
      expect(verifySignature(req.raw, req.headers['x-svc-hmac-sha256'], secret), path).toBe(true);
      for (const other of Object.values(secrets).filter((x) => x !== secret)) expect(verifySignature(req.raw, req.headers['x-svc-hmac-sha256'], other)).toBe(false);
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers['x-svc-topic']).toBe('products/create');
      expect(req.headers['x-svc-api-version']).toBe('2026-06');
      expect(req.headers['x-svc-delivery-attempt']).toBe('1');
      expect(req.headers['x-svc-webhook-id']).toMatch(UUID);
      expect(req.headers).not.toHaveProperty('x-svc-gdpr-request-id');
      ids.add(req.headers['x-svc-webhook-id'] as string);
    }
    expect(ids.size).toBe(3);
    const rows = await deliveriesOfStore(h, s.merchant.storeId);
    expect(rows.map((r) => r.source).sort()).toEqual(['manifest', 'store', 'subscription']);
    for (const r of rows) {
      expect(r.status).toBe('success');
      // The bytes on the wire are the bytes stored at creation.
      expect(rx.byWebhookId(r.webhook_id)[0].raw.toString('utf8')).toBe(r.request_body);
    }
  });

  it('C8.7 a rotated client secret signs manifest webhooks created from then on', async () => {
    const s = await webhookStore(h, { extensions: { webhooks: [{ topic: 'orders/paid', uri: `${rx.url}/rotated` }] } });
    await emitEvent(h, s.merchant.storeId, 'orders/paid', { id: 1 });
    await runDeliveries(h);
    const rotate = await h.req('POST', `/apps/developer/apps/${s.app.appId}/rotate-secret`, { token: s.partner.token });
    const newSecret = rotate.json().data.clientSecret;
    await emitEvent(h, s.merchant.storeId, 'orders/paid', { id: 2 });
    await runDeliveries(h);
    const [first, second] = rx.received.filter((r) => r.path === '/rotated' && r.headers['x-svc-shop-domain'] === s.merchant.slug);
    expect(verifySignature(first.raw, first.headers['x-svc-hmac-sha256'], s.app.clientSecret)).toBe(true);
    expect(verifySignature(second.raw, second.headers['x-svc-hmac-sha256'], newSecret)).toBe(true);
    expect(verifySignature(second.raw, second.headers['x-svc-hmac-sha256'], s.app.clientSecret)).toBe(false);
  });

  it('C8.1 a rolled-back change produces no delivery; other stores, topics and uninstalled apps get none', async () => {
    const s = await webhookStore(h);
    await subscribe(h, s.accessToken, 'customers/create', `${rx.url}/rollback`);
    await expect(h.db.transaction(async (tx) => {
      await emit(tx, { storeId: s.merchant.storeId, topic: 'customers/create', payload: { id: 1 }, now: h.clock.now() });
      throw new Error('the change failed');
    })).rejects.toThrow('the change failed');
    await emitEvent(h, s.merchant.storeId, 'customers/update', { id: 1 });
    const other = await webhookStore(h);
    await emitEvent(h, other.merchant.storeId, 'customers/create', { id: 2 });
    await runDeliveries(h);
    expect(await deliveriesOfStore(h, s.merchant.storeId)).toEqual([]);

    const uninstall = await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.merchant.token });
    expect(uninstall.statusCode).toBe(200);
    await emitEvent(h, s.merchant.storeId, 'customers/create', { id: 3 });
    await runDeliveries(h);
    expect(await deliveriesOfStore(h, s.merchant.storeId)).toEqual([]);
  });
});

describe('C8.3 retries (app-api.md Retries) on the service clock', () => {
  it('5xx is retried 60 s, 300 s, 900 s (+/-10 %) after each failure, 4 attempts, then failed', async () => {
    const s = await webhookStore(h);
    const retryRx = await startReceiver(() => ({ status: 503, body: 'unavailable' }));
    await subscribe(h, s.accessToken, 'orders/create', `${retryRx.url}/retry`);
    await emitEvent(h, s.merchant.storeId, 'orders/create', { id: 7 });
    await runDeliveries(h);
    const [delivery] = await deliveriesOfStore(h, s.merchant.storeId);
    for (const [attempt, delay] of [[1, 60], [2, 300], [3, 900]] as const) {
      await expect.poll(async () => (await attemptsOf(h, delivery.id)).length, { timeout: 10_000 }).toBe(attempt);
      const [row] = await deliveriesOfStore(h, s.merchant.storeId);
      expect(row.status).toBe('retrying');
      const last = (await attemptsOf(h, delivery.id))[attempt - 1];
      const failedAt = last.started_at.getTime() + last.duration_ms;
      const wait = (row.next_attempt_at!.getTime() - failedAt) / 1000;
      expect(wait).toBeGreaterThanOrEqual(delay * 0.9 - 1);
      expect(wait).toBeLessThanOrEqual(delay * 1.1 + 1);
      await h.advance(delay * 1.1 + 2);
      await runDeliveries(h);
    }
    await expect.poll(async () => (await attemptsOf(h, delivery.id)).length, { timeout: 10_000 }).toBe(4);
    const attempts = await attemptsOf(h, delivery.id);
    for (let i = 1; i < attempts.length; i++) expect(attempts[i].started_at.getTime()).toBeGreaterThan(attempts[i - 1].started_at.getTime() + 50_000);
    const [final] = await deliveriesOfStore(h, s.merchant.storeId);
    expect(final).toMatchObject({ status: 'failed', attempt_count: 4, next_attempt_at: null });

    await h.advance(3600);
    await runDeliveries(h);
    const seen = retryRx.byWebhookId(final.webhook_id);
    expect(seen.map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['1', '2', '3', '4']);
    // Same bytes and signature on every attempt (C8.2).
    expect(new Set(seen.map((r) => r.raw.toString('base64'))).size).toBe(1);
    expect(new Set(seen.map((r) => r.headers['x-svc-hmac-sha256'])).size).toBe(1);
    await retryRx.close();
  });

  it('429 is retried; other 4xx and 3xx fail at once, and a redirect is never followed', async () => {
    const s = await webhookStore(h);
    const answers: Record<string, { status: number; headers?: Record<string, string> }> = {
      '/429': { status: 429 }, '/404': { status: 404 }, '/410': { status: 410 },
      '/302': { status: 302, headers: { location: `${rx.url}/redirect-target` } },
    };
    const codesRx = await startReceiver((req) => answers[req.path] ?? { status: 200 });
    for (const path of Object.keys(answers)) await subscribe(h, s.accessToken, 'refunds/create', `${codesRx.url}${path}`);
    await emitEvent(h, s.merchant.storeId, 'refunds/create', { id: 1 });
    await runDeliveries(h);
    const rows = await deliveriesOfStore(h, s.merchant.storeId);
    const byPath = Object.fromEntries(rows.map((r) => [new URL(r.address).pathname, r]));
    expect(byPath['/429']).toMatchObject({ status: 'retrying', attempt_count: 1 });
    for (const p of ['/404', '/410', '/302']) expect(byPath[p]).toMatchObject({ status: 'failed', attempt_count: 1, next_attempt_at: null });
    expect(byPath['/302'].last_error).toBe('redirect_not_followed');
    expect(rx.received.filter((r) => r.path === '/redirect-target')).toEqual([]);
    answers['/429'] = { status: 200 };
    await h.advance(70);
    await runDeliveries(h);
    await expect.poll(async () => (await deliveriesOfStore(h, s.merchant.storeId)).find((r) => r.id === byPath['/429'].id)?.status).toBe('success');
    await codesRx.close();
  });
});

describe('retry policy (app-api.md Retries)', () => {
  it('delays stay within +/-10 % of 60, 300, 900 s for any jitter draw', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 3 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, r) => {
      const base = [60, 300, 900][attempt - 1] * 1000;
      const d = retryDelayMs(attempt, () => r);
      return d >= base * 0.9 - 1 && d <= base * 1.1 + 1;
    }));
  });

  it('classifies every status: 2xx success; 429, 5xx and transport errors retry; the rest is permanent', () => {
    for (let status = 100; status < 600; status++) {
      const expected = status >= 200 && status < 300 ? 'success' : status === 429 || status >= 500 ? 'retry' : 'permanent';
      expect(verdictOf({ status, error: null }), String(status)).toBe(expected);
    }
    expect(verdictOf({ status: null, error: 'timeout' })).toBe('retry');
    expect(verdictOf({ status: null, error: 'network_error: ECONNRESET' })).toBe('retry');
    expect(verdictOf({ status: null, error: 'blocked_address' })).toBe('permanent');
    const now = new Date(0);
    expect(nextState('retry', 4, 4, now)).toEqual({ status: 'failed', nextAttemptAt: null });
    expect(nextState('retry', 1, 1, now)).toEqual({ status: 'failed', nextAttemptAt: null });
    expect(nextState('permanent', 1, 4, now)).toEqual({ status: 'failed', nextAttemptAt: null });
    expect(nextState('retry', 2, 4, now, () => 0.5)).toEqual({ status: 'retrying', nextAttemptAt: new Date(300_000) });
  });
});
