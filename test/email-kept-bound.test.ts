// Every surface that keeps an email bounds it as kept, not as sent (src/email.ts): lower-casing can
// lengthen text ('İ', U+0130, becomes 'i' + U+0307), and an email within 254 characters as sent was
// stored past them; a checkout's completion then refused with a 400 the email its change had taken.
// A sweep over the writers of an email: past the bound as kept is a 400 naming email, at it is kept.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createHarness } from './helpers/harness.js';
import { signupPartner, storeWithApp } from './helpers/actors.js';
import { checkoutCalls } from './helpers/checkout.js';
import { insertProduct, ORDER_SCOPES, orderBody, takeOrder, uniq } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const { create } = checkoutCalls(() => h);

/** An email of `kept` characters once lower-cased (each 'İ' counts two), far fewer as sent; unique. */
function emailKeptAt(kept: number): string {
  const tag = uniq(); // 8 hex characters
  const dotted = kept - tag.length - '@example.com'.length;
  return `${'İ'.repeat(dotted / 2)}${tag}@example.com`;
}
const codePoints = (s: string) => [...s].length;

type Send = (email: string) => Promise<{ statusCode: number; body: string }>;

async function surfaces(): Promise<[string, Send][]> {
  const s = await storeWithApp(h, { scopes: [...ORDER_SCOPES, 'write_customers', 'write_orders'], tier: 'enterprise' });
  const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 1000 });
  const order = await takeOrder(h, s.merchant.token, orderBody(product));
  const customer = (await h.req('POST', '/api/v1/customers.json', { token: s.accessToken, body: { email: `c-${uniq()}@example.com` } })).json().customer;
  const partner = await signupPartner(h);
  return [
    ['POST /auth/signup', (email) => h.req('POST', '/auth/signup', { body: { email, password: 'correct-horse', name: 'M', storeName: `Shop ${uniq()}` } })],
    ['PUT /apps/developer/payout-method (paypal)', (email) => h.req('PUT', '/apps/developer/payout-method', { token: partner.token, body: { type: 'paypal', email } })],
    ['POST /orders email', (email) => h.req('POST', '/orders', { token: s.merchant.token, body: orderBody(product, { email }) })],
    ['POST /orders customer.email', (email) => h.req('POST', '/orders', { token: s.merchant.token, body: { ...orderBody(product), customer: { email } } })],
    ['PUT /orders/update/{id} email', (email) => h.req('PUT', `/orders/update/${order.orderId}`, { token: s.merchant.token, body: { email } })],
    ['POST /api/v1/customers.json', (email) => h.req('POST', '/api/v1/customers.json', { token: s.accessToken, body: { email } })],
    ['PUT /api/v1/customers/{id}.json', (email) => h.req('PUT', `/api/v1/customers/${customer.id}.json`, { token: s.accessToken, body: { email } })],
    ['POST /storefront/{store}/checkouts', (email) => create(s, { email, line_items: [{ product_id: product.id, quantity: 1 }] })],
  ];
}

describe('an email is bounded as kept (254 characters lower-cased), on every surface that keeps one', () => {
  it('one past the bound only once lower-cased is a 400 naming email; one at it is taken and kept lower-cased', async () => {
    const over = emailKeptAt(256);
    expect([codePoints(over.toLowerCase()), codePoints(over) < 254]).toEqual([256, true]);
    const refused: string[] = [];
    const taken: string[] = [];
    for (const [name, send] of await surfaces()) {
      const res = await send(emailKeptAt(256));
      if (res.statusCode !== 400 || !/email/.test(res.body)) refused.push(`${name}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      const atBound = emailKeptAt(254);
      const ok = await send(atBound);
      if (ok.statusCode >= 300 || !ok.body.includes(atBound.toLowerCase())) taken.push(`${name}: ${ok.statusCode} ${ok.body.slice(0, 200)}`);
    }
    expect(refused).toEqual([]);
    expect(taken).toEqual([]);
  });
});
