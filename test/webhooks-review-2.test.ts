// A second review of the delivery engine (C8) by real HTTP against receivers on 127.0.0.1: what a
// delivery does when its target goes away between its creation and its attempt. C8.2 names the
// targets (enabled API subscriptions and manifest webhooks of active installations, store webhooks);
// a retry comes up to 21 minutes after the event (app-api.md Retries), and a redelivery any time
// later, so the target is checked again before each attempt, not only at fan-out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { attemptsOf, deliveriesOfStore, emitEvent, runDeliveries, subscribe, WEBHOOK_SCOPES, webhookStore } from './fixtures/webhook-setup.js';
import { createTestApp, installApp, signupMerchant, signupPartner } from './helpers/actors.js';
import { fanOutBatch } from '../src/webhooks/fanout.js';
import { createDeliveries } from '../src/webhooks/deliveries.repo.js';

let h: Harness;
let rx: Receiver;
/** Paths answered 500 (so their deliveries wait for a retry); everything else 200. */
const failing = new Set<string>();
beforeAll(async () => {
  h = await createWebhookHarness();
  rx = await startReceiver((req) => (failing.has(req.path) ? { status: 500 } : { status: 200, body: 'ok' }));
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

const received = (path: string) => rx.received.filter((r) => r.path === path);
const logUrl = (appId: string, rest = '') => `/apps/developer/${appId}/webhook-deliveries${rest}`;

/** Fan out what is pending without attempting anything (the worker's first step, C8.2). */
const fanOutOnly = () => fanOutBatch(h.db, h.deps.secrets, () => h.clock.now());

describe('C8.2, C8.3: a delivery whose target went away before its attempt is not sent', () => {
  it('an API subscription deleted while its delivery waits for a retry: the retry is not sent, the delivery fails (subscription_deleted)', async () => {
    const s = await webhookStore(h);
    failing.add('/deleted-sub');
    const sub = await subscribe(h, s.accessToken, 'orders/create', `${rx.url}/deleted-sub`);
    await emitEvent(h, s.merchant.storeId, 'orders/create', { id: 1 });
    await runDeliveries(h);
    const [first] = await deliveriesOfStore(h, s.merchant.storeId);
    expect(first).toMatchObject({ status: 'retrying', attempt_count: 1 });

    // The app unsubscribes (C6.4); the retry comes due 60 s (+/-10 %) later.
    expect((await h.req('DELETE', `/api/v1/webhooks/${sub.id}.json`, { token: s.accessToken })).statusCode).toBe(200);
    await h.advance(70);
    await runDeliveries(h);
    expect(received('/deleted-sub')).toHaveLength(1);
    const [row] = await deliveriesOfStore(h, s.merchant.storeId);
    expect(row).toMatchObject({ status: 'failed', attempt_count: 2, last_error: 'subscription_deleted', next_attempt_at: null });
    expect((await attemptsOf(h, row.id)).map((a) => [a.attempt, a.response_status, a.error])).toEqual([[1, 500, null], [2, null, 'subscription_deleted']]);
    // Nothing is left to come due.
    await h.advance(3600);
    await runDeliveries(h);
    expect(received('/deleted-sub')).toHaveLength(1);
  });

  it('an app uninstalled before its deliveries were sent: neither the subscription\'s nor the manifest\'s goes (app_uninstalled); a GDPR webhook still does', async () => {
    const s = await webhookStore(h, { extensions: { webhooks: [{ topic: 'customers/create', uri: `${rx.url}/uninstalled-manifest` }] } });
    await subscribe(h, s.accessToken, 'customers/create', `${rx.url}/uninstalled-sub`);
    await emitEvent(h, s.merchant.storeId, 'customers/create', { id: 1, email: 'private@example.com' });
    await fanOutOnly();
    expect((await deliveriesOfStore(h, s.merchant.storeId)).map((d) => [d.source, d.status]).sort()).toEqual([['manifest', 'pending'], ['subscription', 'pending']]);

    // The merchant uninstalls (C4.7) before the worker got to them: the customer's data stays home.
    expect((await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.merchant.token })).statusCode).toBe(200);
    // GDPR webhooks are owed to the app whatever its installation (C9): made now, sent now.
    const [gdpr] = await h.db.transaction((tx) => createDeliveries(tx, [{
      source: 'gdpr', appId: s.app.appId, storeId: s.merchant.storeId, topic: 'shop/redact', address: `${rx.url}/uninstalled-gdpr`,
      body: { shop_id: s.merchant.storeId, shop_domain: s.merchant.slug }, secret: s.app.clientSecret, maxAttempts: 1,
    }], h.clock.now()));
    await runDeliveries(h);

    expect(received('/uninstalled-sub')).toEqual([]);
    expect(received('/uninstalled-manifest')).toEqual([]);
    expect(rx.byWebhookId(gdpr.webhookId)).toHaveLength(1);
    const rows = await deliveriesOfStore(h, s.merchant.storeId);
    expect(rows.filter((d) => d.source !== 'gdpr').map((d) => [d.status, d.last_error])).toEqual([['failed', 'app_uninstalled'], ['failed', 'app_uninstalled']]);
    expect(rows.find((d) => d.source === 'gdpr')).toMatchObject({ status: 'success', last_error: null });

    // The developer's log says why (C8.5).
    const log = (await h.req('GET', logUrl(s.app.appId, '?topic=customers/create'), { token: s.partner.token })).json().data.deliveries;
    expect(log.map((d: any) => [d.status, d.attempts.map((a: any) => a.error)])).toEqual([['failed', ['app_uninstalled']], ['failed', ['app_uninstalled']]]);
  });

  it('a delivery made before the uninstall and redelivered after it is not sent again', async () => {
    const s = await webhookStore(h);
    await subscribe(h, s.accessToken, 'products/create', `${rx.url}/redeliver-after-uninstall`);
    await emitEvent(h, s.merchant.storeId, 'products/create', { id: 1 });
    await runDeliveries(h);
    const [row] = await deliveriesOfStore(h, s.merchant.storeId);
    expect(row.status).toBe('success');
    expect((await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.merchant.token })).statusCode).toBe(200);

    const res = await h.req('POST', logUrl(s.app.appId, `/${row.id}/redeliver`), { token: s.partner.token });
    expect(res.statusCode).toBe(202);
    await runDeliveries(h);
    expect(received('/redeliver-after-uninstall')).toHaveLength(1);
    const [after] = await deliveriesOfStore(h, s.merchant.storeId);
    expect(after).toMatchObject({ status: 'failed', attempt_count: 2, last_error: 'app_uninstalled' });
  });

  it('a store webhook deleted while its delivery waits for a retry: not sent again (webhook_deleted)', async () => {
    const s = await webhookStore(h);
    failing.add('/deleted-store-webhook');
    const created = await h.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'products/update', address: `${rx.url}/deleted-store-webhook` } });
    expect(created.statusCode).toBe(201);
    await emitEvent(h, s.merchant.storeId, 'products/update', { id: 1 });
    await runDeliveries(h);
    expect((await deliveriesOfStore(h, s.merchant.storeId))[0]).toMatchObject({ source: 'store', status: 'retrying' });

    expect((await h.req('DELETE', `/webhooks/${created.json().data.webhook.id}`, { token: s.merchant.token })).statusCode).toBe(200);
    await h.advance(70);
    await runDeliveries(h);
    expect(received('/deleted-store-webhook')).toHaveLength(1);
    expect((await deliveriesOfStore(h, s.merchant.storeId))[0]).toMatchObject({ status: 'failed', attempt_count: 2, last_error: 'webhook_deleted' });
  });

  it('the topic\'s read scope withdrawn while a delivery waits for a retry: not sent again (scope_withdrawn), as fan-out would not make it (C6.4)', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { scopes: WEBHOOK_SCOPES, tier: 'enterprise' });
    const first = await installApp(h, merchant, app);
    failing.add('/withdrawn-customers');
    await subscribe(h, first.accessToken, 'customers/update', `${rx.url}/withdrawn-customers`);
    await emitEvent(h, merchant.storeId, 'customers/update', { id: 1, email: 'private@example.com' });
    await runDeliveries(h);
    expect((await deliveriesOfStore(h, merchant.storeId))[0]).toMatchObject({ status: 'retrying', attempt_count: 1 });

    // The merchant authorises the app again without read_customers (C4.1).
    await installApp(h, merchant, app, 'read_shop,read_products');
    await h.advance(70);
    await runDeliveries(h);
    expect(received('/withdrawn-customers')).toHaveLength(1);
    expect((await deliveriesOfStore(h, merchant.storeId))[0]).toMatchObject({ status: 'failed', attempt_count: 2, last_error: 'scope_withdrawn' });
  });

  it('a target that is still there is retried as before: reinstalled before the retry came due, it gets the retry', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { scopes: WEBHOOK_SCOPES, tier: 'enterprise' });
    const first = await installApp(h, merchant, app);
    failing.add('/reinstalled');
    await subscribe(h, first.accessToken, 'orders/paid', `${rx.url}/reinstalled`);
    await emitEvent(h, merchant.storeId, 'orders/paid', { id: 1 });
    await runDeliveries(h);
    const list = await h.req('GET', '/apps/installations', { token: merchant.token });
    const installationId = list.json().data.installations[0].installationId;
    expect((await h.req('DELETE', `/apps/installations/${installationId}`, { token: merchant.token })).statusCode).toBe(200);
    await installApp(h, merchant, app);
    failing.delete('/reinstalled');
    await h.advance(70);
    await runDeliveries(h);
    expect(received('/reinstalled').map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['1', '2']);
    expect((await deliveriesOfStore(h, merchant.storeId))[0]).toMatchObject({ status: 'success', attempt_count: 2 });
  });
});

describe('C8.5: the log keeps the first 4 KiB of the response body', () => {
  it('a multi-byte character split by the 4 KiB cut is left out, not shown as U+FFFD; bytes the receiver sent that are not text still are', async () => {
    const s = await webhookStore(h);
    // 1 + 2 x 3000 bytes: the 4096th byte is the first half of an "é".
    const cutBody = `a${'é'.repeat(3000)}`;
    // A NUL, a byte that is not UTF-8 and a lone lead byte at the very end: all the receiver's own.
    const oddBody = Buffer.concat([Buffer.from('x\u0000y'), Buffer.from([0xff]), Buffer.from('z'), Buffer.from([0xc3])]);
    const previous = rx.answer;
    rx.answer = (req, i) => req.path === '/cut' ? { status: 200, body: cutBody }
      : req.path === '/odd' ? { status: 202, body: oddBody as unknown as string } : previous(req, i);
    try {
      await subscribe(h, s.accessToken, 'orders/cancelled', `${rx.url}/cut`);
      await subscribe(h, s.accessToken, 'orders/fulfilled', `${rx.url}/odd`);
      await emitEvent(h, s.merchant.storeId, 'orders/cancelled', { id: 1 });
      await emitEvent(h, s.merchant.storeId, 'orders/fulfilled', { id: 1 });
      await runDeliveries(h);
    } finally {
      rx.answer = previous;
    }
    const log = (await h.req('GET', logUrl(s.app.appId), { token: s.partner.token })).json().data.deliveries;
    const byTopic = Object.fromEntries(log.map((d: any) => [d.topic, d]));
    const cut: string = byTopic['orders/cancelled'].responseBody;
    expect(cut).toBe(`a${'é'.repeat(2047)}`);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(4096);
    expect(byTopic['orders/fulfilled']).toMatchObject({ status: 'success', responseStatus: 202, responseBody: 'x\ufffdy\ufffdz\ufffd' });
  });
});
