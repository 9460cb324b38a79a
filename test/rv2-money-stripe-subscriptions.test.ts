// Review: Stripe's invoices of API version 2025-03-31.basil and later carry no price or plan on
// their lines (only `pricing.price_details.price`, an id), so an invoice event alone cannot say the
// plan's name or billing interval. The subscription's own events (customer.subscription.created,
// .updated, .deleted) carry the price in full: C14.15 (`planName` is the price's nickname, else the
// product name) and app-api.md's Subscription payload (`billingInterval`, `billingIntervalCount`)
// are met from what those said. Also: `orderId` is "the order the subscription was created from,
// stable for the subscription's life", though its metadata can be edited at Stripe later.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { events } from './helpers/events.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { webhookStore } from './fixtures/webhook-setup.js';
import { event, invoiceEvent, signStripe, subscriptionEvent } from './fixtures/webhook-stripe-events.js';

const SECRET = 'whsec_test_basil_0123456789';
let h: Harness;
beforeAll(async () => {
  h = await createWebhookHarness({ SVC_STRIPE_WEBHOOK_SECRET: SECRET });
});
afterAll(() => h?.close());

const post = (body: unknown) => {
  const payload = JSON.stringify(body);
  return h.req('POST', '/payments/stripe/webhook', { payload, headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(payload, SECRET) } });
};

const PERIOD = { start: 1_767_225_600, end: 1_798_761_600 };
let seq = 0;

/** A subscription object as Stripe sends it: items carry the price in full. */
function subscription(id: string, storeId: string, status: string, trialEnd: number | null = null) {
  return {
    id, object: 'subscription', customer: 'cus_basil', status, metadata: { storeId, orderId: 'order-basil' }, trial_end: trialEnd,
    items: {
      object: 'list',
      data: [{
        id: 'si_basil', quantity: 1, current_period_start: PERIOD.start, current_period_end: PERIOD.end,
        price: { id: 'price_team', object: 'price', nickname: 'Team yearly', currency: 'eur', unit_amount: 12000, product: 'prod_team', recurring: { interval: 'year', interval_count: 1 } },
      }],
    },
  };
}

/** A basil invoice: the line names its price by id under `pricing.price_details`, no `price`, no `plan`. */
function basilInvoice(subscriptionId: string, storeId: string, billingReason: string, amount = 12000, period = PERIOD) {
  const n = ++seq;
  return {
    id: `in_basil_${n}`, object: 'invoice', number: `BASIL-${n}`, customer: 'cus_basil', customer_email: 'team@example.com',
    billing_reason: billingReason, currency: 'eur', status: 'paid', amount_paid: amount, amount_due: amount,
    parent: { type: 'subscription_details', subscription_details: { subscription: subscriptionId, metadata: { storeId, orderId: 'order-basil' } } },
    lines: {
      object: 'list',
      data: [{
        id: `il_basil_${n}`, object: 'line_item', amount, currency: 'eur', description: '1 × Team (at €120.00 / year)', quantity: 1, period,
        pricing: { type: 'price_details', price_details: { price: 'price_team', product: 'prod_team' }, unit_amount_decimal: '12000' },
        parent: { type: 'subscription_item_details', subscription_item_details: { subscription: subscriptionId, subscription_item: 'si_basil' } },
      }],
    },
  };
}

describe('C14.15 an invoice without its price (Stripe API 2025-03-31.basil and later)', () => {
  it('create and renew name the plan and interval the subscription\'s own events gave', async () => {
    const s = await webhookStore(h);
    const sub = `sub_basil_${Date.now().toString(36)}`;
    // Stripe's order: the subscription is created, then its first invoice is paid.
    const created = await post(event('customer.subscription.created', subscription(sub, s.merchant.storeId, 'incomplete')));
    expect(created.statusCode, created.body).toBe(200);
    expect(created.json().data.topic).toBeNull();
    expect((await post(event('invoice.paid', basilInvoice(sub, s.merchant.storeId, 'subscription_create')))).json().data.topic).toBe('subscriptions/create');
    expect((await post(event('invoice.paid', basilInvoice(sub, s.merchant.storeId, 'subscription_cycle')))).json().data.topic).toBe('subscriptions/renew');

    const written = await events(h, s.merchant.storeId, 'subscriptions/');
    expect(written.map((e) => e.topic)).toEqual(['subscriptions/create', 'subscriptions/renew']);
    for (const e of written) {
      expect(e.payload).toMatchObject({
        subscriptionId: sub, planName: 'Team yearly', billingInterval: 'year', billingIntervalCount: 1, amount: 120, currency: 'eur',
        currentPeriodStart: PERIOD.start, currentPeriodEnd: PERIOD.end,
      });
    }
  });

  it('without any subscription event first, the line\'s description still names the plan (as before)', async () => {
    const s = await webhookStore(h);
    const sub = `sub_basil_alone_${Date.now().toString(36)}`;
    expect((await post(event('invoice.paid', basilInvoice(sub, s.merchant.storeId, 'subscription_create')))).json().data.topic).toBe('subscriptions/create');
    const [create] = await events(h, s.merchant.storeId, 'subscriptions/');
    expect(create.payload).toMatchObject({ planName: '1 × Team (at €120.00 / year)', amount: 120 });
  });
});

describe('app-api.md Subscription payload: a subscription that starts with a trial', () => {
  it('subscriptions/create says trialing with the trial\'s end, as customer.subscription.created said; the end of the trial is an update to active', async () => {
    const s = await webhookStore(h);
    const sub = `sub_trial_${Date.now().toString(36)}`;
    const trialEnd = PERIOD.start + 14 * 86_400;
    expect((await post(event('customer.subscription.created', subscription(sub, s.merchant.storeId, 'trialing', trialEnd)))).json().data.topic).toBeNull();
    // Stripe's first invoice of a trial: nothing to pay, its line covers the trial.
    const trialInvoice = basilInvoice(sub, s.merchant.storeId, 'subscription_create', 0, { start: PERIOD.start, end: trialEnd });
    expect((await post(event('invoice.paid', trialInvoice))).json().data.topic).toBe('subscriptions/create');
    const ended = event('customer.subscription.updated', subscription(sub, s.merchant.storeId, 'active', trialEnd));
    (ended.data as Record<string, unknown>).previous_attributes = { status: 'trialing' };
    expect((await post(ended)).json().data.topic).toBe('subscriptions/update');
    expect((await post(event('invoice.paid', basilInvoice(sub, s.merchant.storeId, 'subscription_cycle', 12000, { start: trialEnd, end: PERIOD.end })))).json().data.topic)
      .toBe('subscriptions/renew');

    const written = await events(h, s.merchant.storeId, 'subscriptions/');
    expect(written.map((e) => [e.topic, e.payload.status, e.payload.trialEnd, e.payload.amount])).toEqual([
      ['subscriptions/create', 'trialing', trialEnd, 0],
      ['subscriptions/update', 'active', trialEnd, 120],
      ['subscriptions/renew', 'active', trialEnd, 120],
    ]);
  });
});

describe('app-api.md Subscription payload: orderId is stable for the subscription\'s life', () => {
  it('events after the create carry the create\'s order id, whatever order id their metadata names', async () => {
    const s = await webhookStore(h);
    const ref = { subscriptionId: `sub_oid_${Date.now().toString(36)}`, storeId: s.merchant.storeId, orderId: 'order-first' };
    const edited = { ...ref, orderId: 'order-edited' };
    expect((await post(invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_create' }))).json().data.topic).toBe('subscriptions/create');
    expect((await post(subscriptionEvent('customer.subscription.updated', edited, 'past_due'))).json().data.topic).toBe('subscriptions/update');
    expect((await post(invoiceEvent('invoice.paid', edited, { billingReason: 'subscription_cycle', newShape: true }))).json().data.topic).toBe('subscriptions/renew');
    expect((await post(subscriptionEvent('customer.subscription.deleted', edited, 'canceled'))).json().data.topic).toBe('subscriptions/cancelled');
    const written = await events(h, s.merchant.storeId, 'subscriptions/');
    expect(written.map((e) => [e.topic, e.payload.orderId])).toEqual([
      ['subscriptions/create', 'order-first'],
      ['subscriptions/update', 'order-first'],
      ['subscriptions/renew', 'order-first'],
      ['subscriptions/cancelled', 'order-first'],
    ]);
  });
});
