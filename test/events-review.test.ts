// Review of events and webhook delivery (app-api.md Events; C8, C13, C14.10): every row of "Which
// operation emits which event" through the service's routes, then the outbox and the deliveries a
// real receiver got: exactly the row's topics, once each, with the documented headers, signature
// and payload shape, and nothing for another store or another app. Then what a Stripe renewal and a
// failed first charge emit (the table's rows and the Subscription lifecycle, C13.2), and two address
// forms test/address-safety.test.ts does not sweep (C8.9): several DNS answers at once, and an answer
// that turns private after the subscription was saved.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { eventsOf, type EventRow } from './helpers/events.js';
import { createTestApp, installApp, signupMerchant, storeWithApp } from './helpers/actors.js';
import { emit } from '../src/outbox/emit.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, verifySignature, type Receiver } from './fixtures/webhook-receiver.js';
import { deliveriesOfStore, runDeliveries, subscribe } from './fixtures/webhook-setup.js';
import { invoiceEvent, signStripe, subscriptionEvent, type SubscriptionRef } from './fixtures/webhook-stripe-events.js';
import { insertProduct, orderBody, takeOrder } from './helpers/orders.js';
import { EVENT_TOPICS } from '../src/webhooks/topics.js';
import { verifyMessage } from '../packages/app-sdk/src/webhooks.js';

// DNS for names under `.multi.test` (C8.9 review): each answers the list of addresses the test sets
// for it now, so a name can answer a public and a private address at once, or change its answer
// between save time and send time (DNS rebinding). Every other name goes to the real resolver.
const dnsAnswers = vi.hoisted(() => new Map<string, string[]>());
vi.mock('node:dns', async (original) => {
  const actual: any = await original();
  const answer = (host: string) => {
    const list = dnsAnswers.get(host.toLowerCase().replace(/\.$/, ''));
    return list?.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const lookup = (host: string, options: any, callback: any) => {
    const list = answer(host);
    if (!list) return actual.lookup(host, options, callback);
    process.nextTick(() => (options?.all ? callback(null, list) : callback(null, list[0].address, list[0].family)));
  };
  const promises = {
    ...actual.promises,
    lookup: async (host: string, options: any) => {
      const list = answer(host);
      if (!list) return actual.promises.lookup(host, options);
      return options?.all ? list : list[0];
    },
  };
  return { ...actual, default: { ...actual, lookup, promises }, lookup, promises };
});
vi.mock('node:dns/promises', async (original) => {
  const actual: any = await original();
  const dns = await import('node:dns');
  return { ...actual, default: { ...actual, lookup: dns.promises.lookup }, lookup: dns.promises.lookup };
});

const STRIPE_SECRET = 'whsec_review_0123456789';
const SCOPES = ['read_shop', 'read_products', 'read_orders', 'write_orders', 'read_customers'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let h: Harness;
let rx: Receiver;
beforeAll(async () => {
  h = await createWebhookHarness({ SVC_STRIPE_WEBHOOK_SECRET: STRIPE_SECRET });
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

/**
 * Store A with an app subscribed to every event topic (its secrets kept per topic), and the same
 * app on store B, subscribed to every topic as well: B must never receive A's events.
 */
async function subscribedStores(tag: string) {
  const a = await signupMerchant(h);
  const b = await signupMerchant(h);
  const partner = (await h.req('POST', '/auth/signup', { body: { email: `p-${tag}-${Date.now()}@example.com`, password: 'correct-horse', name: 'P', role: 'PARTNER' } })).json().data;
  const app = await createTestApp(h, partner.token, { scopes: SCOPES, tier: 'enterprise' });
  const onA = await installApp(h, a, app);
  const onB = await installApp(h, b, app);
  const secrets: Record<string, string> = {};
  for (const topic of EVENT_TOPICS) {
    secrets[topic] = (await subscribe(h, onA.accessToken, topic, `${rx.url}/${tag}/a`)).secret;
    await subscribe(h, onB.accessToken, topic, `${rx.url}/${tag}/b`);
  }
  return { a, b, app, onA, onB, secrets };
}

const postStripe = (body: unknown) => {
  const payload = JSON.stringify(body);
  return h.req('POST', '/payments/stripe/webhook', { payload, headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(payload, STRIPE_SECRET) } });
};

const ORDER_CREATE_KEYS = [
  'id', 'name', 'order_number', 'email', 'phone', 'financial_status', 'fulfillment_status', 'currency', 'total_price', 'subtotal_price',
  'shipping_price', 'created_at', 'customer', 'shipping_address', 'line_items', 'shipping_lines',
].sort();

const SUBSCRIPTION_KEYS = [
  'orderId', 'invoiceId', 'storeId', 'subscriptionId', 'customerId', 'customerEmail', 'status', 'planName', 'amount', 'currency',
  'billingInterval', 'billingIntervalCount', 'currentPeriodStart', 'currentPeriodEnd', 'trialEnd',
].sort();

function expectSubscriptionPayload(p: any, storeId: string, ref: SubscriptionRef) {
  expect(Object.keys(p).sort()).toEqual(SUBSCRIPTION_KEYS);
  expect(p).toMatchObject({ storeId, subscriptionId: ref.subscriptionId, orderId: ref.orderId });
  for (const k of ['orderId', 'invoiceId', 'storeId', 'subscriptionId', 'customerId', 'customerEmail', 'status', 'planName', 'currency', 'billingInterval']) {
    expect(typeof p[k], k).toBe('string');
  }
  expect(p.currency).toBe(p.currency.toLowerCase());
  expect(typeof p.amount).toBe('number');
  for (const k of ['billingIntervalCount', 'currentPeriodStart', 'currentPeriodEnd']) expect(Number.isInteger(p[k]), k).toBe(true);
  expect(p.trialEnd === null || Number.isInteger(p.trialEnd)).toBe(true);
}

describe('app-api.md "Which operation emits which event": every row, through the routes, to a real receiver', () => {
  it('each operation emits exactly its topics once; deliveries carry them with the documented headers and signature; store B gets nothing', async () => {
    const { a, b, onA, app, secrets } = await subscribedStores('table');
    const product = await insertProduct(h, a.storeId, { price: 1250, stock: 50 });
    const merchant = a.token;
    const paidOrder = async () => takeOrder(h, merchant, orderBody(product, { customer: undefined, paymentMethod: 'card' }));
    const pendingOrder = async () => takeOrder(h, merchant, orderBody(product, { customer: undefined, paymentMethod: 'cod' }));

    const rows: { operation: string; run: () => Promise<unknown>; topics: string[]; check?: (evs: EventRow[]) => void }[] = [];
    let created: any;
    rows.push({
      operation: 'Order created', topics: ['orders/create'],
      run: async () => { created = await pendingOrder(); },
      check: ([e]) => {
        expect(Object.keys(e.payload).sort()).toEqual(ORDER_CREATE_KEYS);
        expect(e.payload).not.toHaveProperty('storeId');
        expect(Object.keys(e.payload.line_items[0]).sort()).toEqual(['id', 'product_id', 'variant_id', 'title', 'quantity', 'price', 'sku'].sort());
        expect(Object.keys(e.payload.shipping_address).sort()).toEqual(['address1', 'address2', 'city', 'province', 'country', 'zip', 'phone'].sort());
        expect(e.payload.line_items[0].variant_id).toBe(e.payload.line_items[0].product_id);
        expect(e.payload.total_price).toMatch(/^\d+\.\d{2}$/);
      },
    });
    let toRefund: any;
    let toPosRefund: any;
    let toCancel: any[] = [];
    rows.push({
      operation: 'Order refunded, full', topics: ['refunds/create', 'orders/updated', 'orders/cancelled'],
      run: () => h.req('POST', `/orders/${toRefund.orderId}/refund`, { token: merchant, body: { reason: 'customer' } }),
      check: ([refund, updated, cancelled]) => {
        expect(refund.payload).toMatchObject({ order_id: toRefund.orderId, refund_line_items: expect.any(Array), transactions: [expect.objectContaining({ kind: 'refund', amount: '12.50' })] });
        expect(updated.payload).toMatchObject({ id: toRefund.orderId, financial_status: 'refunded', cancelled: true });
        expect(cancelled.payload).toEqual(updated.payload);
        expect(updated.payload).not.toHaveProperty('storeId');
      },
    });
    rows.push({
      operation: 'Order refunded, point-of-sale', topics: ['refunds/create'],
      run: () => h.req('POST', `/orders/${toPosRefund.orderId}/refund`, { token: merchant, body: { pos: true } }),
    });
    rows.push({
      operation: 'Merchant cancels an order (cancel route)', topics: ['orders/updated', 'orders/cancelled'],
      run: () => h.req('POST', `/orders/${toCancel[0].orderId}/cancel`, { token: merchant, body: {} }),
    });
    rows.push({
      operation: 'Merchant cancels an order (PUT update)', topics: ['orders/updated', 'orders/cancelled'],
      run: () => h.req('PUT', `/orders/update/${toCancel[1].orderId}`, { token: merchant, body: { status: 'canceled' } }),
    });
    rows.push({
      operation: 'Merchant cancels an order (PATCH single update)', topics: ['orders/updated', 'orders/cancelled'],
      run: () => h.req('PATCH', `/orders/update-signle-order/${toCancel[2].orderId}`, { token: merchant, body: { status: 'canceled' } }),
    });
    let fulfillmentId = '';
    rows.push({
      operation: 'Fulfillment created', topics: ['fulfillments/create'],
      run: async () => {
        const res = await h.req('POST', `/api/v1/orders/${created.orderId}/fulfillments.json`, { token: onA.accessToken, body: { status: 'open' } });
        expect(res.statusCode, res.body).toBe(201);
        fulfillmentId = res.json().data.fulfillment.fulfillmentId;
      },
      check: ([e]) => expect(e.payload).toMatchObject({ fulfillmentId, orderId: created.orderId }),
    });
    rows.push({
      operation: 'Fulfillment updated', topics: ['fulfillments/update'],
      run: async () => {
        const res = await h.req('PUT', `/api/v1/fulfillments/${fulfillmentId}.json`, { token: onA.accessToken, body: { tracking_number: 'TRK-1' } });
        expect(res.statusCode, res.body).toBe(200);
      },
    });
    const ref: SubscriptionRef = { subscriptionId: `sub_review_${Date.now().toString(36)}`, storeId: a.storeId, orderId: 'order-review-1' };
    const stripeRows: [string, () => unknown, string][] = [
      ['first successful charge', () => invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_create' }), 'subscriptions/create'],
      ['automatic renewal charge', () => invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_cycle', newShape: true }), 'subscriptions/renew'],
      ['subscription changed', () => subscriptionEvent('customer.subscription.updated', ref, 'active'), 'subscriptions/update'],
      ['renewal charge fails', () => invoiceEvent('invoice.payment_failed', ref), 'subscriptions/payment_failed'],
      ['subscription ended', () => subscriptionEvent('customer.subscription.deleted', ref, 'canceled'), 'subscriptions/cancelled'],
    ];
    for (const [operation, make, topic] of stripeRows) {
      rows.push({
        operation: `Payment processor: ${operation}`, topics: [topic],
        run: async () => {
          const res = await postStripe(make());
          expect(res.statusCode, res.body).toBe(200);
          expect(res.json().data.topic).toBe(topic);
        },
        check: ([e]) => expectSubscriptionPayload(e.payload, a.storeId, ref),
      });
    }

    // Orders the rows act on, taken before any row runs (their own events are not the rows').
    toRefund = await paidOrder();
    toPosRefund = await paidOrder();
    toCancel = [await pendingOrder(), await pendingOrder(), await pendingOrder()];
    await runDeliveries(h);
    rx.received.length = 0;

    for (const row of rows) {
      const evs = await eventsOf(h, a.storeId, row.run);
      expect(evs.map((e) => e.topic), row.operation).toEqual(row.topics);
      row.check?.(evs);
      const before = (await deliveriesOfStore(h, a.storeId)).length;
      await runDeliveries(h);
      const fresh = (await deliveriesOfStore(h, a.storeId)).slice(before);
      // One delivery per event (the one subscription of its topic), each sent once, successfully.
      expect(fresh.map((d) => d.topic), row.operation).toEqual(row.topics);
      for (const [i, d] of fresh.entries()) {
        expect(d.status, row.operation).toBe('success');
        const [req, ...more] = rx.byWebhookId(d.webhook_id);
        expect(more, row.operation).toEqual([]);
        expect(req.path).toBe('/table/a');
        expect(req.headers['x-svc-topic']).toBe(row.topics[i]);
        expect(req.headers['x-svc-shop-domain']).toBe(a.slug);
        expect(req.headers['x-svc-api-version']).toBe('2026-06');
        expect(req.headers['x-svc-delivery-attempt']).toBe('1');
        expect(req.headers['x-svc-webhook-id']).toMatch(UUID);
        expect(req.headers['content-type']).toBe('application/json');
        expect(req.headers).not.toHaveProperty('x-svc-gdpr-request-id');
        expect(req.raw.toString('utf8')).toBe(d.request_body);
        expect(JSON.parse(d.request_body!)).toEqual(evs[i].payload);
        expect(verifySignature(req.raw, req.headers['x-svc-hmac-sha256'], secrets[row.topics[i]])).toBe(true);
        // The SDK's receiver check, over the exact bytes, with the subscription's own secret.
        const verified = verifyMessage({ rawBody: req.raw, headers: req.headers as Record<string, string>, secret: secrets[row.topics[i]] });
        expect(verified).toMatchObject({ ok: true, topic: row.topics[i], shop: a.slug });
        expect(verifyMessage({ rawBody: req.raw, headers: req.headers as Record<string, string>, secret: app.clientSecret })).toEqual({ ok: false, reason: 'bad signature' });
      }
    }
    // Tenant isolation: store B's subscriptions (same app, every topic) received nothing of A's.
    expect(rx.received.filter((r) => r.path === '/table/b')).toEqual([]);
    expect(await deliveriesOfStore(h, b.storeId)).toEqual([]);
  });
});

describe('C6.4 tenant isolation of the subscriptions API', () => {
  it("an app lists only its own installation's subscriptions and cannot delete another app's or another store's", async () => {
    const a = await signupMerchant(h);
    const partner = (await h.req('POST', '/auth/signup', { body: { email: `p-iso-${Date.now()}@example.com`, password: 'correct-horse', name: 'P', role: 'PARTNER' } })).json().data;
    const app1 = await createTestApp(h, partner.token, { scopes: SCOPES, tier: 'enterprise' });
    const app2 = await createTestApp(h, partner.token, { scopes: SCOPES, tier: 'enterprise' });
    const b = await signupMerchant(h);
    const one = await installApp(h, a, app1);
    const two = await installApp(h, a, app2);
    const oneOnB = await installApp(h, b, app1);
    const sub1 = await subscribe(h, one.accessToken, 'orders/create', `${rx.url}/iso/1`);
    const sub2 = await subscribe(h, two.accessToken, 'orders/create', `${rx.url}/iso/2`);
    const sub1b = await subscribe(h, oneOnB.accessToken, 'orders/create', `${rx.url}/iso/1b`);
    const ids = async (token: string) => (await h.req('GET', '/api/v1/webhooks.json', { token })).json().webhooks.map((w: any) => w.id);
    expect(await ids(one.accessToken)).toEqual([sub1.id]);
    expect(await ids(two.accessToken)).toEqual([sub2.id]);
    expect(await ids(oneOnB.accessToken)).toEqual([sub1b.id]);
    for (const [token, foreign] of [[one.accessToken, sub2.id], [one.accessToken, sub1b.id], [oneOnB.accessToken, sub1.id]]) {
      const res = await h.req('DELETE', `/api/v1/webhooks/${foreign}.json`, { token });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ errors: { base: [expect.any(String)] } });
    }
    expect(await ids(two.accessToken)).toEqual([sub2.id]);
    expect(await ids(oneOnB.accessToken)).toEqual([sub1b.id]);
  });
});

describe('app-api.md Events table and Subscription lifecycle: what a Stripe renewal or a first failed charge emits (C13.2)', () => {
  // Stripe marks what a customer.subscription.updated changed in data.previous_attributes (the whole
  // previous array for `items`). A renewal sends one besides invoice.paid: the period rolls over.
  const withPrevious = (e: any, previous: Record<string, unknown>) => ({ ...e, data: { ...e.data, previous_attributes: previous } });
  const item = (priceId: string, quantity: number, start: number) => ({
    id: 'si_1', price: { id: priceId, object: 'price', nickname: 'Pro monthly', currency: 'usd', unit_amount: 1999, recurring: { interval: 'month', interval_count: 1 } },
    quantity, current_period_start: start, current_period_end: start + 2_678_400,
  });

  async function started() {
    const a = await signupMerchant(h);
    const ref: SubscriptionRef = { subscriptionId: `sub_rv_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`, storeId: a.storeId, orderId: 'order-rv' };
    expect((await postStripe(invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_create' }))).json().data.topic).toBe('subscriptions/create');
    return { a, ref };
  }
  const topicsOf = async (storeId: string, work: () => Promise<unknown>) => (await eventsOf(h, storeId, work)).map((e) => e.topic);

  it('a renewal emits subscriptions/renew only: the update Stripe sends for the new period (either API shape) is no subscriptions/update', async () => {
    const { a, ref } = await started();
    const topics = await topicsOf(a.storeId, async () => {
      expect((await postStripe(invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_cycle' }))).json().data.topic).toBe('subscriptions/renew');
      // Before API version 2025-03-31: the periods at the top level.
      const legacy = withPrevious(subscriptionEvent('customer.subscription.updated', ref, 'active'), {
        current_period_start: 1_764_547_200, current_period_end: 1_767_225_600, latest_invoice: 'in_old',
      });
      const r1 = await postStripe(legacy);
      expect(r1.statusCode).toBe(200);
      expect(r1.json().data).toMatchObject({ received: true, duplicate: false, topic: null });
      // Basil and later: the periods on the items (the whole previous items array), same price and quantity.
      const basil = withPrevious(subscriptionEvent('customer.subscription.updated', ref, 'active'), {
        items: { object: 'list', data: [item('price_pro', 2, 1_764_547_200)] }, latest_invoice: 'in_old',
      });
      const r2 = await postStripe(basil);
      expect(r2.statusCode).toBe(200);
      expect(r2.json().data).toMatchObject({ received: true, duplicate: false, topic: null });
    });
    expect(topics).toEqual(['subscriptions/renew']);
  });

  it('plan, quantity and status changes (trial to active too) emit subscriptions/update; other changes nothing; no previous_attributes still emits', async () => {
    const { a, ref } = await started();
    const cases: [string, Record<string, unknown> | null, string | null][] = [
      ['plan', { items: { object: 'list', data: [item('price_basic', 2, 1_767_225_600)] } }, 'subscriptions/update'],
      ['quantity', { items: { object: 'list', data: [item('price_pro', 1, 1_767_225_600)] } }, 'subscriptions/update'],
      ['status (trial to active)', { status: 'trialing', trial_end: 1_767_225_600 }, 'subscriptions/update'],
      ['legacy plan', { plan: { id: 'plan_basic' } }, 'subscriptions/update'],
      ['metadata only', { metadata: { note: 'x' } }, null],
      ['payment method only', { default_payment_method: 'pm_old' }, null],
      ['not told what changed', null, 'subscriptions/update'],
    ];
    for (const [what, previous, topic] of cases) {
      const e = subscriptionEvent('customer.subscription.updated', ref, 'active');
      const res = await postStripe(previous ? withPrevious(e, previous) : e);
      expect(res.statusCode, what).toBe(200);
      expect(res.json().data.topic, what).toBe(topic);
    }
  });

  it('a failed first charge emits nothing (the lifecycle starts at the first successful charge); a failed renewal emits subscriptions/payment_failed', async () => {
    const a = await signupMerchant(h);
    const ref: SubscriptionRef = { subscriptionId: `sub_rv_f_${Date.now().toString(36)}`, storeId: a.storeId, orderId: 'order-rv-f' };
    const topics = await topicsOf(a.storeId, async () => {
      const first = await postStripe(invoiceEvent('invoice.payment_failed', ref, { billingReason: 'subscription_create' }));
      expect(first.statusCode).toBe(200);
      expect(first.json().data).toMatchObject({ topic: null, ignored: 'unmapped' });
      expect((await postStripe(invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_create' }))).json().data.topic).toBe('subscriptions/create');
      expect((await postStripe(invoiceEvent('invoice.payment_failed', ref, { billingReason: 'subscription_cycle' }))).json().data.topic).toBe('subscriptions/payment_failed');
    });
    expect(topics).toEqual(['subscriptions/create', 'subscriptions/payment_failed']);
  });

  it('once the subscription has started, a failed charge is subscriptions/payment_failed whatever its billing reason (C13.2)', async () => {
    const a = await signupMerchant(h);
    const ref: SubscriptionRef = { subscriptionId: `sub_rv_g_${Date.now().toString(36)}`, storeId: a.storeId, orderId: 'order-rv-g' };
    const topics = await topicsOf(a.storeId, async () => {
      expect((await postStripe(invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_create' }))).json().data.topic).toBe('subscriptions/create');
      expect((await postStripe(invoiceEvent('invoice.payment_failed', ref, { billingReason: 'subscription_create' }))).json().data.topic).toBe('subscriptions/payment_failed');
    });
    expect(topics).toEqual(['subscriptions/create', 'subscriptions/payment_failed']);
  });
});

describe('C8.9 address forms not swept by test/address-safety.test.ts: several DNS answers, and an answer that changes after saving', () => {
  let strict: Harness;
  beforeAll(async () => {
    strict = await createWebhookHarness({ SVC_ALLOW_PRIVATE_WEBHOOKS: '0' });
  });
  afterAll(() => strict?.close());

  it('a name answering a public and a private address (either order, IPv4 or IPv6) is refused when saved', async () => {
    const s = await webhookStoreOn(strict);
    const cases: [string, string[]][] = [
      ['pub-first.multi.test', ['1.1.1.1', '127.0.0.1']],
      ['priv-first.multi.test', ['10.0.0.5', '1.1.1.1']],
      ['v6-mapped.multi.test', ['2606:4700:4700::1111', '::ffff:169.254.169.254']],
      ['v6-ula.multi.test', ['1.1.1.1', 'fd00:ec2::254']],
    ];
    for (const [name, answers] of cases) dnsAnswers.set(name, answers);
    for (const [name] of cases) {
      const res = await strict.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { webhook: { topic: 'orders/create', address: `https://${name}/hook` } } });
      expect(res.statusCode, name).toBe(422);
      expect(res.json(), name).toEqual({ errors: { address: ['points at a private address'] } });
    }
  });

  it('a name public when subscribed and private (or both) at send time: the delivery is not sent and fails with blocked_address', async () => {
    const s = await webhookStoreOn(strict);
    const names = ['flip-v4.multi.test', 'flip-v6.multi.test', 'flip-both.multi.test'];
    for (const name of names) dnsAnswers.set(name, ['1.1.1.1']);
    for (const name of names) await subscribe(strict, s.accessToken, 'orders/create', `https://${name}:${rx.port}/hook`);
    dnsAnswers.set('flip-v4.multi.test', ['127.0.0.1']);
    dnsAnswers.set('flip-v6.multi.test', ['::ffff:127.0.0.1']);
    dnsAnswers.set('flip-both.multi.test', ['1.1.1.1', '127.0.0.1']);
    const before = rx.received.length;
    await strict.db.transaction((tx) => emit(tx, { storeId: s.merchant.storeId, topic: 'orders/create', payload: { id: 1 }, now: strict.clock.now() }));
    await runDeliveries(strict);
    const rows = await deliveriesOfStore(strict, s.merchant.storeId);
    expect(rows.map((r) => [new URL(r.address).hostname, r.status, r.attempt_count, r.last_error]).sort()).toEqual(
      names.map((n) => [n, 'failed', 1, 'blocked_address']).sort(),
    );
    expect(rx.received.length).toBe(before);
  });
});

const webhookStoreOn = (harness: Harness) => storeWithApp(harness, { scopes: SCOPES, tier: 'enterprise', appUrl: 'https://1.1.1.1' });

