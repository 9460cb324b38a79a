// Manifest webhooks are filtered by the installation's granted scopes, as API subscriptions are
// (app-api.md Scopes and Rules 2, C6.4; docs/decisions.md): an app that declares `customers/create`
// in `extensions.webhooks` but was granted `read_shop` only must not receive customers' emails, phones
// and addresses. The rule holds at fan-out (C8.2) and again before every attempt (a retry after the
// merchant narrowed the scopes is 'scope_withdrawn'). The one exception is app-api.md's `orders/create`:
// "Every installed shipping app receives every `orders/create`" (an installation holding
// `write_shipping`, C15.3). Store-level webhooks (the merchant's own) are not filtered.
//
// Events are made through the merchant's own routes and delivered over real HTTP to a receiver on
// 127.0.0.1; the sweep at the end covers every subscribable topic, at the rule and end to end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { attemptsOf, emitEvent, runDeliveries, subscribe, type DeliveryRow } from './fixtures/webhook-setup.js';
import { createTestApp, installApp, signupMerchant, signupPartner, unique, type Merchant, type TestApp } from './helpers/actors.js';
import { insertProduct, orderBody, takeOrder } from './helpers/orders.js';
import { fanOutBatch } from '../src/webhooks/fanout.js';
import { targetGone } from '../src/webhooks/deliveries.repo.js';
import { appTargetTakesTopic, EVENT_TOPICS, GDPR_TOPICS, TOPICS } from '../src/webhooks/topics.js';

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

/** Every scope an app in this file may be granted; each install asks for a subset. */
const APP_SCOPES = ['read_shop', 'read_orders', 'read_products', 'read_inventory', 'read_customers', 'write_shipping'];

/**
 * The read scopes that open a topic, written out from the spec (C6.4; app-api.md Scopes), not taken
 * from the code under test: orders, refunds, fulfillments and subscriptions need `read_orders`,
 * products and inventory levels `read_products` or `read_inventory`, customers `read_customers`.
 */
function specReadScopes(topic: string): string[] | null {
  if (topic === 'shop/redact') return null;
  const group = topic.split('/')[0];
  if (group === 'customers') return ['read_customers'];
  if (group === 'products' || group === 'inventory_levels') return ['read_products', 'read_inventory'];
  if (['orders', 'refunds', 'fulfillments', 'subscriptions'].includes(group)) return ['read_orders'];
  throw new Error(`no read scope known for ${topic}`);
}

/** A merchant and a partner of their own. */
async function people() {
  return { merchant: await signupMerchant(h), partner: await signupPartner(h) };
}

/** An app whose manifest sends each of `topics` to `${rx.url}/${tag}/${topic}`. */
function manifestApp(partnerToken: string, tag: string, topics: readonly string[], extensions: Record<string, unknown> = {}): Promise<TestApp> {
  return createTestApp(h, partnerToken, {
    scopes: APP_SCOPES, tier: 'enterprise',
    extensions: { ...extensions, webhooks: topics.map((topic) => ({ topic, uri: `${rx.url}/${tag}/${topic}` })) },
  });
}

/** The app's manifest deliveries on the merchant's store, oldest first. */
async function manifestDeliveries(m: Merchant, app: TestApp): Promise<(DeliveryRow & { event_id: string })[]> {
  const { rows } = await h.db.query<DeliveryRow & { event_id: string }>(
    `SELECT * FROM webhook_deliveries WHERE store_id = $1 AND app_id = $2 AND source = 'manifest' ORDER BY created_at, id`,
    [m.storeId, app.appId],
  );
  return rows;
}

/** The store's events of `topic`, oldest first, with their payloads. */
async function eventsOfTopic(m: Merchant, topic: string): Promise<{ id: string; payload: unknown }[]> {
  const { rows } = await h.db.query<{ id: string; payload: unknown }>(
    'SELECT id, payload FROM events WHERE store_id = $1 AND topic = $2 ORDER BY created_at, id',
    [m.storeId, topic],
  );
  return rows;
}

/** What the receiver got under `/${tag}/`: [topic header, parsed body]. */
const receivedUnder = (tag: string) => rx.received.filter((r) => r.path.startsWith(`/${tag}/`)).map((r) => ({
  path: r.path, topic: r.headers['x-svc-topic'], body: JSON.parse(r.raw.toString('utf8')),
}));

/** A customer, an order and a product update, each through the merchant's own routes. */
async function customerOrderProduct(m: Merchant) {
  const customer = await h.req('POST', '/customers', {
    token: m.token,
    body: { email: `private-${unique()}@example.com`, first_name: 'Private', last_name: 'Person', phone: '+15550199', addresses: [{ address1: '1 Secret Lane', city: 'Oslo', country: 'NO' }] },
  });
  expect(customer.statusCode, customer.body).toBe(201);
  const product = await insertProduct(h, m.storeId);
  const order = await takeOrder(h, m.token, orderBody(product));
  const updated = await h.req('PUT', `/products/${product.id}`, { token: m.token, body: { title: `Renamed ${unique()}` } });
  expect(updated.statusCode, updated.body).toBe(200);
  return { order };
}

const fanOutOnly = () => fanOutBatch(h.db, h.deps.secrets, () => h.clock.now());

describe('a manifest webhook delivers only what the granted scopes open (app-api.md Scopes, Rules 2; C6.4, C8.2)', () => {
  it('granted read_shop only: no customers/create, orders/create or products/update reaches the manifest; read_customers granted later opens customers/create only', async () => {
    const { merchant, partner } = await people();
    const tag = `m-${unique()}`;
    const topics = ['customers/create', 'orders/create', 'products/update'] as const;
    const app = await manifestApp(partner.token, tag, topics);
    await installApp(h, merchant, app, 'read_shop');
    // The merchant's own store-level webhooks take every topic: the control that the events happened.
    const storeTag = `store-${unique()}`;
    for (const topic of topics) {
      const res = await h.req('POST', '/webhooks', { token: merchant.token, body: { topic, address: `${rx.url}/${storeTag}/${topic}` } });
      expect(res.statusCode, res.body).toBe(201);
    }

    await customerOrderProduct(merchant);
    await runDeliveries(h);
    const firstRound = { customers: (await eventsOfTopic(merchant, 'customers/create')).length, all: 0 };
    expect(firstRound.customers).toBeGreaterThanOrEqual(1);
    for (const topic of topics) expect((await eventsOfTopic(merchant, topic)).length, topic).toBeGreaterThanOrEqual(1);
    // (1) Nothing for the app: no delivery row, nothing on the wire.
    expect(await manifestDeliveries(merchant, app)).toEqual([]);
    expect(receivedUnder(tag)).toEqual([]);
    // The store webhooks got every one of them, unaffected by any app's scopes.
    const storeGot = receivedUnder(storeTag);
    expect(new Set(storeGot.map((r) => r.topic))).toEqual(new Set(topics));
    firstRound.all = storeGot.length;

    // (2) The merchant authorises the same app again, now with read_customers (C4.1).
    await installApp(h, merchant, app, 'read_shop,read_customers');
    await customerOrderProduct(merchant);
    await runDeliveries(h);
    const newCustomers = (await eventsOfTopic(merchant, 'customers/create')).slice(firstRound.customers);
    expect(newCustomers.length).toBeGreaterThanOrEqual(1);
    const rows = await manifestDeliveries(merchant, app);
    expect(rows.map((d) => [d.topic, d.event_id, d.status])).toEqual(newCustomers.map((e) => ['customers/create', e.id, 'success']));
    const got = receivedUnder(tag);
    expect(got.map((r) => [r.path, r.topic])).toEqual(newCustomers.map(() => [`/${tag}/customers/create`, 'customers/create']));
    expect(got.map((r) => r.body)).toEqual(newCustomers.map((e) => e.payload));
    // The store webhooks again got all three topics.
    expect(new Set(receivedUnder(storeTag).slice(firstRound.all).map((r) => r.topic))).toEqual(new Set(topics));
  });

  it('a shipping app (write_shipping, no read_orders) receives every orders/create, and no orders/updated or orders/cancelled', async () => {
    const { merchant, partner } = await people();
    const tag = `ship-${unique()}`;
    const app = await manifestApp(partner.token, tag, ['orders/create', 'orders/updated', 'orders/cancelled', 'customers/create'], {
      shipping: { ratesUrl: `${rx.url}/${tag}-rates` },
    });
    await installApp(h, merchant, app, 'read_shop,write_shipping');
    // A second app on the store declaring orders/create without write_shipping: not a shipping app.
    const otherTag = `plain-${unique()}`;
    const other = await manifestApp(partner.token, otherTag, ['orders/create']);
    await installApp(h, merchant, other, 'read_shop');

    const product = await insertProduct(h, merchant.storeId);
    const order = await takeOrder(h, merchant.token, orderBody(product));
    const cancel = await h.req('POST', `/orders/${order.orderId}/cancel`, { token: merchant.token, body: {} });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect((await eventsOfTopic(merchant, 'orders/updated')).length).toBeGreaterThanOrEqual(1);
    expect((await eventsOfTopic(merchant, 'orders/cancelled')).length).toBe(1);
    await runDeliveries(h);

    const [created] = await eventsOfTopic(merchant, 'orders/create');
    expect((await manifestDeliveries(merchant, app)).map((d) => [d.topic, d.event_id, d.status])).toEqual([['orders/create', created.id, 'success']]);
    expect(receivedUnder(tag).map((r) => [r.topic, r.body])).toEqual([['orders/create', created.payload]]);
    expect(await manifestDeliveries(merchant, other)).toEqual([]);
    expect(receivedUnder(otherTag)).toEqual([]);
  });

  it('an API subscription of a shipping app keeps orders/create when read_orders is withdrawn, and loses orders/updated', async () => {
    const { merchant, partner } = await people();
    const tag = `shipsub-${unique()}`;
    const app = await createTestApp(h, partner.token, { scopes: APP_SCOPES, tier: 'enterprise' });
    const first = await installApp(h, merchant, app, 'read_shop,read_orders,write_shipping');
    await subscribe(h, first.accessToken, 'orders/create', `${rx.url}/${tag}/orders/create`);
    await subscribe(h, first.accessToken, 'orders/updated', `${rx.url}/${tag}/orders/updated`);
    // The merchant authorises the app again without read_orders (C4.1).
    await installApp(h, merchant, app, 'read_shop,write_shipping');

    const product = await insertProduct(h, merchant.storeId);
    const order = await takeOrder(h, merchant.token, orderBody(product));
    expect((await h.req('POST', `/orders/${order.orderId}/cancel`, { token: merchant.token, body: {} })).statusCode).toBe(200);
    await runDeliveries(h);
    expect(receivedUnder(tag).map((r) => r.topic)).toEqual(['orders/create']);
  });
});

describe('the scope is checked again before every attempt: a manifest delivery is scope_withdrawn once the merchant narrows the grant (C4.1, C6.4)', () => {
  it('a customers/create made while read_customers was held, retried after the merchant re-authorised without it: not sent again', async () => {
    const { merchant, partner } = await people();
    const tag = `withdrawn-${unique()}`;
    failing.add(`/${tag}/customers/create`);
    const app = await manifestApp(partner.token, tag, ['customers/create']);
    await installApp(h, merchant, app, 'read_shop,read_customers');
    const res = await h.req('POST', '/customers', { token: merchant.token, body: { email: `private-${unique()}@example.com`, phone: '+15550100' } });
    expect(res.statusCode, res.body).toBe(201);
    await runDeliveries(h);
    const [first] = await manifestDeliveries(merchant, app);
    expect(first).toMatchObject({ topic: 'customers/create', status: 'retrying', attempt_count: 1 });
    expect(receivedUnder(tag)).toHaveLength(1);

    // The merchant authorises the app again without read_customers; the retry comes due 60 s (+/-10 %) later.
    await installApp(h, merchant, app, 'read_shop');
    await h.advance(70);
    await runDeliveries(h);
    expect(receivedUnder(tag)).toHaveLength(1);
    const [row] = await manifestDeliveries(merchant, app);
    expect(row).toMatchObject({ status: 'failed', attempt_count: 2, last_error: 'scope_withdrawn', next_attempt_at: null });
    expect((await attemptsOf(h, row.id)).map((a) => [a.attempt, a.response_status, a.error])).toEqual([[1, 500, null], [2, null, 'scope_withdrawn']]);

    // A redelivery the developer asks for is stopped the same way (C8.5).
    const redeliver = await h.req('POST', `/apps/developer/${app.appId}/webhook-deliveries/${row.id}/redeliver`, { token: partner.token });
    expect(redeliver.statusCode, redeliver.body).toBe(202);
    await runDeliveries(h);
    expect(receivedUnder(tag)).toHaveLength(1);
    expect((await manifestDeliveries(merchant, app))[0]).toMatchObject({ status: 'failed', last_error: 'scope_withdrawn' });
  });

  it('a shipping app\'s orders/create retried after read_orders was withdrawn is still sent (write_shipping kept)', async () => {
    const { merchant, partner } = await people();
    const tag = `shipretry-${unique()}`;
    const path = `/${tag}/orders/create`;
    failing.add(path);
    const app = await manifestApp(partner.token, tag, ['orders/create']);
    await installApp(h, merchant, app, 'read_orders,write_shipping');
    const product = await insertProduct(h, merchant.storeId);
    await takeOrder(h, merchant.token, orderBody(product));
    await runDeliveries(h);
    expect((await manifestDeliveries(merchant, app)).map((d) => [d.status, d.attempt_count])).toEqual([['retrying', 1]]);

    await installApp(h, merchant, app, 'read_shop,write_shipping');
    failing.delete(path);
    await h.advance(70);
    await runDeliveries(h);
    expect(receivedUnder(tag)).toHaveLength(2);
    expect((await manifestDeliveries(merchant, app))[0]).toMatchObject({ status: 'success', attempt_count: 2, last_error: null });
  });
});

describe('sweep: every subscribable topic needs its read scope, for manifest webhooks and API subscriptions alike', () => {
  // The scope sets an installation may hold: none of the read scopes, each one alone, and a shipping app's.
  const GRANTS: string[][] = [['read_shop'], ['read_orders'], ['read_products'], ['read_inventory'], ['read_customers'], ['read_shop', 'write_shipping']];
  const expected = (scopes: string[], topic: string) => {
    const needed = specReadScopes(topic);
    if (!needed || needed.some((s) => scopes.includes(s))) return true;
    return topic === 'orders/create' && scopes.includes('write_shipping');
  };

  it('the rule (appTargetTakesTopic) and the check before each attempt (targetGone) agree with the spec for every topic and grant', () => {
    expect(TOPICS).toEqual([...EVENT_TOPICS, ...GDPR_TOPICS]);
    for (const topic of TOPICS) {
      const needed = specReadScopes(topic);
      for (const source of ['manifest', 'subscription'] as const) {
        // Without any read scope, nothing (bar orders/create to a shipping app, and shop/redact, which needs none).
        expect(appTargetTakesTopic(source, ['read_shop'], topic), `${source} ${topic} read_shop`).toBe(needed === null);
        expect(appTargetTakesTopic(source, [], topic), `${source} ${topic} no scopes`).toBe(needed === null);
        // With each scope that opens it, delivered.
        for (const s of needed ?? []) expect(appTargetTakesTopic(source, ['read_shop', s], topic), `${source} ${topic} ${s}`).toBe(true);
        for (const scopes of GRANTS) {
          expect(appTargetTakesTopic(source, scopes, topic), `${source} ${topic} ${scopes}`).toBe(expected(scopes, topic));
          expect(targetGone({ source, target_gone: null, installation_scopes: scopes, topic }), `${source} ${topic} ${scopes}`)
            .toBe(expected(scopes, topic) ? null : 'scope_withdrawn');
        }
        // No installation scopes known: nothing goes (fails closed).
        expect(appTargetTakesTopic(source, null, topic)).toBe(false);
        // A write scope is not its read scope (app-api.md Rules 2; docs/decisions.md).
        if (needed) expect(appTargetTakesTopic(source, needed.map((s) => s.replace('read_', 'write_')), topic)).toBe(false);
      }
      // Store webhooks (the merchant's own), GDPR webhooks (owed to every app, C9) and test deliveries are not an app's grant.
      for (const source of ['store', 'gdpr', 'test'] as const) {
        expect(appTargetTakesTopic(source, null, topic)).toBe(true);
        expect(targetGone({ source, target_gone: null, installation_scopes: null, topic })).toBeNull();
      }
    }
    // The shipping exception is orders/create alone.
    const shipping = EVENT_TOPICS.filter((t) => appTargetTakesTopic('manifest', ['write_shipping'], t));
    expect(shipping).toEqual(['orders/create']);
  });

  it('end to end: one event of every event topic, fanned out to manifests declaring them all, reaches each installation for exactly the topics its grant opens', async () => {
    const { merchant, partner } = await people();
    const installs: { tag: string; app: TestApp; scopes: string[] }[] = [];
    for (const scopes of GRANTS) {
      const tag = `sweep-${unique()}`;
      const app = await manifestApp(partner.token, tag, EVENT_TOPICS);
      await installApp(h, merchant, app, scopes.join(','));
      installs.push({ tag, app, scopes });
    }
    for (const [i, topic] of EVENT_TOPICS.entries()) await emitEvent(h, merchant.storeId, topic, { id: i + 1, email: 'private@example.com' });
    await fanOutOnly();
    await runDeliveries(h);

    for (const { tag, app, scopes } of installs) {
      const want = EVENT_TOPICS.filter((t) => expected(scopes, t));
      const rows = await manifestDeliveries(merchant, app);
      expect(rows.map((d) => d.topic).sort(), scopes.join(',')).toEqual([...want].sort());
      expect(rows.every((d) => d.status === 'success'), scopes.join(',')).toBe(true);
      expect(receivedUnder(tag).map((r) => r.path).sort(), scopes.join(',')).toEqual(want.map((t) => `/${tag}/${t}`).sort());
    }
    // Every topic is withheld from the installation without its read scope and delivered to one with it.
    for (const topic of EVENT_TOPICS) {
      const holders = installs.filter((x) => receivedUnder(x.tag).some((r) => r.topic === topic)).map((x) => x.scopes.join(','));
      const needed = specReadScopes(topic)!;
      expect(holders.length, topic).toBeGreaterThan(0);
      expect(holders, topic).not.toContain('read_shop');
      for (const s of needed) expect(holders, topic).toContain(s);
    }
  });
});
