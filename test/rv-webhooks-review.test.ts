// A third review of webhooks (C6.4, C6.5, C8), by real HTTP against receivers on 127.0.0.1:
//  - the number of API subscriptions of an installation and of a store's own webhooks is bounded,
//    as manifest webhooks are (each one is a delivery per event: the count multiplies the fan-out);
//  - a fan-out done again (a database crash forgot its asynchronous commit after its deliveries had
//    gone out) gives each target the same X-SVC-Webhook-Id, so receivers can still deduplicate;
//  - a manifest webhook the app removed from its manifest is a target gone, like a deleted
//    subscription: its retries and redeliveries are not sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { attemptsOf, deliveriesOfStore, emitEvent, runDeliveries, subscribe, webhookStore } from './fixtures/webhook-setup.js';
import { MAX_STORE_WEBHOOKS, MAX_SUBSCRIPTIONS_PER_INSTALLATION } from '../src/webhooks/subscriptions.service.js';
import { fanOutBatch } from '../src/webhooks/fanout.js';

let h: Harness;
let rx: Receiver;
/** Paths answered 500 (their deliveries wait for a retry); everything else 200. */
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

describe('C6.4, C6.5: subscriptions are bounded like manifest webhooks (each is a delivery per event)', () => {
  it(`an installation takes at most ${MAX_SUBSCRIPTIONS_PER_INSTALLATION} API subscriptions: one more is a 422 errors body; a delete makes room`, async () => {
    const s = await webhookStore(h);
    const create = (i: number) => h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { webhook: { topic: 'orders/create', address: `${rx.url}/bound-${i}` } } });
    // Concurrent creates at the bound cannot pass it together.
    const first = await Promise.all(Array.from({ length: MAX_SUBSCRIPTIONS_PER_INSTALLATION + 5 }, (_, i) => create(i)));
    expect(first.filter((r) => r.statusCode === 201)).toHaveLength(MAX_SUBSCRIPTIONS_PER_INSTALLATION);
    const refused = first.filter((r) => r.statusCode !== 201);
    expect(refused.map((r) => r.statusCode)).toEqual([422, 422, 422, 422, 422]);
    expect(refused[0].json()).toEqual({ errors: { webhook: [`at most ${MAX_SUBSCRIPTIONS_PER_INSTALLATION} subscriptions per installation`] } });
    // One page of the maximum limit holds them all (the list pages by 50 by default, C5.4).
    const listed = (await h.req('GET', '/api/v1/webhooks.json?limit=250', { token: s.accessToken })).json().webhooks;
    expect(listed).toHaveLength(MAX_SUBSCRIPTIONS_PER_INSTALLATION);

    expect((await h.req('DELETE', `/api/v1/webhooks/${listed[0].id}.json`, { token: s.accessToken })).statusCode).toBe(200);
    expect((await create(1000)).statusCode).toBe(201);
    expect((await create(1001)).statusCode).toBe(422);
    // Another installation (another store) is not held back.
    const other = await webhookStore(h);
    expect((await subscribe(h, other.accessToken, 'orders/create', `${rx.url}/bound-other`)).id).toEqual(expect.any(String));
  }, 60_000);

  it(`a store takes at most ${MAX_STORE_WEBHOOKS} store-level webhooks: one more is a 422 envelope; a delete makes room`, async () => {
    const s = await webhookStore(h);
    const create = (i: number) => h.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'products/update', address: `${rx.url}/store-bound-${i}` } });
    const first = await Promise.all(Array.from({ length: MAX_STORE_WEBHOOKS + 5 }, (_, i) => create(i)));
    expect(first.filter((r) => r.statusCode === 201)).toHaveLength(MAX_STORE_WEBHOOKS);
    const refused = first.filter((r) => r.statusCode !== 201);
    expect(refused.map((r) => r.statusCode)).toEqual([422, 422, 422, 422, 422]);
    expect(refused[0].json()).toEqual({ status: 422, state: 'error', message: `at most ${MAX_STORE_WEBHOOKS} webhooks per store`, data: null, count: null, pagination: null });
    const list = (await h.req('GET', '/webhooks?limit=1', { token: s.merchant.token })).json();
    expect(list.pagination.totalResult).toBe(MAX_STORE_WEBHOOKS);
    expect((await h.req('DELETE', `/webhooks/${list.data.webhooks[0].id}`, { token: s.merchant.token })).statusCode).toBe(200);
    expect((await create(1000)).statusCode).toBe(201);
    expect((await create(1001)).statusCode).toBe(422);
  }, 60_000);
});

describe('C8.2: X-SVC-Webhook-Id is the idempotency key, also when a fan-out is done again', () => {
  it('a fan-out forgotten by a database crash after its deliveries went out is redone with the same webhook id for each target', async () => {
    const s = await webhookStore(h, { extensions: { webhooks: [{ topic: 'orders/create', uri: `${rx.url}/again-manifest` }] } });
    await subscribe(h, s.accessToken, 'orders/create', `${rx.url}/again-sub`);
    expect((await h.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'orders/create', address: `${rx.url}/again-store` } })).statusCode).toBe(201);
    const event = await emitEvent(h, s.merchant.storeId, 'orders/create', { id: 1, name: '#1001' });
    await runDeliveries(h);
    const paths = ['/again-manifest', '/again-sub', '/again-store'];
    const firstIds = paths.map((p) => received(p).map((r) => r.headers['x-svc-webhook-id']));
    expect(firstIds.map((ids) => ids.length)).toEqual([1, 1, 1]);

    // The fan-out commits asynchronously on PostgreSQL (docs/decisions.md "Webhooks"): a crash
    // within a fraction of a second forgets it, its deliveries and the event's mark, though the
    // receivers already have them. What the crash leaves, written by hand:
    await h.db.transaction(async (tx) => {
      await tx.query('DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE event_id = $1)', [event.id]);
      await tx.query('DELETE FROM webhook_deliveries WHERE event_id = $1', [event.id]);
      await tx.query('UPDATE events SET fanned_out_at = NULL WHERE id = $1', [event.id]);
    });
    await runDeliveries(h);
    const again = paths.map((p) => received(p).map((r) => r.headers['x-svc-webhook-id']));
    // Each target got the event twice, under one webhook id: the receiver sees a repeat it can drop.
    expect(again).toEqual(firstIds.map(([id]) => [id, id]));
    expect(new Set(again.map(([id]) => id)).size).toBe(3);
  });

  it('a fan-out repeated while its deliveries are still there adds none', async () => {
    const s = await webhookStore(h);
    await subscribe(h, s.accessToken, 'customers/update', `${rx.url}/repeat-sub`);
    const event = await emitEvent(h, s.merchant.storeId, 'customers/update', { id: 2 });
    await fanOutBatch(h.db, h.deps.secrets, () => h.clock.now());
    await h.db.query('UPDATE events SET fanned_out_at = NULL WHERE id = $1', [event.id]);
    await fanOutBatch(h.db, h.deps.secrets, () => h.clock.now());
    const { rows } = await h.db.query<{ event_id: string }>('SELECT event_id FROM webhook_deliveries WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows.map((d) => d.event_id)).toEqual([event.id]);
    expect((await h.db.query('SELECT fanned_out_at FROM events WHERE id = $1', [event.id])).rows[0].fanned_out_at).not.toBeNull();
  });
});

describe('C8.2, C8.3: a manifest webhook removed from the manifest is a target gone', () => {
  it('its retry is not sent and the delivery fails (manifest_webhook_removed); the manifest webhook kept still retries', async () => {
    const s = await webhookStore(h, {
      extensions: { webhooks: [{ topic: 'customers/create', uri: `${rx.url}/removed` }, { topic: 'customers/create', uri: `${rx.url}/kept` }] },
    });
    failing.add('/removed');
    failing.add('/kept');
    await emitEvent(h, s.merchant.storeId, 'customers/create', { id: 1, email: 'private@example.com' });
    await runDeliveries(h);
    expect((await deliveriesOfStore(h, s.merchant.storeId)).map((d) => d.status)).toEqual(['retrying', 'retrying']);

    // The developer drops the first address (a domain given up, say) from the manifest (C3.2).
    const patch = await h.req('PATCH', `/apps/developer/apps/${s.app.appId}`, {
      token: s.app.developerToken, body: { extensions: { webhooks: [{ topic: 'customers/create', uri: `${rx.url}/kept` }] } },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    await h.advance(70);
    await runDeliveries(h);
    expect(received('/removed')).toHaveLength(1);
    expect(received('/kept')).toHaveLength(2);
    const rows = await deliveriesOfStore(h, s.merchant.storeId);
    const removed = rows.find((d) => d.address.endsWith('/removed'))!;
    expect(removed).toMatchObject({ status: 'failed', attempt_count: 2, last_error: 'manifest_webhook_removed', next_attempt_at: null });
    expect((await attemptsOf(h, removed.id)).map((a) => [a.attempt, a.response_status, a.error])).toEqual([[1, 500, null], [2, null, 'manifest_webhook_removed']]);
    expect(rows.find((d) => d.address.endsWith('/kept'))).toMatchObject({ status: 'retrying', attempt_count: 2 });

    // A redelivery asked for later is not sent either.
    expect((await h.req('POST', logUrl(s.app.appId, `/${removed.id}/redeliver`), { token: s.partner.token })).statusCode).toBe(202);
    await runDeliveries(h);
    expect(received('/removed')).toHaveLength(1);
    // Declared again (same topic and address), it is a target again.
    const back = await h.req('PATCH', `/apps/developer/apps/${s.app.appId}`, {
      token: s.app.developerToken, body: { extensions: { webhooks: [{ topic: 'customers/create', uri: `${rx.url}/removed` }] } },
    });
    expect(back.statusCode).toBe(200);
    failing.delete('/removed');
    expect((await h.req('POST', logUrl(s.app.appId, `/${removed.id}/redeliver`), { token: s.partner.token })).statusCode).toBe(202);
    await runDeliveries(h);
    expect(received('/removed').map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['1', '4']);
  });
});
