// Review of the merchant admin (C7) and the store content and catalog it edits: the bugs found, each
// with the case that showed it, by real requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { signupMerchant, unique, type Merchant } from './helpers/actors.js';
import { expectEnvelopeError } from './helpers/expect.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

async function shirt(m: Merchant) {
  const res = await h.req('POST', '/products', { token: m.token, body: { title: 'Shirt', variants: [{ name: 'Size', value: 'S', price: 10, stock: 50 }] } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { product_id: string; variants: { id: number }[] };
}

const order = (m: Merchant, p: { product_id: string; variants: { id: number }[] }, email: string, code: string) =>
  h.req('POST', '/orders', {
    token: m.token,
    body: {
      customer: { email }, line_items: [{ product_id: p.product_id, variant_id: p.variants[0].id, quantity: 1 }],
      shipping_address: { address1: '1 Main St', city: 'Town', country: 'US', zip: '10001' }, paymentMethod: 'cod', discount_code: code,
    },
  });

describe('usesPerCustomer counts the uses of the discount, not of its code text (C14.4, C7.1 POST /orders)', () => {
  it('a renamed discount still knows who used it; a new discount given the old code starts with no uses', async () => {
    const m = await signupMerchant(h);
    const p = await shirt(m);
    const email = `buyer-${unique()}@example.com`;
    const code = `ONCE${unique()}`.toUpperCase();
    const first = await h.req('POST', '/discounts', { token: m.token, body: { code, type: 'Flat', discountAmount: 1, usesPerCustomer: 1 } });
    expect(first.statusCode, first.body).toBe(201);
    expect((await order(m, p, email, code)).statusCode).toBe(201);

    // The merchant renames the discount, and gives its old code to a new one.
    const renamed = await h.req('PUT', `/discounts/${first.json().data.couponId}`, { token: m.token, body: { code: `${code}OLD` } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    const second = await h.req('POST', '/discounts', { token: m.token, body: { code, type: 'Flat', discountAmount: 2, usesPerCustomer: 1 } });
    expect(second.statusCode, second.body).toBe(201);

    // The buyer has used the first discount once (its limit), under whatever code it has now...
    expectEnvelopeError(await order(m, p, email, `${code}OLD`), 400, 'discount_code has already been used by this customer');
    // ...and has never used the second one.
    const fresh = await order(m, p, email, code);
    expect(fresh.statusCode, fresh.body).toBe(201);
    expect(fresh.json().data.totalPrice).toBe('8.00');
  });
});

describe('a restock never leaves the stock column (C7.2: restock returns stock once)', () => {
  it('stock the merchant set at the largest level the routes take, then a cancel, refund or update with restock: 200, stock stays at that level', async () => {
    const MAX = 2_147_483_647; // the largest stock the merchant routes accept
    for (const change of ['cancel', 'refund', 'update'] as const) {
      const m = await signupMerchant(h);
      const p = await shirt(m);
      const plain = await h.req('POST', '/products', { token: m.token, body: { title: 'Mug', price: '4.00', inventory_quantity: 5 } });
      expect(plain.statusCode, plain.body).toBe(201);
      const placed = await h.req('POST', '/orders', {
        token: m.token,
        body: {
          customer: { email: `buyer-${unique()}@example.com` },
          line_items: [{ product_id: p.product_id, variant_id: p.variants[0].id, quantity: 2 }, { product_id: plain.json().data.product_id, quantity: 1 }],
          shipping_address: { address1: '1 Main St', city: 'Town', country: 'US', zip: '10001' }, paymentMethod: 'card',
        },
      });
      expect(placed.statusCode, placed.body).toBe(201);
      // The merchant counts the shelf again, at the largest level there is, while the order is open.
      expect((await h.req('PATCH', `/variants/update-single-variant/${p.variants[0].id}`, { token: m.token, body: { stock: MAX } })).statusCode).toBe(200);
      expect((await h.req('PUT', `/products/${plain.json().data.product_id}`, { token: m.token, body: { inventory_quantity: MAX } })).statusCode).toBe(200);

      const orderId = placed.json().data.orderId;
      const res = change === 'update'
        ? await h.req('PUT', `/orders/update/${orderId}`, { token: m.token, body: { status: 'returned', restock: true } })
        : await h.req('POST', `/orders/${orderId}/${change}`, { token: m.token, body: { restock: true } });
      expect(res.statusCode, `${change}: ${res.body}`).toBe(200);
      const { rows: [v] } = await h.db.query<{ stock: number }>('SELECT stock FROM variants WHERE id = $1', [placed.json().data.products[0].varientId]);
      const { rows: [q] } = await h.db.query<{ n: number }>('SELECT inventory_quantity AS n FROM products WHERE id = $1', [plain.json().data.product_id]);
      expect([v.stock, q.n]).toEqual([MAX, MAX]);
    }
  });
});

describe('an update that cancels the order cannot pay it too (C7.2)', () => {
  it('status canceled with a cash payment method: 400, and the order stays pending and unpaid', async () => {
    const m = await signupMerchant(h);
    const p = await shirt(m);
    const created = await h.req('POST', '/orders', {
      token: m.token,
      body: {
        customer: { email: `buyer-${unique()}@example.com` }, line_items: [{ product_id: p.product_id, variant_id: p.variants[0].id, quantity: 1 }],
        shipping_address: { address1: '1 Main St', city: 'Town', country: 'US', zip: '10001' }, paymentMethod: 'cod',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { orderId } = created.json().data;
    const both = await h.req('PUT', `/orders/update/${orderId}`, { token: m.token, body: { status: 'canceled', paymentMethod: 'cash' } });
    expectEnvelopeError(both, 400);
    expect(both.json().message).toBe('The order is canceled by this update; it cannot be paid as well');
    const after = await h.req('PUT', `/orders/update/${orderId}`, { token: m.token, body: {} });
    expect(after.json().data).toMatchObject({ status: 'pending', financialStatus: 'pending', paymentMethod: 'cod' });
  });
});
