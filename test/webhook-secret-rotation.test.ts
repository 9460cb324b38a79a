// A rotated client secret (C3.2: the old one stops working at once; C8.7: the key of manifest and
// GDPR webhooks changes from then on) signs every attempt made after the rotation: a retry of a
// manifest webhook, a redelivery (C8.5) of a manifest, GDPR (C9.4) or test delivery. The body bytes
// stay the stored ones; the delivery log shows the signature sent on the last attempt. Deliveries
// keyed by their own `svcwh_` secret (API subscriptions, store webhooks) keep it.
// The receiver plays the app: it checks each request against the secret it holds now and answers
// 401 to any other signature, as app-api.md Signature tells receivers to.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { createTestApp, signupPartner, storeWithApp } from './helpers/actors.js';
import { gdprAppBody } from './helpers/gdpr.js';
import { startReceiver, verifySignature, type Received, type Receiver } from './fixtures/webhook-receiver.js';
import { emitEvent, runDeliveries, subscribe, webhookStore } from './fixtures/webhook-setup.js';
import { gdprDispatcher } from '../src/gdpr/gdpr.dispatch.js';
import { fanOutBatch } from '../src/webhooks/fanout.js';

let h: Harness;
let rx: Receiver;
/** Per path: a status to answer whatever the signature (a receiver that is down). */
const statusOf: Record<string, number> = {};
/** Per path: the secret the receiver verifies with now (401 on a mismatch). */
const secretOf: Record<string, string> = {};

beforeAll(async () => {
  h = await createWebhookHarness();
  rx = await startReceiver((req) => {
    if (statusOf[req.path]) return { status: statusOf[req.path], body: 'down' };
    const secret = secretOf[req.path];
    if (secret && !verifySignature(req.raw, req.headers['x-svc-hmac-sha256'], secret)) return { status: 401, body: 'bad signature' };
    return { status: 200, body: 'ok' };
  });
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

let seq = 0;
const logUrl = (appId: string, rest = '') => `/apps/developer/${appId}/webhook-deliveries${rest}`;
const received = (path: string) => rx.received.filter((r) => r.path === path);

async function rotate(app: { appId: string }, token: string): Promise<string> {
  const res = await h.req('POST', `/apps/developer/apps/${app.appId}/rotate-secret`, { token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.clientSecret;
}

async function logged(appId: string, token: string, deliveryId: string) {
  const res = await h.req('GET', logUrl(appId, `/${deliveryId}`), { token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.delivery;
}

async function redeliver(appId: string, token: string, deliveryId: string) {
  const res = await h.req('POST', logUrl(appId, `/${deliveryId}/redeliver`), { token });
  expect(res.statusCode, res.body).toBe(202);
}

/** The request `r` is signed with `good` and with none of `bad`. */
function expectSignedWith(r: Received, good: string, ...bad: string[]) {
  expect(verifySignature(r.raw, r.headers['x-svc-hmac-sha256'], good)).toBe(true);
  for (const b of bad) expect(verifySignature(r.raw, r.headers['x-svc-hmac-sha256'], b)).toBe(false);
}

describe('C8.7 an attempt after a rotation is signed with the client secret current at that moment', () => {
  it('a manifest retry takes the new secret and succeeds; subscription and store webhook retries keep their own secrets', async () => {
    const tag = `retry${++seq}`;
    const s = await webhookStore(h, { extensions: { webhooks: [{ topic: 'orders/paid', uri: `${rx.url}/${tag}/manifest` }] } });
    const sub = await subscribe(h, s.accessToken, 'orders/paid', `${rx.url}/${tag}/sub`);
    const store = await h.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'orders/paid', address: `${rx.url}/${tag}/store` } });
    expect(store.statusCode, store.body).toBe(201);
    const storeSecret = store.json().data.webhook.secret;
    for (const p of ['manifest', 'sub', 'store']) statusOf[`/${tag}/${p}`] = 503;

    await emitEvent(h, s.merchant.storeId, 'orders/paid', { id: 7, note: 'Ünïcode "quoted" €' });
    await runDeliveries(h);
    const [first] = received(`/${tag}/manifest`);
    expectSignedWith(first, s.app.clientSecret);

    // The app rotates its secret and from now on verifies with the new one only (C3.2).
    const newSecret = await rotate(s.app, s.partner.token);
    for (const p of ['manifest', 'sub', 'store']) delete statusOf[`/${tag}/${p}`];
    secretOf[`/${tag}/manifest`] = newSecret;
    secretOf[`/${tag}/sub`] = sub.secret;
    secretOf[`/${tag}/store`] = storeSecret;
    await h.advance(1000);
    await runDeliveries(h);

    const [, retry] = received(`/${tag}/manifest`);
    expect(retry.headers['x-svc-delivery-attempt']).toBe('2');
    expectSignedWith(retry, newSecret, s.app.clientSecret);
    // The same bytes, the same webhook id (C8.2).
    expect(retry.raw.equals(first.raw)).toBe(true);
    expect(retry.headers['x-svc-webhook-id']).toBe(first.headers['x-svc-webhook-id']);
    expectSignedWith(received(`/${tag}/sub`)[1], sub.secret, newSecret, s.app.clientSecret);
    expectSignedWith(received(`/${tag}/store`)[1], storeSecret, newSecret, s.app.clientSecret);

    const list = (await h.req('GET', logUrl(s.app.appId), { token: s.partner.token })).json().data.deliveries;
    const manifest = list.find((d: any) => d.source === 'manifest');
    expect(manifest).toMatchObject({ status: 'success', attemptCount: 2, requestBody: first.raw.toString('utf8') });
    // The log shows what the last attempt carried.
    expect(manifest.requestHeaders['X-SVC-Hmac-SHA256']).toBe(retry.headers['x-svc-hmac-sha256']);
    expect(manifest.requestHeaders['X-SVC-Delivery-Attempt']).toBe('2');
    expect(list.find((d: any) => d.source === 'subscription')).toMatchObject({ status: 'success', attemptCount: 2 });
  });

  it('a manifest delivery redelivered after a rotation is signed with the new secret', async () => {
    const tag = `redeliver${++seq}`;
    const s = await webhookStore(h, { extensions: { webhooks: [{ topic: 'products/update', uri: `${rx.url}/${tag}/manifest` }] } });
    await emitEvent(h, s.merchant.storeId, 'products/update', { id: 3 });
    await runDeliveries(h);
    const [first] = received(`/${tag}/manifest`);
    expectSignedWith(first, s.app.clientSecret);
    const [delivery] = (await h.req('GET', logUrl(s.app.appId), { token: s.partner.token })).json().data.deliveries;
    expect(delivery).toMatchObject({ status: 'success', attemptCount: 1 });

    const newSecret = await rotate(s.app, s.partner.token);
    secretOf[`/${tag}/manifest`] = newSecret;
    await redeliver(s.app.appId, s.partner.token, delivery.deliveryId);
    await runDeliveries(h);

    const [, again] = received(`/${tag}/manifest`);
    expectSignedWith(again, newSecret, s.app.clientSecret);
    expect(again.raw.equals(first.raw)).toBe(true);
    const after = await logged(s.app.appId, s.partner.token, delivery.deliveryId);
    expect(after).toMatchObject({ status: 'success', attemptCount: 2, responseStatus: 200 });
    expect(after.requestHeaders['X-SVC-Hmac-SHA256']).toBe(again.headers['x-svc-hmac-sha256']);
  });

  it('a manifest delivery made before a rotation and first attempted after it is signed with the new secret', async () => {
    const tag = `pending${++seq}`;
    const s = await webhookStore(h, { extensions: { webhooks: [{ topic: 'orders/paid', uri: `${rx.url}/${tag}/manifest` }] } });
    await emitEvent(h, s.merchant.storeId, 'orders/paid', { id: 5 });
    await fanOutBatch(h.db, h.deps.secrets, () => h.clock.now());
    const [pending] = (await h.req('GET', logUrl(s.app.appId), { token: s.partner.token })).json().data.deliveries;
    expect(pending).toMatchObject({ status: 'pending', attemptCount: 0 });

    const newSecret = await rotate(s.app, s.partner.token);
    secretOf[`/${tag}/manifest`] = newSecret;
    await runDeliveries(h);
    const [only] = received(`/${tag}/manifest`);
    expectSignedWith(only, newSecret, s.app.clientSecret);
    const after = await logged(s.app.appId, s.partner.token, pending.deliveryId);
    expect(after).toMatchObject({ status: 'success', attemptCount: 1 });
    expect(after.requestHeaders['X-SVC-Hmac-SHA256']).toBe(only.headers['x-svc-hmac-sha256']);
  });

  it('GDPR deliveries redelivered after a rotation: the new client secret, at the gdprUrl and at the API subscription (C9.4)', async () => {
    const tag = `gdpr${++seq}`;
    const s = await storeWithApp(h, gdprAppBody(rx.url, tag));
    const sub = await subscribe(h, s.accessToken, 'customers/data_request', `${rx.url}/${tag}/sub`);
    const customer = await h.req('POST', '/customers', { token: s.merchant.token, body: { email: `ada-${tag}@example.com`, first_name: 'Ada' } });
    expect(customer.statusCode, customer.body).toBe(201);
    const c = customer.json().data;
    const res = await h.req('POST', '/apps/gdpr/data-request', { token: s.merchant.token, body: { customerId: c.id, customerEmail: c.email } });
    expect(res.statusCode, res.body).toBe(201);
    await gdprDispatcher(h.deps).settle();
    for (const p of ['data', 'sub']) expectSignedWith(received(`/${tag}/${p}`)[0], s.app.clientSecret, sub.secret);

    const newSecret = await rotate(s.app, s.partner.token);
    for (const p of ['data', 'sub']) secretOf[`/${tag}/${p}`] = newSecret;
    const gdpr = (await h.req('GET', logUrl(s.app.appId, '?topic=customers/data_request'), { token: s.partner.token })).json().data.deliveries;
    expect(gdpr.map((d: any) => d.source)).toEqual(['gdpr', 'gdpr']);
    for (const d of gdpr) await redeliver(s.app.appId, s.partner.token, d.deliveryId);
    await runDeliveries(h);

    for (const p of ['data', 'sub']) {
      const [first, again] = received(`/${tag}/${p}`);
      expect(again, p).toBeDefined();
      expectSignedWith(again, newSecret, s.app.clientSecret, sub.secret);
      expect(again.raw.equals(first.raw)).toBe(true);
      expect(again.headers['x-svc-gdpr-request-id']).toBe(res.json().data.requestId);
    }
    for (const d of gdpr) {
      const after = await logged(s.app.appId, s.partner.token, d.deliveryId);
      expect(after).toMatchObject({ status: 'success', attemptCount: 2, responseStatus: 200 });
      expect(verifySignature(Buffer.from(after.requestBody), after.requestHeaders['X-SVC-Hmac-SHA256'], newSecret)).toBe(true);
    }
  });

  it('a test delivery redelivered after a rotation is signed with the new secret', async () => {
    const tag = `test${++seq}`;
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const sent = await h.req('POST', `/apps/developer/${app.appId}/webhooks/test`, { token: partner.token, body: { topic: 'orders/create', address: `${rx.url}/${tag}` } });
    expect(sent.statusCode, sent.body).toBe(200);
    const { delivery } = sent.json().data;
    expectSignedWith(received(`/${tag}`)[0], app.clientSecret);

    const newSecret = await rotate(app, partner.token);
    secretOf[`/${tag}`] = newSecret;
    await redeliver(app.appId, partner.token, delivery.deliveryId);
    await runDeliveries(h);
    const [, again] = received(`/${tag}`);
    expectSignedWith(again, newSecret, app.clientSecret);
    expect(await logged(app.appId, partner.token, delivery.deliveryId)).toMatchObject({ status: 'success', attemptCount: 2 });
  });

  it('a client secret that cannot be opened fails the attempt unsent (signing_key_unreadable), never sent with the old signature', async () => {
    const tag = `unreadable${++seq}`;
    const s = await webhookStore(h, { extensions: { webhooks: [{ topic: 'orders/paid', uri: `${rx.url}/${tag}/manifest` }] } });
    await emitEvent(h, s.merchant.storeId, 'orders/paid', { id: 13 });
    await runDeliveries(h);
    const [delivery] = (await h.req('GET', logUrl(s.app.appId), { token: s.partner.token })).json().data.deliveries;
    expect(delivery).toMatchObject({ status: 'success', attemptCount: 1 });
    // Sealed under another SVC_SECRET (as after a changed configuration): it does not open.
    await h.db.query('UPDATE apps SET client_secret_enc = $2 WHERE id = $1', [s.app.appId, 'v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAA']);
    await redeliver(s.app.appId, s.partner.token, delivery.deliveryId);
    await runDeliveries(h);
    expect(received(`/${tag}/manifest`)).toHaveLength(1);
    const after = await logged(s.app.appId, s.partner.token, delivery.deliveryId);
    expect(after).toMatchObject({ status: 'failed', attemptCount: 2, requestHeaders: { ...delivery.requestHeaders, 'X-SVC-Delivery-Attempt': '2' } });
    expect(after.attempts.map((a: any) => a.error)).toEqual([null, 'signing_key_unreadable']);
  });

  it('a client secret that cannot be opened at fan-out holds back no other store\'s webhooks: its deliveries are made unsigned, fail unsent, and a rotation mends them', async () => {
    const [tagA, tagB] = [`fanA${++seq}`, `fanB${seq}`];
    const a = await webhookStore(h, { extensions: { webhooks: [{ topic: 'orders/paid', uri: `${rx.url}/${tagA}/manifest` }] } });
    const b = await webhookStore(h, { extensions: { webhooks: [{ topic: 'orders/paid', uri: `${rx.url}/${tagB}/manifest` }] } });
    await h.db.query('UPDATE apps SET client_secret_enc = $2 WHERE id = $1', [a.app.appId, 'v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAA']);
    await emitEvent(h, a.merchant.storeId, 'orders/paid', { id: 21 });
    await emitEvent(h, b.merchant.storeId, 'orders/paid', { id: 22 });
    await runDeliveries(h);
    // Store B's webhook went out; store A's was made (in the app's log) but not sent unsigned.
    expect(received(`/${tagB}/manifest`)).toHaveLength(1);
    expect(received(`/${tagA}/manifest`)).toHaveLength(0);
    const { rows } = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE fanned_out_at IS NULL AND store_id = ANY($1::uuid[])', [[a.merchant.storeId, b.merchant.storeId]]);
    expect(rows[0].n).toBe(0);
    const [delivery] = (await h.req('GET', logUrl(a.app.appId), { token: a.partner.token })).json().data.deliveries;
    const first = await logged(a.app.appId, a.partner.token, delivery.deliveryId);
    expect(first).toMatchObject({ status: 'retrying', attemptCount: 1 });
    expect(first.attempts.map((x: any) => x.error)).toEqual(['signing_key_unreadable']);
    // The developer rotates the secret: the retry is signed with the new one, and arrives.
    const secret = await rotate(a.app, a.partner.token);
    await h.advance(67); // the first retry is due 60 s after, +/- 10 % (retry-policy.ts)
    await runDeliveries(h);
    const [sent] = received(`/${tagA}/manifest`);
    expect(sent).toBeDefined();
    expectSignedWith(sent, secret);
    expect(await logged(a.app.appId, a.partner.token, delivery.deliveryId)).toMatchObject({ status: 'success', attemptCount: 2 });
  });

  it('the log of a delivery whose key never changed shows the signature made at creation, unchanged', async () => {
    const tag = `same${++seq}`;
    const s = await webhookStore(h, { extensions: { webhooks: [{ topic: 'orders/paid', uri: `${rx.url}/${tag}/manifest` }] } });
    statusOf[`/${tag}/manifest`] = 503;
    await emitEvent(h, s.merchant.storeId, 'orders/paid', { id: 11 });
    await runDeliveries(h);
    delete statusOf[`/${tag}/manifest`];
    const [before] = (await h.req('GET', logUrl(s.app.appId), { token: s.partner.token })).json().data.deliveries;
    await h.advance(1000);
    await runDeliveries(h);
    const after = await logged(s.app.appId, s.partner.token, before.deliveryId);
    expect(after).toMatchObject({ status: 'success', attemptCount: 2 });
    expect(after.requestHeaders).toEqual({ ...before.requestHeaders, 'X-SVC-Delivery-Attempt': '2' });
    for (const r of received(`/${tag}/manifest`)) expect(r.headers['x-svc-hmac-sha256']).toBe(before.requestHeaders['X-SVC-Hmac-SHA256']);
  });
});
