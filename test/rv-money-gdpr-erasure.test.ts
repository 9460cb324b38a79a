// Review of the platform's erasure of a redacted customer (C9; docs/decisions.md GDPR): what the
// erasure empties at the checkout must not survive in the copies made of it, nor in the other
// records that hold the customer's data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { DELIVERY_TARGET as DELIVERY, DISCOUNT_TARGET as DISCOUNT } from '../src/checkout/checkout-functions.js';
import { checkoutCalls, insertSimpleZone } from './helpers/checkout.js';
import { storeWithApp } from './helpers/actors.js';
import { insertProduct, uniq } from './helpers/orders.js';
import { events } from './helpers/events.js';
import { invoiceEvent, signStripe, subscriptionEvent } from './fixtures/webhook-stripe-events.js';

const STRIPE_SECRET = 'whsec_rv_money_0123456789';
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ SVC_STRIPE_WEBHOOK_SECRET: STRIPE_SECRET }, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

const { create, change, rates, complete } = checkoutCalls(() => h);

const A = 'input.checkout.shipping_address';
/** A delivery function and a discount function that echo the buyer into their text (C11.3). */
const ECHOING = [
  {
    handle: 'courier', target: DELIVERY,
    expression: `{"operations": [{"rename": {"handle": input.deliveryOptions[0].handle, "title": "Courier to " + ${A}.address1 + " for " + ${A}.first_name}}]}`,
  },
  {
    handle: 'thanks', target: DISCOUNT,
    expression: `{"operations": [{"orderDiscountAdd": {"message": "Thanks " + ${A}.first_name + " of " + ${A}.city, "value": {"fixedAmount": "1.00"}}}]}`,
  },
];

/** Everything the App API shows of an order, as text, lower case. */
async function orderText(accessToken: string, orderId: string): Promise<{ order: any; text: string }> {
  const res = await h.req('GET', `/api/v1/orders/${orderId}.json`, { token: accessToken });
  expect(res.statusCode, res.body).toBe(200);
  return { order: res.json().order, text: res.body.toLowerCase() };
}

describe('C9 erasure reaches the order made from a checkout whose functions echoed the buyer', () => {
  it("the order's shipping line title and automatic discount titles lose the buyer's street, name and city; amounts stay", async () => {
    const s = await storeWithApp(h, { scopes: ['read_products', 'read_orders', 'read_customers'], tier: 'enterprise', extensions: { functions: ECHOING } });
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const zoneId = await insertSimpleZone(h, s.merchant.storeId, { name: 'Standard', countries: ['GB'], price: 499 });
    const email = `buyer-${uniq()}@example.com`;
    const created = await create(s, {
      email, line_items: [{ product_id: product.id, quantity: 2 }],
      shipping_address: {
        first_name: 'Perpetua', last_name: 'Ansell', address1: '41 Quillon Street', city: 'Marrowby', zip: 'MB4 7QQ',
        province: 'Kent', country: 'United Kingdom', country_code: 'GB',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const token: string = created.json().data.checkout.token;
    expect((await rates(s, token)).statusCode).toBe(200);
    const chosen = await change(s, token, { shipping_rate: { handle: `zone-${zoneId}` }, payment_method: 'card' });
    expect(chosen.statusCode, chosen.body).toBe(200);
    const done = await complete(s, token);
    expect(done.statusCode, done.body).toBe(201);
    const orderId = done.json().data.order.id;

    const before = await orderText(s.accessToken, orderId);
    // The functions did echo the buyer into the order (else the test proves nothing).
    expect(before.order.shipping_lines[0].title).toBe('Courier to 41 Quillon Street for Perpetua');
    expect(before.order.discount_applications.map((d: any) => d.title)).toEqual(['Thanks Perpetua of Marrowby']);

    // The merchant asks for the erasure; the one notified app completes it; the platform erases.
    const asked = await h.req('POST', '/apps/gdpr/customer-redact', { token: s.merchant.token, body: { customerEmail: email } });
    expect(asked.statusCode, asked.body).toBe(201);
    const requestId = asked.json().data.requestId;
    const completed = await h.req('POST', `/apps/gdpr/complete/${requestId}`, { token: s.accessToken });
    expect(completed.statusCode, completed.body).toBe(200);

    const after = await orderText(s.accessToken, orderId);
    for (const value of ['perpetua', 'ansell', '41 quillon street', 'marrowby', 'mb4 7qq', email]) expect(after.text, value).not.toContain(value);
    expect(after.order.shipping_lines[0]).toEqual({ ...before.order.shipping_lines[0], title: 'Courier to [redacted] for [redacted]' });
    expect(after.order.discount_applications).toEqual([{ ...before.order.discount_applications[0], title: 'Thanks [redacted] of [redacted]' }]);
    expect(after.order).toMatchObject({
      total_price: before.order.total_price, total_discounts: before.order.total_discounts, shipping_address: { province: 'Kent', country_code: 'GB' },
    });
    // And as stored: nothing of the buyer's left in the order's row.
    const row = (await h.db.query<{ t: string }>('SELECT o::text AS t FROM orders o WHERE store_id = $1', [s.merchant.storeId])).rows[0].t.toLowerCase();
    for (const value of ['perpetua', '41 quillon street', 'marrowby']) expect(row, value).not.toContain(value);
  });
});

function postStripe(body: unknown) {
  const payload = JSON.stringify(body);
  return h.req('POST', '/payments/stripe/webhook', { payload, headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(payload, STRIPE_SECRET) } });
}

/** A store with an app, and the reference of a Stripe subscription of one of its customers. */
async function subscriber() {
  const s = await storeWithApp(h, { scopes: ['read_customers', 'read_orders'], tier: 'enterprise' });
  const ref = { subscriptionId: `sub_rv_${uniq()}`, storeId: s.merchant.storeId, orderId: `order-${uniq()}` };
  return { s, email: `subscriber-${uniq()}@example.com`, ref };
}

/** The merchant asks for the customer's erasure (C9) and the app completes it. */
async function redactCustomer(s: Awaited<ReturnType<typeof storeWithApp>>, email: string) {
  const asked = await h.req('POST', '/apps/gdpr/customer-redact', { token: s.merchant.token, body: { customerEmail: email } });
  expect(asked.statusCode, asked.body).toBe(201);
  const completed = await h.req('POST', `/apps/gdpr/complete/${asked.json().data.requestId}`, { token: s.accessToken });
  expect(completed.statusCode, completed.body).toBe(200);
}

describe('C9 erasure reaches what the platform keeps of a Stripe subscription (C13)', () => {
  it("the redacted customer's email leaves payment_subscriptions, and a later subscriptions/update does not carry it again", async () => {
    const { s, email, ref } = await subscriber();
    const paid = invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_create' });
    (paid.data.object as Record<string, unknown>).customer_email = email;
    const first = await postStripe(paid);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().data.topic).toBe('subscriptions/create');

    await redactCustomer(s, email);

    const kept = await h.db.query<{ t: string }>('SELECT p::text AS t FROM payment_subscriptions p WHERE id = $1', [ref.subscriptionId]);
    expect(kept.rows[0].t.toLowerCase()).not.toContain(email);

    // A subscription event carries no email: the payload used to fill it from the stored one.
    const updated = await postStripe(subscriptionEvent('customer.subscription.updated', ref, 'active'));
    expect(updated.statusCode, updated.body).toBe(200);
    const written = (await events(h, s.merchant.storeId)).filter((e) => e.topic === 'subscriptions/update');
    expect(written).toHaveLength(1);
    expect(written[0].payload).toMatchObject({ subscriptionId: ref.subscriptionId, customerEmail: '' });
  });

  // An early event may name no store (its invoice without the subscription's metadata): it may be
  // this store's, so its email goes too.
  it.each([
    ['naming its store', undefined],
    ['naming no store', {}],
  ] as const)('an event held until its subscription is created (Stripe sends out of order), %s, loses the email too, and is released without it', async (_, metadata) => {
    const { s, email, ref } = await subscriber();
    const renewal = invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_cycle', metadata });
    (renewal.data.object as Record<string, unknown>).customer_email = email;
    const early = await postStripe(renewal);
    expect(early.statusCode, early.body).toBe(200);
    expect(early.json().data.ignored).toBe('awaiting_create');

    await redactCustomer(s, email);
    const held = await h.db.query<{ t: string }>('SELECT e::text AS t FROM stripe_held_events e WHERE subscription_id = $1', [ref.subscriptionId]);
    expect(held.rows).toHaveLength(1);
    expect(held.rows[0].t.toLowerCase()).not.toContain(email);

    const created = await postStripe(invoiceEvent('invoice.paid', ref, { billingReason: 'subscription_create' }));
    expect(created.statusCode, created.body).toBe(200);
    const renewed = (await events(h, s.merchant.storeId)).filter((e) => e.topic === 'subscriptions/renew');
    expect(renewed).toHaveLength(1);
    expect(JSON.stringify(renewed[0].payload).toLowerCase()).not.toContain(email);
  });
});
