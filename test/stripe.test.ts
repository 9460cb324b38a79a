// Payment-processor events (C13, C14.15): Stripe-signed events become the five subscription topics
// with app-api.md's payload, once per event id, and nothing after subscriptions/cancelled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { events } from './helpers/events.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, verifySignature, type Receiver } from './fixtures/webhook-receiver.js';
import { runDeliveries, subscribe, webhookStore } from './fixtures/webhook-setup.js';
import { event, invoiceEvent, PERIOD, signStripe, subscriptionEvent, type SubscriptionRef } from './fixtures/webhook-stripe-events.js';

const SECRET = 'whsec_test_0123456789';
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

function post(body: unknown, options: { secret?: string; header?: string | null; timestamp?: number; raw?: string } = {}) {
  const payload = options.raw ?? JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const header = options.header === undefined ? signStripe(JSON.stringify(body), options.secret ?? SECRET, options.timestamp) : options.header;
  if (header !== null) headers['stripe-signature'] = header;
  return h.req('POST', '/payments/stripe/webhook', { payload, headers });
}

let seq = 0;
const newRef = (storeId: string): SubscriptionRef => ({ subscriptionId: `sub_${Date.now().toString(36)}_${++seq}`, storeId, orderId: `order-${seq}` });

describe('C13.2 mapping and the subscription payload', () => {
  it('maps the five events to the five topics, with the payload table and deliveries to subscribed apps', async () => {
    const s = await webhookStore(h);
    const topics = ['subscriptions/create', 'subscriptions/renew', 'subscriptions/update', 'subscriptions/payment_failed', 'subscriptions/cancelled'];
    const secrets: Record<string, string> = {};
    for (const topic of topics) secrets[topic] = (await subscribe(h, s.accessToken, topic, `${rx.url}/billing`)).secret;
    const ref = newRef(s.merchant.storeId);

    const sent = [
      invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_create' }),
      invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_cycle', newShape: true }),
      subscriptionEvent('customer.subscription.updated', ref, 'active'),
      invoiceEvent('invoice.payment_failed', ref, { newShape: true }),
      subscriptionEvent('customer.subscription.deleted', ref, 'canceled'),
    ];
    for (const [i, e] of sent.entries()) {
      const res = await post(e);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ status: 200, state: 'success', data: { received: true, duplicate: false, topic: topics[i] } });
    }
    const written = await events(h, s.merchant.storeId);
    expect(written.map((e) => e.topic)).toEqual(topics);
    const common = {
      orderId: ref.orderId, storeId: s.merchant.storeId, subscriptionId: ref.subscriptionId, customerId: 'cus_1', customerEmail: 'buyer@example.com',
      planName: 'Pro monthly', currency: 'usd', billingInterval: 'month', billingIntervalCount: 1,
      currentPeriodStart: PERIOD.start, currentPeriodEnd: PERIOD.end, trialEnd: null,
    };
    const invoiceNumber = (e: any) => e.data.object.number;
    expect(written[0].payload).toEqual({ ...common, invoiceId: invoiceNumber(sent[0]), status: 'active', amount: 19.99 });
    expect(written[1].payload).toEqual({ ...common, invoiceId: invoiceNumber(sent[1]), status: 'active', amount: 19.99 });
    // A subscription event carries no invoice number or email: the last ones known are used.
    expect(written[2].payload).toEqual({ ...common, invoiceId: invoiceNumber(sent[1]), status: 'active', amount: 39.98 });
    expect(written[3].payload).toEqual({ ...common, invoiceId: invoiceNumber(sent[3]), status: 'past_due', amount: 19.99 });
    expect(written[4].payload).toEqual({ ...common, invoiceId: invoiceNumber(sent[3]), status: 'canceled', amount: 39.98 });

    await runDeliveries(h);
    const got = rx.received.filter((r) => r.headers['x-svc-shop-domain'] === s.merchant.slug);
    expect(got.map((r) => r.headers['x-svc-topic']).sort()).toEqual([...topics].sort());
    for (const r of got) {
      const topic = r.headers['x-svc-topic'] as string;
      expect(verifySignature(r.raw, r.headers['x-svc-hmac-sha256'], secrets[topic])).toBe(true);
      expect(JSON.parse(r.raw.toString())).toEqual(written[topics.indexOf(topic)].payload);
    }
  });

  it('zero-decimal currencies are already in major units; other events and billing reasons emit nothing', async () => {
    const s = await webhookStore(h);
    const ref = newRef(s.merchant.storeId);
    expect((await post(invoiceEvent('invoice.paid', ref, { currency: 'jpy', amount: 1500 }))).json().data.topic).toBe('subscriptions/create');
    for (const e of [
      invoiceEvent('invoice.paid', ref, { billingReason: 'manual' }),
      event('charge.succeeded', { id: 'ch_1', object: 'charge' }),
      event('customer.created', { id: 'cus_2', object: 'customer' }),
    ]) {
      const res = await post(e);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ received: true, duplicate: false, topic: null, ignored: 'unmapped' });
    }
    const written = await events(h, s.merchant.storeId);
    expect(written).toHaveLength(1);
    expect(written[0].payload).toMatchObject({ amount: 1500, currency: 'jpy' });
  });

  it('an event without a known store is acknowledged and emits nothing', async () => {
    const ref = newRef('0190a0a0-0000-7000-8000-000000000000');
    const res = await post(invoiceEvent('invoice.paid', ref));
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ topic: null, ignored: 'no_store' });
    const none = await post(invoiceEvent('invoice.paid', ref, { metadata: {} }));
    expect(none.json().data).toMatchObject({ topic: null, ignored: 'no_store' });
  });
});

describe('C13.3 duplicates and the terminal cancel', () => {
  it('a repeated event id is acknowledged and emits nothing again', async () => {
    const s = await webhookStore(h);
    const e = invoiceEvent('invoice.paid', newRef(s.merchant.storeId));
    expect((await post(e)).json().data).toMatchObject({ duplicate: false, topic: 'subscriptions/create' });
    for (let i = 0; i < 2; i++) {
      const again = await post(e);
      expect(again.statusCode).toBe(200);
      expect(again.json().data).toEqual({ received: true, duplicate: true, topic: null });
    }
    expect(await events(h, s.merchant.storeId)).toHaveLength(1);
  });

  it('nothing is emitted for a subscription after subscriptions/cancelled; other subscriptions go on', async () => {
    const s = await webhookStore(h);
    const ref = newRef(s.merchant.storeId);
    const other = newRef(s.merchant.storeId);
    await post(invoiceEvent('invoice.paid', ref));
    expect((await post(subscriptionEvent('customer.subscription.deleted', ref, 'canceled'))).json().data.topic).toBe('subscriptions/cancelled');
    for (const late of [
      subscriptionEvent('customer.subscription.updated', ref, 'active'),
      invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_cycle' }),
      invoiceEvent('invoice.payment_failed', ref),
      subscriptionEvent('customer.subscription.deleted', ref, 'canceled'),
    ]) {
      const res = await post(late);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ received: true, duplicate: false, topic: null, ignored: 'subscription_cancelled' });
    }
    expect((await post(invoiceEvent('invoice.paid', other))).json().data.topic).toBe('subscriptions/create');
    expect((await post(subscriptionEvent('customer.subscription.updated', other, 'active'))).json().data.topic).toBe('subscriptions/update');
    expect((await events(h, s.merchant.storeId)).map((e) => e.topic)).toEqual(['subscriptions/create', 'subscriptions/cancelled', 'subscriptions/create', 'subscriptions/update']);
  });
});

describe('C13.1 signature', () => {
  it('400 for a missing, malformed, wrongly keyed, stale or tampered signature; nothing is recorded', async () => {
    const s = await webhookStore(h);
    const e = invoiceEvent('invoice.paid', newRef(s.merchant.storeId));
    const cases = {
      missing: await post(e, { header: null }),
      malformed: await post(e, { header: 'not-a-signature' }),
      wrongSecret: await post(e, { secret: 'whsec_someone_else' }),
      stale: await post(e, { timestamp: Math.floor(Date.now() / 1000) - 3600 }),
      tampered: await post(e, { raw: JSON.stringify({ ...e, id: 'evt_forged' }) }),
      reserialised: await post(e, { raw: JSON.stringify(e, null, 2) }),
    };
    for (const [name, res] of Object.entries(cases)) {
      expect(res.statusCode, name).toBe(400);
      expect(res.json(), name).toEqual({ status: 400, state: 'error', message: expect.any(String), data: null, count: null, pagination: null });
    }
    expect(await events(h, s.merchant.storeId)).toEqual([]);
    // The same event, correctly signed, is then accepted: the failures above recorded nothing.
    expect((await post(e)).json().data.topic).toBe('subscriptions/create');
  });

  it('a signed event holding text the database cannot store (a NUL, an unpaired surrogate): 400 naming the field, as for any client; nothing recorded', async () => {
    const s = await webhookStore(h);
    for (const [form, text] of Object.entries({ nul: 'buyer\u0000@example.com', loneSurrogate: 'buyer\ud800@example.com' })) {
      const e = invoiceEvent('invoice.paid', newRef(s.merchant.storeId));
      (e.data.object as Record<string, unknown>).customer_email = text;
      const res = await post(e);
      expect(res.statusCode, form).toBe(400);
      expect(res.json(), form).toEqual({ status: 400, state: 'error', message: 'data.object.customer_email must not contain NUL characters or unpaired UTF-16 surrogates', data: null, count: null, pagination: null });
      expect((await h.deps.db.query('SELECT 1 FROM stripe_events WHERE id = $1', [e.id])).rows, form).toEqual([]);
    }
    expect(await events(h, s.merchant.storeId)).toEqual([]);
  });

  // Found in review: `trial_end: 1.5` or `1e20`, or an interval count of 3e9, in a signed event
  // reached a bigint or integer column and failed the event with a 500 (Stripe retries for days).
  // Swept: every number the mapping reads (src/payments/stripe-mapping.ts), in each event shape,
  // with each hostile number: a value that is not a whole number a column holds is unknown.
  it('a signed event with a number no column holds (a fraction, a negative count, beyond 2^53 or int4): 200, recorded, never a 5xx', async () => {
    const s = await webhookStore(h);
    const HOSTILE = [1.5, -1, 0, 3e9, 2 ** 53, 1e20, 1e308];
    const shapes: [() => ReturnType<typeof event>, string[]][] = [
      [() => invoiceEvent('invoice.paid', newRef(s.merchant.storeId)), [
        'amount_paid', 'amount_due', 'period_start', 'period_end', 'lines.data.0.period.start', 'lines.data.0.period.end',
        'lines.data.0.price.unit_amount', 'lines.data.0.price.recurring.interval_count',
      ]],
      ...(['customer.subscription.created', 'customer.subscription.updated'] as const).map((type): [() => ReturnType<typeof event>, string[]] => [
        () => ({ ...subscriptionEvent('customer.subscription.updated', newRef(s.merchant.storeId), 'active'), type }),
        ['trial_end', 'current_period_start', 'current_period_end', 'quantity', 'items.data.0.quantity', 'items.data.0.current_period_start',
          'items.data.0.current_period_end', 'items.data.0.price.unit_amount', 'items.data.0.price.recurring.interval_count'],
      ]),
    ];
    const failures: string[] = [];
    let sent = 0;
    for (const [make, paths] of shapes) {
      for (const path of [...paths, 'created']) {
        for (const value of HOSTILE) {
          const e = make();
          const steps = path.split('.');
          let node: any = path === 'created' ? e : e.data.object;
          for (const step of steps.slice(0, -1)) node = node[step] ??= {};
          node[steps.at(-1)!] = value;
          const res = await post(e);
          sent++;
          const recorded = (await h.deps.db.query('SELECT 1 FROM stripe_events WHERE id = $1', [e.id])).rows.length;
          if (res.statusCode !== 200 || recorded !== 1) failures.push(`${e.type} ${path} = ${value}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        }
      }
    }
    expect(failures, failures.join('\n')).toEqual([]);
    expect(sent).toBeGreaterThan(150);
  }, 120_000);

  it('400 when the service has no signing secret configured', async () => {
    const bare = await createHarness();
    try {
      const e = event('invoice.paid', {});
      const res = await bare.req('POST', '/payments/stripe/webhook', { payload: JSON.stringify(e), headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(JSON.stringify(e), SECRET) } });
      expect(res.statusCode).toBe(400);
    } finally {
      await bare.close();
    }
  });
});
