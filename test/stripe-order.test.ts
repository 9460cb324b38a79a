// Stripe does not deliver events in the order it makes them (C13). An event about a subscription
// whose subscriptions/create (the first invoice.paid, C13.2) has not arrived yet is held and emitted
// right after the create, in Stripe's order; an event older than one already applied does not
// take the subscription back. Each app-facing subscription event is emitted once, whatever the order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { events } from './helpers/events.js';
import { operatorToken } from './helpers/actors.js';
import { HELD_EVENT_RETENTION_MS } from '../src/payments/stripe.jobs.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { deliveriesOfStore, runDeliveries, subscribe, webhookStore } from './fixtures/webhook-setup.js';
import { invoiceEvent, signStripe, subscriptionEvent, type SubscriptionRef } from './fixtures/webhook-stripe-events.js';

const SECRET = 'whsec_order_0123456789';
let h: Harness;
let rx: Receiver;
beforeAll(async () => {
  h = await createWebhookHarness({ SVC_STRIPE_WEBHOOK_SECRET: SECRET });
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

function post(body: unknown) {
  const payload = JSON.stringify(body);
  return h.req('POST', '/payments/stripe/webhook', { payload, headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(payload, SECRET) } });
}

async function accepted(body: unknown) {
  const res = await post(body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { received: boolean; duplicate: boolean; topic: string | null; ignored?: string };
}

let seq = 0;
async function newSubscription() {
  const s = await webhookStore(h);
  const ref: SubscriptionRef = { subscriptionId: `sub_ord_${Date.now().toString(36)}_${++seq}`, storeId: s.merchant.storeId, orderId: `order-ord-${seq}` };
  return { s, ref };
}

/** Stripe's `created` (Unix seconds) of an event: the order Stripe made them in. */
const T = Math.floor(Date.now() / 1000) - 600;
function at<E extends { created: number }>(created: number, e: E): E {
  e.created = created;
  return e;
}

const create = (ref: SubscriptionRef, created: number) => at(created, invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_create' }));
const renew = (ref: SubscriptionRef, created: number) => at(created, invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_cycle', newShape: true }));
const failed = (ref: SubscriptionRef, created: number) => at(created, invoiceEvent('invoice.payment_failed', ref, { billingReason: 'subscription_cycle' }));
const cancelled = (ref: SubscriptionRef, created: number) => at(created, subscriptionEvent('customer.subscription.deleted', ref, 'canceled'));
function updated(ref: SubscriptionRef, created: number, status: string, quantity = 2) {
  const e = at(created, subscriptionEvent('customer.subscription.updated', ref, status));
  (e.data.object as any).items.data[0].quantity = quantity;
  return e;
}

async function stored(subscriptionId: string) {
  const { rows } = await h.db.query<{ order_id: string; invoice_number: string; customer_email: string; cancelled_at: Date | null }>(
    'SELECT order_id, invoice_number, customer_email, cancelled_at FROM payment_subscriptions WHERE id = $1', [subscriptionId]);
  return rows[0];
}
const topicsOf = async (storeId: string) => (await events(h, storeId)).map((e) => e.topic);

describe('an event before the subscription\'s create is held, then emitted right after it (C13.2, app-api.md Subscription lifecycle)', () => {
  it('customer.subscription.updated before the create: acknowledged, nothing emitted; the late create emits create then update, once; the final state is right', async () => {
    const { s, ref } = await newSubscription();
    await subscribe(h, s.accessToken, 'subscriptions/create', `${rx.url}/order`);
    await subscribe(h, s.accessToken, 'subscriptions/update', `${rx.url}/order`);
    const early = updated(ref, T + 5, 'active', 3);
    expect(await accepted(early)).toEqual({ received: true, duplicate: false, topic: null, ignored: 'awaiting_create' });
    expect(await topicsOf(s.merchant.storeId)).toEqual([]);
    // Stripe retries what it did not see acknowledged: an id seen before changes nothing.
    expect(await accepted(early)).toEqual({ received: true, duplicate: true, topic: null });

    const first = create(ref, T);
    expect(await accepted(first)).toEqual({ received: true, duplicate: false, topic: 'subscriptions/create' });
    const written = await events(h, s.merchant.storeId);
    expect(written.map((e) => e.topic)).toEqual(['subscriptions/create', 'subscriptions/update']);
    expect(written[0].payload).toMatchObject({ subscriptionId: ref.subscriptionId, orderId: ref.orderId, invoiceId: first.data.object.number, status: 'active', amount: 19.99 });
    // The held update is filled from the create as an in-order update is: invoice number and email.
    expect(written[1].payload).toMatchObject({
      subscriptionId: ref.subscriptionId, orderId: ref.orderId, invoiceId: first.data.object.number, customerEmail: 'buyer@example.com', status: 'active', amount: 59.97,
    });
    expect(await stored(ref.subscriptionId)).toMatchObject({ order_id: ref.orderId, invoice_number: first.data.object.number, customer_email: 'buyer@example.com', cancelled_at: null });

    // Neither event emits again: not the create resent, not the update resent.
    expect(await accepted(first)).toMatchObject({ duplicate: true });
    expect(await accepted(early)).toMatchObject({ duplicate: true });
    expect(await topicsOf(s.merchant.storeId)).toEqual(['subscriptions/create', 'subscriptions/update']);
    await runDeliveries(h);
    const sent = (await deliveriesOfStore(h, s.merchant.storeId)).map((d) => [d.topic, d.status]);
    expect(sent).toEqual([['subscriptions/create', 'success'], ['subscriptions/update', 'success']]);

    // Later events go on as usual.
    expect((await accepted(renew(ref, T + 60))).topic).toBe('subscriptions/renew');
  });

  it('a renewal invoice.paid and a renewal invoice.payment_failed before the create: held, then emitted in the order Stripe made them', async () => {
    const { s, ref } = await newSubscription();
    const paid = renew(ref, T + 20);
    const fail = failed(ref, T + 10);
    expect(await accepted(paid)).toMatchObject({ topic: null, ignored: 'awaiting_create' });
    expect(await accepted(fail)).toMatchObject({ topic: null, ignored: 'awaiting_create' });
    expect(await topicsOf(s.merchant.storeId)).toEqual([]);
    expect((await accepted(create(ref, T))).topic).toBe('subscriptions/create');
    const written = await events(h, s.merchant.storeId);
    expect(written.map((e) => e.topic)).toEqual(['subscriptions/create', 'subscriptions/payment_failed', 'subscriptions/renew']);
    expect(written[1].payload).toMatchObject({ invoiceId: fail.data.object.number, status: 'past_due' });
    expect(written[2].payload).toMatchObject({ invoiceId: paid.data.object.number, status: 'active' });
    // The newest invoice is the one later events borrow.
    expect((await stored(ref.subscriptionId)).invoice_number).toBe(paid.data.object.number);
  });

  it('customer.subscription.deleted before the create: the create, then the cancel; nothing after', async () => {
    const { s, ref } = await newSubscription();
    expect(await accepted(cancelled(ref, T + 30))).toMatchObject({ topic: null, ignored: 'awaiting_create' });
    expect(await accepted(updated(ref, T + 10, 'active'))).toMatchObject({ topic: null, ignored: 'awaiting_create' });
    expect((await accepted(create(ref, T))).topic).toBe('subscriptions/create');
    expect(await topicsOf(s.merchant.storeId)).toEqual(['subscriptions/create', 'subscriptions/update', 'subscriptions/cancelled']);
    expect((await stored(ref.subscriptionId)).cancelled_at).not.toBeNull();
    expect(await accepted(renew(ref, T + 40))).toMatchObject({ topic: null, ignored: 'subscription_cancelled' });
    expect(await topicsOf(s.merchant.storeId)).toEqual(['subscriptions/create', 'subscriptions/update', 'subscriptions/cancelled']);
  });

  it('a held event Stripe made before the create (before the subscription started) is dropped when the create lands', async () => {
    const { s, ref } = await newSubscription();
    expect(await accepted(updated(ref, T - 5, 'incomplete'))).toMatchObject({ ignored: 'awaiting_create' });
    expect(await accepted(updated(ref, T, 'active'))).toMatchObject({ ignored: 'awaiting_create' });
    expect((await accepted(create(ref, T))).topic).toBe('subscriptions/create');
    const written = await events(h, s.merchant.storeId);
    // The same second is not older: that update is emitted.
    expect(written.map((e) => [e.topic, e.payload.status])).toEqual([['subscriptions/create', 'active'], ['subscriptions/update', 'active']]);
  });

  it('an early event naming no store of ours is still no_store, and a create naming no store releases nothing', async () => {
    const { s, ref } = await newSubscription();
    const stranger = { ...ref, storeId: '0190a0a0-0000-7000-8000-000000000000' };
    expect(await accepted(updated(stranger, T + 5, 'active'))).toMatchObject({ topic: null, ignored: 'no_store' });
    expect(await accepted(updated(ref, T + 5, 'active'))).toMatchObject({ topic: null, ignored: 'awaiting_create' });
    expect(await accepted(create(stranger, T))).toMatchObject({ topic: null, ignored: 'no_store' });
    expect(await topicsOf(s.merchant.storeId)).toEqual([]);
    expect((await accepted(create(ref, T))).topic).toBe('subscriptions/create');
    expect(await topicsOf(s.merchant.storeId)).toEqual(['subscriptions/create', 'subscriptions/update']);
  });

  it('an early event naming no store at all is held, and its create (which names the store) releases it to that store', async () => {
    const { s, ref } = await newSubscription();
    const storeless = updated(ref, T + 5, 'active', 4);
    (storeless.data.object as { metadata: Record<string, string> }).metadata = {};
    const renewal = at(T + 10, invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_cycle', metadata: {} }));
    expect(await accepted(storeless)).toMatchObject({ topic: null, ignored: 'awaiting_create' });
    expect(await accepted(renewal)).toMatchObject({ topic: null, ignored: 'awaiting_create' });
    // A create naming no store cannot say whose they are: they stay held.
    const anonymousCreate = at(T, invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_create', metadata: {} }));
    expect(await accepted(anonymousCreate)).toMatchObject({ topic: null, ignored: 'no_store' });
    expect(await topicsOf(s.merchant.storeId)).toEqual([]);
    expect((await accepted(create(ref, T))).topic).toBe('subscriptions/create');
    const written = await events(h, s.merchant.storeId);
    expect(written.map((e) => e.topic)).toEqual(['subscriptions/create', 'subscriptions/update', 'subscriptions/renew']);
    // Released as from the subscription: its store, and the order the create named.
    for (const e of written) expect(e.payload).toMatchObject({ storeId: s.merchant.storeId, orderId: ref.orderId, subscriptionId: ref.subscriptionId });
    expect(written[1].payload).toMatchObject({ amount: 79.96 });
    const { rows } = await h.db.query('SELECT 1 FROM stripe_held_events WHERE subscription_id = $1', [ref.subscriptionId]);
    expect(rows).toEqual([]);
  });

  it('an early update and its create sent at the same moment: each topic emitted exactly once, the create first', async () => {
    for (let i = 0; i < 10; i++) {
      const { s, ref } = await newSubscription();
      const [a, b] = await Promise.all([post(updated(ref, T + 5, 'active')), post(create(ref, T))]);
      expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
      expect(await topicsOf(s.merchant.storeId)).toEqual(['subscriptions/create', 'subscriptions/update']);
    }
  });
});

describe('an event older than one already applied does not take the subscription back', () => {
  it('a renewal failure that arrives after a later successful renewal: acknowledged as stale, nothing emitted, nothing stored', async () => {
    const { s, ref } = await newSubscription();
    await accepted(create(ref, T));
    const paid = renew(ref, T + 100);
    expect((await accepted(paid)).topic).toBe('subscriptions/renew');
    const late = failed(ref, T + 50);
    expect(await accepted(late)).toEqual({ received: true, duplicate: false, topic: null, ignored: 'stale' });
    expect(await topicsOf(s.merchant.storeId)).toEqual(['subscriptions/create', 'subscriptions/renew']);
    expect((await stored(ref.subscriptionId)).invoice_number).toBe(paid.data.object.number);
    expect(await accepted(late)).toMatchObject({ duplicate: true });
  });

  it('an older customer.subscription.updated after a newer one is stale; the same second is not', async () => {
    const { s, ref } = await newSubscription();
    await accepted(create(ref, T));
    expect((await accepted(updated(ref, T + 100, 'active'))).topic).toBe('subscriptions/update');
    expect(await accepted(updated(ref, T + 50, 'past_due'))).toMatchObject({ topic: null, ignored: 'stale' });
    expect((await accepted(updated(ref, T + 100, 'active', 4))).topic).toBe('subscriptions/update');
    expect((await events(h, s.merchant.storeId)).map((e) => [e.topic, e.payload.status])).toEqual([
      ['subscriptions/create', 'active'], ['subscriptions/update', 'active'], ['subscriptions/update', 'active'],
    ]);
  });

  it('a renewal charge and the cancel are never stale: a late renewal is still emitted, without taking back the newer facts', async () => {
    const { s, ref } = await newSubscription();
    await accepted(create(ref, T));
    const newer = renew(ref, T + 200);
    expect((await accepted(newer)).topic).toBe('subscriptions/renew');
    expect((await accepted(updated(ref, T + 300, 'active'))).topic).toBe('subscriptions/update');
    const older = renew(ref, T + 100);
    expect((await accepted(older)).topic).toBe('subscriptions/renew');
    expect((await stored(ref.subscriptionId)).invoice_number).toBe(newer.data.object.number);
    expect((await accepted(cancelled(ref, T + 250))).topic).toBe('subscriptions/cancelled');
    expect(await topicsOf(s.merchant.storeId)).toEqual(['subscriptions/create', 'subscriptions/renew', 'subscriptions/update', 'subscriptions/renew', 'subscriptions/cancelled']);
  });
});

// Last in the file: it moves the service clock on by a month.
describe('held events whose create never comes', () => {
  it('are purged 30 days after they arrived by the stripe-held-purge job (C12.2), not before', async () => {
    const { ref } = await newSubscription();
    expect((await accepted(subscriptionEvent('customer.subscription.updated', ref, 'active'))).ignored).toBe('awaiting_create');
    const held = async () => (await h.db.query('SELECT 1 FROM stripe_held_events WHERE subscription_id = $1', [ref.subscriptionId])).rows.length;
    const purge = async () => {
      const res = await h.req('POST', '/apps/admin/jobs/stripe-held-purge/run', { token: await operatorToken(h) });
      expect(res.statusCode, res.body).toBe(200);
    };
    await h.advance(HELD_EVENT_RETENTION_MS / 1000 - 60);
    await purge();
    expect(await held()).toBe(1);
    await h.advance(120);
    await purge();
    expect(await held()).toBe(0);
  });
});
