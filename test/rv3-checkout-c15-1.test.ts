// Review (rv3) of the buyer checkout resource (C15.1): each test failed before its fix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { checkoutCalls, checkoutWithShippingApp } from './helpers/checkout.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { insertProduct, orderStore } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const { create, read, change, rates, complete } = checkoutCalls(() => h);

describe('the email as the checkout keeps it (C15.1 email; C7.1 customer)', () => {
  it('one that lower-cases past 254 characters is refused when sent (400), not kept for a completion that could only refuse it with a 400', async () => {
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    await h.db.query('UPDATE products SET requires_shipping = false WHERE id = $1', [product.id]);
    const lines = [{ product_id: product.id, quantity: 1 }];
    // 'İ' (U+0130) lower-cases to two code points: 134 characters as sent, 256 as kept.
    const long = `${'İ'.repeat(122)}@example.com`;
    expectEnvelopeError(await create(s, { email: long, line_items: lines }), 400, /^email is too long \(maximum 254 characters\)/);
    const made = await create(s, { line_items: lines });
    expect(made.statusCode, made.body).toBe(201);
    const token = made.json().data.checkout.token as string;
    expectEnvelopeError(await change(s, token, { email: `İ${long}`, payment_method: 'card' }), 400, /^email is too long/);
    expect((await read(s, token)).json().data.checkout).toMatchObject({ email: null, payment_method: null });

    // 254 as kept is within: taken, and its completion makes the order and the customer.
    const atBound = `${'İ'.repeat(121)}@example.com`;
    const taken = await change(s, token, { email: atBound, payment_method: 'card' });
    expect(taken.statusCode, taken.body).toBe(200);
    expect([...taken.json().data.checkout.email].length).toBe(254);
    const done = await complete(s, token);
    expect(done.statusCode, done.body).toBe(201);
    expect(done.json().data.order.customer.email).toBe(atBound.toLowerCase());
  });
});

describe('the sums a checkout shows are exact past what an order can hold (C5.2, C15.1)', () => {
  it("a chosen app rate of 2^53 - 1 hundredths: the total is the exact sum (was a cent short), the validation error says why, completion is a 422", async () => {
    const huge = '9007199254740991';
    const { rx, s, token } = await checkoutWithShippingApp(h, [{ service_name: 'Freight', service_code: 'f', total_price: huge, currency: 'USD' }]);
    try {
      const offered = (await rates(s, token)).json().data.shipping_rates;
      expect(offered.map((r: any) => r.price)).toEqual(['90071992547409.91']);
      const chose = await change(s, token, { shipping_rate: { handle: offered[0].handle }, payment_method: 'card' });
      expect(chose.statusCode, chose.body).toBe(200);
      const shown = chose.json().data.checkout;
      // 1,250 + 9,007,199,254,740,991 = 9,007,199,254,742,241 hundredths, to the cent.
      expect(shown).toMatchObject({ subtotal_price: '12.50', shipping_price: '90071992547409.91', total_discounts: '0.00', total_price: '90071992547422.41' });
      expect(shown.validation_errors).toEqual([{ message: "The checkout's total is above the largest amount an order can hold", target: 'cart' }]);
      expectEnvelopeError(await complete(s, token), 422, /above the largest amount/);
    } finally {
      await rx.close();
    }
  });
});
