// Review of the buyer checkout (C15.1), zone rates (C15.2) and functions (C11): each test failed
// before its fix (docs/decisions.md, "Checkouts (C15.1)", "Shipping rates (C15.2-C15.4)").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { checkoutCalls, insertSimpleZone } from './helpers/checkout.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { address, insertProduct, orderStore, uniq } from './helpers/orders.js';
import { createTestApp, installApp, signupMerchant, signupPartner } from './helpers/actors.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const { create, change, rates, complete } = checkoutCalls(() => h);

describe('zone prices a zero-decimal currency cannot charge (C15.2, C15.1, C7.1)', () => {
  it('a yen store\'s zone priced 5.50 is not offered, so no checkout chooses a rate its completion refuses (was a 400 naming shipping_line.price at completion)', async () => {
    const s = await orderStore(h);
    await h.db.query(`UPDATE stores SET currency = 'JPY' WHERE id = $1`, [s.merchant.storeId]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 100000, stock: 10 });
    const fraction = await insertSimpleZone(h, s.merchant.storeId, { name: 'Fraction', countries: ['GB'], price: 550 });
    const whole = await insertSimpleZone(h, s.merchant.storeId, { name: 'Whole', countries: ['GB'], price: 60000 });
    const c = (await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address })).json().data.checkout;
    const offered = await rates(s, c.token);
    expect(offered.statusCode, offered.body).toBe(200);
    expect(offered.json().data.shipping_rates.map((r: any) => [r.handle, r.price])).toEqual([[`zone-${whole}`, '600.00']]);
    // Not offered, so not chosen: the 422 of C15.1.
    expectEnvelopeError(await change(s, c.token, { shipping_rate: { handle: `zone-${fraction}` }, payment_method: 'card' }), 422);
    const chosen = await change(s, c.token, { shipping_rate: { handle: `zone-${whole}` }, payment_method: 'card' });
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(chosen.json().data.checkout).toMatchObject({ currency: 'JPY', shipping_price: '600.00', total_price: '1600.00' });
    const done = await complete(s, c.token);
    expect(done.statusCode, done.body).toBe(201);
    expect(done.json().data.order).toMatchObject({ total_price: '1600.00' });
  });
});

describe('a function whose target changes (C11.2, C11.1; docs/decisions.md "Functions")', () => {
  const VALIDATION = 'cart.validations.generate.run';
  const PAYMENT = 'cart.payment-methods.transform.run';
  const fn = (handle: string, target: string) => ({ handle, target, expression: '{"operations": []}' });

  it("one the merchant switched off stays off on that store; one that was active is re-admitted under the new target (was switched on again by the developer's change)", async () => {
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { extensions: { functions: [fn('off', VALIDATION), fn('on', VALIDATION)] } });
    const merchant = await signupMerchant(h);
    await installApp(h, merchant, app);
    const listed = async () => {
      const res = await h.req('GET', '/functions', { token: merchant.token });
      expect(res.statusCode, res.body).toBe(200);
      return Object.fromEntries((res.json().data.functions as any[]).map((f) => [f.handle, f]));
    };
    const before = await listed();
    const off = await h.req('PATCH', `/functions/${before.off.functionId}`, { token: merchant.token, body: { active: false } });
    expect(off.statusCode, off.body).toBe(200);
    const changed = await h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: app.developerToken, body: { extensions: { functions: [fn('off', PAYMENT), fn('on', PAYMENT)] } } });
    expect(changed.statusCode, changed.body).toBe(200);
    const after = await listed();
    expect(after.off).toMatchObject({ target: PAYMENT, active: false });
    expect(after.on).toMatchObject({ target: PAYMENT, active: true });
  });
});

describe('the handle `all` (C11.1, C11.6)', () => {
  it('is refused in a manifest with a 400 naming the function: the run routes read it as every function of the app (was taken, and its logs could never be read on their own)', async () => {
    const partner = await signupPartner(h);
    const functions = [{ handle: 'one', target: 'cart.validations.generate.run', expression: '{"operations": []}' }, { handle: 'all', target: 'cart.validations.generate.run', expression: '{"operations": []}' }];
    const body = { name: `App ${uniq()}`, appUrl: 'https://example.com', redirectUrls: ['https://example.com/cb'], scopes: ['read_products'], extensions: { functions } };
    expectEnvelopeError(await h.req('POST', '/apps/developer/apps', { token: partner.token, body }), 400, /extensions\.functions\[1\] \(all\): handle "all" is reserved/);
    const app = await createTestApp(h, partner.token, { extensions: { functions: [functions[0]] } });
    expectEnvelopeError(await h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: app.developerToken, body: { extensions: { functions } } }), 400, /\(all\): handle "all" is reserved/);
  });
});
