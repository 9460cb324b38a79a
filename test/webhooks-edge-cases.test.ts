// Edge cases of webhooks, the outbox and GDPR (C8, C9) found by probing: inputs that slipped past
// validation into a 500, or into a state that stopped delivery for everyone, and data that kept
// flowing to an app after the merchant withdrew the scope that opens it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { deliveriesOfStore, emitEvent, runDeliveries, subscribe, WEBHOOK_SCOPES, webhookStore } from './fixtures/webhook-setup.js';
import { createTestApp, installApp, signupMerchant, signupPartner } from './helpers/actors.js';
import { expectEnvelopeError } from './helpers/expect.js';

let h: Harness;
let rx: Receiver;
beforeAll(async () => {
  // Private addresses allowed (the development default): the receiver is on 127.0.0.1, and no
  // lookup is made when an address is saved.
  h = await createWebhookHarness();
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

/** Random text does not compress, so PostgreSQL cannot fit it into an index row by compressing it. */
const noise = (chars: number) => randomBytes(Math.ceil(chars / 2)).toString('hex').slice(0, chars);
/** A host name of about `chars` characters made of DNS-sized labels. */
const longHost = (chars: number) => Array.from({ length: Math.ceil(chars / 41) }, () => noise(40)).join('.');

describe('C8.9, C6.4, C6.5: target addresses are bounded (a long one was a 500)', () => {
  it('an API subscription address over 2048 characters is a 422 in the errors body; 2048 is taken', async () => {
    const s = await webhookStore(h);
    const long = `${rx.url}/${noise(6000)}`;
    const res = await h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { webhook: { topic: 'orders/create', address: long } } });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json()).toEqual({ errors: { address: [expect.stringContaining('2048')] } });

    const fits = `${rx.url}/`.padEnd(2048, 'a');
    const ok = await h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { webhook: { topic: 'orders/create', address: fits } } });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().webhook.address).toBe(fits);
  });

  it('a store webhook address over 2048 characters is a 422 envelope', async () => {
    const s = await webhookStore(h);
    const res = await h.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'orders/create', address: `${rx.url}/${noise(6000)}` } });
    expectEnvelopeError(res, 422, '2048');
  });

  it('a test delivery to such an address is a 422 and nothing is sent', async () => {
    const s = await webhookStore(h);
    const before = rx.received.length;
    const res = await h.req('POST', `/apps/developer/${s.app.appId}/webhooks/test`, {
      token: s.partner.token, body: { topic: 'orders/create', address: `${rx.url}/${noise(6000)}` },
    });
    expectEnvelopeError(res, 422, '2048');
    expect(rx.received.length).toBe(before);
  });

  it('a host name longer than DNS allows (253) is refused wherever an address is saved', async () => {
    const s = await webhookStore(h);
    const address = `https://${longHost(400)}/hook`;
    const sub = await h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { topic: 'orders/create', address } });
    expect(sub.statusCode, sub.body).toBe(422);
    expect(sub.json().errors.address).toEqual([expect.stringContaining('253')]);
    const partner = await signupPartner(h);
    const app = await h.req('POST', '/apps/developer/apps', {
      token: partner.token,
      body: { name: `Long host ${noise(6)}`, appUrl: 'https://app.example.com', scopes: ['read_orders'], extensions: { webhooks: [{ topic: 'orders/create', uri: address }] } },
    });
    expectEnvelopeError(app, 400, 'extensions.webhooks[0].uri');
  });
});

describe('C8.2 one target with a huge host name cannot stop the fan-out of every store', () => {
  it('a manifest webhook saved with a host of ~2900 characters: its delivery fails, the other stores still get theirs', async () => {
    // Saved before addresses were bounded (nothing refuses it now), so written as such a row would be.
    const bad = await webhookStore(h);
    const address = `https://${longHost(2900)}/hook`;
    await h.db.query(`UPDATE apps SET extensions = $2::jsonb WHERE id = $1`, [
      bad.app.appId, JSON.stringify({ webhooks: [{ topic: 'orders/create', uri: address }] }),
    ]);
    const good = await webhookStore(h);
    await subscribe(h, good.accessToken, 'orders/create', `${rx.url}/still-delivered`);

    await emitEvent(h, bad.merchant.storeId, 'orders/create', { id: 1 });
    await emitEvent(h, good.merchant.storeId, 'orders/create', { id: 2 });
    // Before the fix the fan-out batch failed on the queue's index ("index row size ... exceeds btree
    // version 4 maximum 2704"), and failed again at every wake-up: no store got any webhook.
    await runDeliveries(h);

    const [delivered] = await deliveriesOfStore(h, good.merchant.storeId);
    expect(delivered).toMatchObject({ status: 'success' });
    const [unreachable] = await deliveriesOfStore(h, bad.merchant.storeId);
    expect(unreachable).toMatchObject({ source: 'manifest', address });
    expect(unreachable.status).not.toBe('success');
  });
});

describe('C6.4, C4.6: an API subscription delivers only while the installation holds the topic\'s read scope', () => {
  it('re-authorised without read_customers: the customers/create subscription receives nothing; granted again, it delivers', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { scopes: WEBHOOK_SCOPES, tier: 'enterprise' });
    const first = await installApp(h, merchant, app);
    await subscribe(h, first.accessToken, 'customers/create', `${rx.url}/customers`);
    await subscribe(h, first.accessToken, 'products/create', `${rx.url}/products`);

    // The merchant re-authorises the app with fewer scopes (C4.1 `scope`): customer data is withdrawn.
    const narrowed = await installApp(h, merchant, app, 'read_shop,read_products');
    const { rows } = await h.db.query<{ scopes: string[] }>('SELECT scopes FROM installations WHERE id = $1', [narrowed.installationId]);
    expect(rows[0].scopes).toEqual(['read_shop', 'read_products']);
    // Subscribing now is refused (C6.4), and what was subscribed before must not keep the data flowing.
    const refused = await h.req('POST', '/api/v1/webhooks.json', { token: narrowed.accessToken, body: { topic: 'customers/update', address: `${rx.url}/customers` } });
    expect(refused.statusCode).toBe(403);

    await emitEvent(h, merchant.storeId, 'customers/create', { id: 1, email: 'private@example.com' });
    await emitEvent(h, merchant.storeId, 'products/create', { id: 2, title: 'Tee' });
    await runDeliveries(h);
    expect((await deliveriesOfStore(h, merchant.storeId)).map((d) => [d.topic, d.status])).toEqual([['products/create', 'success']]);
    expect(rx.received.filter((r) => r.path === '/customers')).toEqual([]);

    // Kept, not deleted: granted again, it delivers again.
    await installApp(h, merchant, app);
    await emitEvent(h, merchant.storeId, 'customers/create', { id: 3, email: 'later@example.com' });
    await runDeliveries(h);
    const topics = (await deliveriesOfStore(h, merchant.storeId)).map((d) => d.topic);
    expect(topics).toEqual(['products/create', 'customers/create']);
  });
});
