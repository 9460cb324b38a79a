// The developer's delivery log (C8.5), stats (C8.6), redelivery (C8.5, C14.10), body retention
// (C8.10) and store-level webhooks (C6.5).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { operatorToken, signupPartner, staffToken } from './helpers/actors.js';
import { startReceiver, verifySignature, type Receiver } from './fixtures/webhook-receiver.js';
import { emitEvent, runDeliveries, subscribe, webhookStore } from './fixtures/webhook-setup.js';
import { fanOutBatch } from '../src/webhooks/fanout.js';
import { createDeliveries } from '../src/webhooks/deliveries.repo.js';
import { deliveryWindowStats } from '../src/webhooks/delivery-log.js';

let h: Harness;
let rx: Receiver;
/** Per path: the status the receiver answers. */
const statusOf: Record<string, number> = {};
beforeAll(async () => {
  h = await createWebhookHarness();
  rx = await startReceiver((req) => ({ status: statusOf[req.path] ?? 200, body: req.path === '/big' ? 'x'.repeat(10_000) : `answer for ${req.path}` }));
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

const logUrl = (appId: string, rest = '') => `/apps/developer/${appId}/webhook-deliveries${rest}`;

describe('C8.5 delivery log', () => {
  it('lists deliveries newest first with bodies and attempt history; filters; pages; one delivery', async () => {
    const s = await webhookStore(h);
    const sub = await subscribe(h, s.accessToken, 'orders/create', `${rx.url}/big`);
    await subscribe(h, s.accessToken, 'orders/paid', `${rx.url}/paid`);
    statusOf['/paid'] = 500;
    await emitEvent(h, s.merchant.storeId, 'orders/create', { id: 1, name: '#1001' });
    await emitEvent(h, s.merchant.storeId, 'orders/paid', { id: 1 });
    await runDeliveries(h);

    const res = await h.req('GET', logUrl(s.app.appId), { token: s.partner.token });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ status: 200, state: 'success', message: null, count: 2, pagination: { page: 1, limit: 50, totalPages: 1, resultCount: 2, totalResult: 2 } });
    const [paid, created] = body.data.deliveries;
    expect(paid.topic).toBe('orders/paid');
    expect(created).toEqual({
      deliveryId: expect.any(String), webhookId: expect.any(String), source: 'subscription', topic: 'orders/create',
      storeId: s.merchant.storeId, address: `${rx.url}/big`, status: 'success', attemptCount: 1, nextAttemptAt: null,
      requestHeaders: expect.objectContaining({ 'X-SVC-Topic': 'orders/create', 'X-SVC-Delivery-Attempt': '1', 'X-SVC-Webhook-Id': created.webhookId }),
      requestBody: '{"id":1,"name":"#1001"}', responseStatus: 200, responseBody: 'x'.repeat(4096),
      attempts: [{ attempt: 1, startedAt: expect.any(String), durationMs: expect.any(Number), responseStatus: 200, error: null }],
      createdAt: expect.any(String), updatedAt: expect.any(String),
    });
    const received = rx.byWebhookId(created.webhookId)[0];
    expect(received.raw.toString('utf8')).toBe(created.requestBody);
    expect(verifySignature(received.raw, created.requestHeaders['X-SVC-Hmac-SHA256'], sub.secret)).toBe(true);
    expect(paid).toMatchObject({ status: 'retrying', attemptCount: 1, responseStatus: 500, responseBody: 'answer for /paid', nextAttemptAt: expect.any(String) });

    const filtered = await h.req('GET', logUrl(s.app.appId, '?status=retrying'), { token: s.partner.token });
    expect(filtered.json().data.deliveries.map((d: any) => d.topic)).toEqual(['orders/paid']);
    const byTopic = await h.req('GET', logUrl(s.app.appId, '?topic=orders/create'), { token: s.partner.token });
    expect(byTopic.json().data.deliveries.map((d: any) => d.deliveryId)).toEqual([created.deliveryId]);
    const page2 = await h.req('GET', logUrl(s.app.appId, '?limit=1&page=2'), { token: s.partner.token });
    expect(page2.json().data.deliveries.map((d: any) => d.deliveryId)).toEqual([created.deliveryId]);
    expect(page2.json().pagination).toEqual({ page: 2, limit: 1, totalPages: 2, resultCount: 1, totalResult: 2 });
    expect((await h.req('GET', logUrl(s.app.appId, '?status=bogus'), { token: s.partner.token })).statusCode).toBe(400);

    const one = await h.req('GET', logUrl(s.app.appId, `/${created.deliveryId}`), { token: s.partner.token });
    expect(one.json().data.delivery).toEqual(created);
  });

  it('the developer checks: 401 without a token, 403 for another developer, 404 for an unknown app or delivery', async () => {
    const s = await webhookStore(h);
    const stranger = await signupPartner(h);
    expect((await h.req('GET', logUrl(s.app.appId))).statusCode).toBe(401);
    for (const path of ['', '/stats', '/0190a0a0-0000-7000-8000-000000000000']) {
      expect((await h.req('GET', logUrl(s.app.appId, path), { token: stranger.token })).statusCode, path).toBe(403);
    }
    expect((await h.req('POST', logUrl(s.app.appId, '/0190a0a0-0000-7000-8000-000000000000/redeliver'), { token: stranger.token })).statusCode).toBe(403);
    expect((await h.req('GET', logUrl('0190a0a0-0000-7000-8000-000000000000'), { token: s.partner.token })).statusCode).toBe(404);
    expect((await h.req('GET', logUrl(s.app.appId, '/0190a0a0-0000-7000-8000-000000000000'), { token: s.partner.token })).statusCode).toBe(404);
    expect((await h.req('GET', logUrl(s.app.appId, '/not-a-uuid'), { token: s.partner.token })).statusCode).toBe(404);
  });
});

describe('C8.6 stats and C14.10 redelivery', () => {
  it('counts by status; redeliver keeps the webhook id and continues the attempt count, beyond 4 too', async () => {
    const s = await webhookStore(h);
    statusOf['/gone'] = 410;
    statusOf['/down'] = 503;
    await subscribe(h, s.accessToken, 'products/delete', `${rx.url}/gone`);
    await subscribe(h, s.accessToken, 'products/delete', `${rx.url}/down`);
    await subscribe(h, s.accessToken, 'products/delete', `${rx.url}/fine`);
    await subscribe(h, s.accessToken, 'products/update', `${rx.url}/fine`);
    await emitEvent(h, s.merchant.storeId, 'products/delete', { id: 9 });
    await runDeliveries(h);
    await emitEvent(h, s.merchant.storeId, 'products/update', { id: 9 });
    await runDeliveries(h);
    const stats = async () => (await h.req('GET', logUrl(s.app.appId, '/stats'), { token: s.partner.token })).json();
    expect(await stats()).toEqual({ status: 200, state: 'success', message: null, data: { total: 4, success: 2, failed: 1, pending: 0, retrying: 1 }, count: null, pagination: null });
    // Fanned out but not attempted yet: pending.
    await emitEvent(h, s.merchant.storeId, 'products/update', { id: 10 });
    await fanOutBatch(h.db, h.deps.secrets, () => h.clock.now());
    expect((await stats()).data).toEqual({ total: 5, success: 2, failed: 1, pending: 1, retrying: 1 });
    await runDeliveries(h);

    const list = (await h.req('GET', logUrl(s.app.appId, '?status=failed'), { token: s.partner.token })).json().data.deliveries;
    const gone = list[0];
    statusOf['/gone'] = 200;
    const redo = await h.req('POST', logUrl(s.app.appId, `/${gone.deliveryId}/redeliver`), { token: s.partner.token });
    expect(redo.statusCode).toBe(202);
    expect(redo.json().data.delivery).toMatchObject({ deliveryId: gone.deliveryId, webhookId: gone.webhookId, status: 'retrying', attemptCount: 1 });
    await runDeliveries(h);
    const after = (await h.req('GET', logUrl(s.app.appId, `/${gone.deliveryId}`), { token: s.partner.token })).json().data.delivery;
    expect(after).toMatchObject({ status: 'success', attemptCount: 2, webhookId: gone.webhookId });
    expect(after.attempts.map((a: any) => [a.attempt, a.responseStatus])).toEqual([[1, 410], [2, 200]]);
    expect(rx.byWebhookId(gone.webhookId).map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['1', '2']);

    // The delivery to /down runs out of attempts, then is redelivered as attempt 5.
    const down = (await h.req('GET', logUrl(s.app.appId, '?status=retrying'), { token: s.partner.token })).json().data.deliveries[0];
    for (let i = 0; i < 3; i++) {
      await h.advance(1000);
      await runDeliveries(h);
    }
    const exhausted = (await h.req('GET', logUrl(s.app.appId, `/${down.deliveryId}`), { token: s.partner.token })).json().data.delivery;
    expect(exhausted).toMatchObject({ status: 'failed', attemptCount: 4 });
    statusOf['/down'] = 204;
    expect((await h.req('POST', logUrl(s.app.appId, `/${down.deliveryId}/redeliver`), { token: s.partner.token })).statusCode).toBe(202);
    await runDeliveries(h);
    expect(rx.byWebhookId(down.webhookId).map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['1', '2', '3', '4', '5']);
    expect((await stats()).data).toEqual({ total: 5, success: 5, failed: 0, pending: 0, retrying: 0 });
  });
});

describe('C8.6 the stats panel\'s p90 of attempt durations (issue 15)', () => {
  /** The query before migration 0019, which joined every app's attempts to this app's deliveries. */
  const joinedP90 = async (appId: string, since: Date) => {
    const { rows } = await h.db.query<{ p90: number | null }>(
      `SELECT percentile_cont(0.9) WITHIN GROUP (ORDER BY a.duration_ms)::float8 AS p90
         FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE d.app_id = $1 AND a.started_at >= $2`,
      [appId, since],
    );
    return rows[0].p90 === null ? null : Math.round(Number(rows[0].p90));
  };
  const attemptsOfStore = async (storeId: string) => (await h.db.query<{ source: string; app_id: string | null; delivery_id: string }>(
    'SELECT d.source, a.app_id, a.delivery_id FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.store_id = $1',
    [storeId],
  )).rows;

  it('attempts carry their delivery\'s app (none for a store webhook); another app\'s extreme attempts leave the p90 as it was', async () => {
    const mine = await webhookStore(h);
    await subscribe(h, mine.accessToken, 'orders/create', `${rx.url}/p90-mine`);
    const hook = await h.req('POST', '/webhooks', { token: mine.merchant.token, body: { topic: 'orders/create', address: `${rx.url}/p90-store` } });
    expect(hook.statusCode).toBe(201);
    for (const id of [1, 2, 3]) await emitEvent(h, mine.merchant.storeId, 'orders/create', { id });
    await runDeliveries(h);

    const recorded = await attemptsOfStore(mine.merchant.storeId);
    expect(recorded.filter((a) => a.source === 'subscription').map((a) => a.app_id)).toEqual([mine.app.appId, mine.app.appId, mine.app.appId]);
    expect(recorded.filter((a) => a.source === 'store').map((a) => a.app_id)).toEqual([null, null, null]);
    // Known durations, so the figure is exact: the p90 of 100, 200, 300 ms is 280 ms.
    const ids = recorded.filter((a) => a.source === 'subscription').map((a) => a.delivery_id).sort();
    await h.db.query('UPDATE webhook_attempts SET duration_ms = 100 * (array_position($1::uuid[], delivery_id)) WHERE delivery_id = ANY($1::uuid[])', [ids]);
    // The merchant's own webhook is no app's: its attempts never count.
    await h.db.query(`UPDATE webhook_attempts a SET duration_ms = 999999 FROM webhook_deliveries d WHERE d.id = a.delivery_id AND d.store_id = $1 AND d.source = 'store'`, [mine.merchant.storeId]);

    const since = new Date(h.clock.nowMs() - 7 * 86_400_000);
    const before = await deliveryWindowStats(h.db, mine.app.appId, since);
    expect(before).toMatchObject({ total: 3, success: 3, failureRate: 0, p90Ms: 280 });

    // Another app on another store, its attempts inside the window with extreme durations.
    const other = await webhookStore(h);
    await subscribe(h, other.accessToken, 'orders/create', `${rx.url}/p90-other`);
    for (const id of [1, 2, 3, 4]) await emitEvent(h, other.merchant.storeId, 'orders/create', { id });
    await runDeliveries(h);
    const theirs = await attemptsOfStore(other.merchant.storeId);
    expect(theirs.map((a) => a.app_id)).toEqual([other.app.appId, other.app.appId, other.app.appId, other.app.appId]);
    await h.db.query('UPDATE webhook_attempts SET duration_ms = 2000000000 WHERE app_id = $1', [other.app.appId]);
    await h.db.query('UPDATE webhook_attempts SET duration_ms = 0 WHERE delivery_id = $1', [theirs[0].delivery_id]);

    expect(await deliveryWindowStats(h.db, mine.app.appId, since)).toEqual(before);
    expect((await deliveryWindowStats(h.db, other.app.appId, since)).p90Ms).toBe(2000000000);
    // The same figures as the query the index replaced, and the same window: on the attempt's start.
    for (const appId of [mine.app.appId, other.app.appId]) {
      for (const at of [since, h.clock.now(), new Date(h.clock.nowMs() + 60_000)]) {
        expect((await deliveryWindowStats(h.db, appId, at)).p90Ms, `${appId} ${at.toISOString()}`).toBe(await joinedP90(appId, at));
      }
    }
    expect((await deliveryWindowStats(h.db, mine.app.appId, new Date(h.clock.nowMs() + 60_000))).p90Ms).toBeNull();
  });
});

describe('C8.10 retention', () => {
  it('prunes request and response bodies after the retention period; records and attempts stay', async () => {
    const s = await webhookStore(h);
    await subscribe(h, s.accessToken, 'customers/create', `${rx.url}/kept`);
    await emitEvent(h, s.merchant.storeId, 'customers/create', { id: 1, email: 'a@example.com' });
    await runDeliveries(h);
    const ops = await operatorToken(h);
    const run = await h.req('POST', '/apps/admin/jobs/webhook-retention/run', { token: ops });
    expect(run.statusCode).toBe(200);
    const [before] = (await h.req('GET', logUrl(s.app.appId), { token: s.partner.token })).json().data.deliveries;
    expect(before.requestBody).toBe('{"id":1,"email":"a@example.com"}');

    await h.advance(h.config.deliveryRetentionDays * 86_400 + 60);
    expect((await h.deps.jobs.run('webhook-retention')).processed).toBeGreaterThanOrEqual(1);
    const partner = await h.req('POST', '/auth/login', { body: { email: s.partner.email, password: 'correct-horse' } });
    const token = partner.json().data.token;
    const [after] = (await h.req('GET', logUrl(s.app.appId), { token })).json().data.deliveries;
    expect(after).toMatchObject({ deliveryId: before.deliveryId, status: 'success', attemptCount: 1, requestBody: null, responseBody: null, responseStatus: 200 });
    expect(after.attempts).toEqual(before.attempts);
    expect((await h.req('POST', logUrl(s.app.appId, `/${before.deliveryId}/redeliver`), { token })).statusCode).toBe(409);
    // The event the delivery was made from held the same body (the customer's email): it goes too.
    const { rows: events } = await h.db.query<{ payload: unknown }>('SELECT payload FROM events WHERE store_id = $1', [s.merchant.storeId]);
    expect(events.map((e) => e.payload)).toEqual([null]);
  });

  it("keeps an event's payload until it has been fanned out, and within the retention period", async () => {
    const s = await webhookStore(h);
    await emitEvent(h, s.merchant.storeId, 'customers/create', { id: 2, email: 'b@example.com' });
    await h.advance(h.config.deliveryRetentionDays * 86_400 + 60);
    await h.deps.jobs.run('webhook-retention');
    const payloads = async () => (await h.db.query<{ payload: unknown }>('SELECT payload FROM events WHERE store_id = $1', [s.merchant.storeId])).rows.map((e) => e.payload);
    // Old, but its deliveries are not made yet: it is still needed.
    expect(await payloads()).toEqual([{ id: 2, email: 'b@example.com' }]);
    await runDeliveries(h);
    await h.deps.jobs.run('webhook-retention');
    expect(await payloads()).toEqual([null]);
  });
});

describe('C6.5 store-level webhooks (merchant JWT)', () => {
  it('the store roles create, list (secrets included) and delete; envelope shapes', async () => {
    const s = await webhookStore(h);
    const created = await h.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'orders/create', address: `${rx.url}/store-hook` } });
    expect(created.statusCode).toBe(201);
    const { webhook } = created.json().data;
    expect(created.json()).toMatchObject({ status: 201, state: 'success', message: null });
    expect(webhook).toEqual({
      id: expect.any(String), topic: 'orders/create', address: `${rx.url}/store-hook`, format: 'json', apiVersion: '2026-06',
      secret: expect.stringMatching(/^svcwh_/), createdAt: expect.any(String), updatedAt: expect.any(String),
    });
    for (const role of ['STAFF_ADMIN', 'MANAGER'] as const) {
      const staff = await staffToken(h, s.merchant, role);
      const mine = await h.req('POST', '/webhooks', { token: staff, body: { topic: 'products/update', address: `${rx.url}/${role}` } });
      expect(mine.statusCode, role).toBe(201);
    }
    const list = await h.req('GET', '/webhooks', { token: s.merchant.token });
    expect(list.json()).toMatchObject({ status: 200, state: 'success', count: 3, pagination: { page: 1, totalResult: 3 } });
    expect(list.json().data.webhooks.find((w: any) => w.id === webhook.id)).toEqual(webhook);

    const dup = await h.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'orders/create', address: `${rx.url}/store-hook` } });
    expect(dup.statusCode).toBe(422);
    expect(dup.json()).toEqual({ status: 422, state: 'error', message: expect.any(String), data: null, count: null, pagination: null });
    expect((await h.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'nope/nope', address: `${rx.url}/x` } })).statusCode).toBe(422);
    expect((await h.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'orders/create', address: 'mailto:x@example.com' } })).statusCode).toBe(422);

    const other = await webhookStore(h);
    // C7.1: another store's webhook is a 403, an unknown one a 404; neither deletes anything.
    expect((await h.req('DELETE', `/webhooks/${webhook.id}`, { token: other.merchant.token })).statusCode).toBe(403);
    expect((await h.req('DELETE', '/webhooks/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', { token: s.merchant.token })).statusCode).toBe(404);
    expect((await h.req('DELETE', `/webhooks/${webhook.id}`, { token: s.merchant.token })).statusCode).toBe(200);
    expect((await h.req('GET', '/webhooks', { token: s.merchant.token })).json().count).toBe(2);
  });

  it('401 without a token; 403 for a partner and for the operator (no store)', async () => {
    expect((await h.req('GET', '/webhooks')).statusCode).toBe(401);
    const partner = await signupPartner(h);
    expect((await h.req('GET', '/webhooks', { token: partner.token })).statusCode).toBe(403);
    const ops = await operatorToken(h);
    const res = await h.req('POST', '/webhooks', { token: ops, body: { topic: 'orders/create', address: `${rx.url}/ops` } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ status: 403, state: 'error', data: null });
  });
});

describe('delivery creation for other areas (the GDPR workflow)', () => {
  it('createDeliveries + sendNow: signed with the given secret, extra headers, one attempt only, in the app log', async () => {
    const s = await webhookStore(h);
    statusOf['/gdpr'] = 503;
    const created = await h.db.transaction((tx) => createDeliveries(tx, [{
      source: 'gdpr', appId: s.app.appId, storeId: s.merchant.storeId, topic: 'customers/redact', address: `${rx.url}/gdpr`,
      body: { shop_id: s.merchant.storeId, shop_domain: s.merchant.slug, customer: { id: 'c1', email: 'c@example.com' }, orders_to_redact: [] },
      secret: s.app.clientSecret, extraHeaders: { 'X-SVC-Gdpr-Request-Id': 'req-123' }, maxAttempts: 1,
    }], h.clock.now()));
    const [outcome] = await h.deps.webhooks.sendNow(created.map((d) => d.deliveryId));
    expect(outcome).toEqual({ deliveryId: created[0].deliveryId, attempt: 1, status: 'failed', responseStatus: 503, error: null });
    const [req] = rx.byWebhookId(created[0].webhookId);
    expect(req.headers['x-svc-gdpr-request-id']).toBe('req-123');
    expect(req.headers['x-svc-topic']).toBe('customers/redact');
    expect(verifySignature(req.raw, req.headers['x-svc-hmac-sha256'], s.app.clientSecret)).toBe(true);
    // Not retried automatically (app-api.md Retries 5).
    await h.advance(3600);
    await runDeliveries(h);
    expect(rx.byWebhookId(created[0].webhookId)).toHaveLength(1);
    const log = (await h.req('GET', logUrl(s.app.appId, '?topic=customers/redact'), { token: s.partner.token })).json().data.deliveries;
    expect(log).toMatchObject([{ source: 'gdpr', status: 'failed', attemptCount: 1, requestHeaders: { 'X-SVC-Gdpr-Request-Id': 'req-123' } }]);
  });
});
