// Review: app-api.md's Subscription payload says `orderId` is "the order the subscription was created
// from, stable for the subscription's life". The subscription's metadata can be edited at Stripe
// after it started; a later event naming another order id must not change the payload's orderId.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { events } from './helpers/events.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { webhookStore } from './fixtures/webhook-setup.js';
import { invoiceEvent, signStripe, subscriptionEvent } from './fixtures/webhook-stripe-events.js';

const SECRET = 'whsec_test_order_id_0123456789';
let h: Harness;
beforeAll(async () => {
  h = await createWebhookHarness({ SVC_STRIPE_WEBHOOK_SECRET: SECRET });
});
afterAll(() => h?.close());

const post = (body: unknown) => {
  const payload = JSON.stringify(body);
  return h.req('POST', '/payments/stripe/webhook', { payload, headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(payload, SECRET) } });
};

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
