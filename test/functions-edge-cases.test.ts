// Edge cases of declarative functions (C11) and what the checkout makes of them (C15):
// each test failed before its fix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { DELIVERY_TARGET as DELIVERY, PAYMENT_TARGET as PAYMENT, VALIDATION_TARGET as VALIDATION, DISCOUNT_TARGET as DISCOUNT } from '../src/checkout/checkout-functions.js';
import { checkoutCalls } from './helpers/checkout.js';
import { runsOf as waitForRuns } from './helpers/function-runs.js';
import { createTestApp, installApp, signupMerchant, signupPartner, storeWithApp } from './helpers/actors.js';
import { address, insertProduct, uniq } from './helpers/orders.js';
import { redactCustomer } from '../src/gdpr/gdpr.redaction.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const SCOPES = ['read_products', 'write_products', 'read_orders', 'write_orders', 'read_customers', 'write_customers'];
const storeWith = (functions: object[]) => storeWithApp(h, { scopes: SCOPES, tier: 'enterprise', extensions: { functions } });
const { create } = checkoutCalls(() => h);

const runsOf = (s: Parameters<typeof waitForRuns>[1], n: number, handle?: string) => waitForRuns(h, s, n, handle);

describe('C11.2 reinstalling activates the functions in declared order', () => {
  it('a function declared first runs first after a reinstall, though another was installed before it was declared', async () => {
    // `late` is declared first, but added by a manifest update after `early` was installed.
    const rename = (handle: string, title: string) => ({ handle, target: PAYMENT, expression: `{"operations": [{"rename": {"handle": "card", "title": "${title}"}}]}` });
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { extensions: { functions: [rename('early', 'Early')] } });
    const merchant = await signupMerchant(h);
    const installed = await installApp(h, merchant, app);
    const updated = await h.req('PATCH', `/apps/developer/apps/${app.appId}`, {
      token: app.developerToken,
      body: { extensions: { functions: [rename('late', 'Late'), rename('early', 'Early')] } },
    });
    expect(updated.statusCode, updated.body).toBe(200);
    const removed = await h.req('DELETE', `/apps/installations/${installed.installationId}`, { token: merchant.token });
    expect(removed.statusCode, removed.body).toBe(200);
    await installApp(h, merchant, app);

    const list = (await h.req('GET', '/functions', { token: merchant.token })).json().data.functions;
    expect(list.map((f: any) => [f.handle, f.active])).toEqual([['late', true], ['early', true]]);
    // The checkout applies them in that order: the last rename wins.
    const product = await insertProduct(h, merchant.storeId, { price: 1000, stock: 10 });
    const res = await create({ merchant }, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.checkout.payment_methods[0]).toEqual({ handle: 'card', title: 'Early' });
  });
});

describe('C11.3, C5.2 a fixed amount is money, exactly', () => {
  it("a fixedAmount of 15 integer digits keeps its value to the cent, and the discount is capped at the subtotal", async () => {
    const s = await storeWith([
      { handle: 'huge', target: DISCOUNT, expression: '{"operations": [{"orderDiscountAdd": {"message": "Huge", "value": {"fixedAmount": "999999999999999.99"}}}]}' },
      { handle: 'line', target: DISCOUNT, expression: '{"operations": [{"productDiscountAdd": {"message": "Line", "lineIds": input.checkout.line_items.map(l, l.id), "value": {"fixedAmount": "100000000000000.01"}}}]}' },
    ]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1999, stock: 10 });
    const res = await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 2 }], shipping_address: address });
    expect(res.statusCode, res.body).toBe(201);
    const c = res.json().data.checkout;
    expect(c.discount_applications).toEqual([
      { type: 'automatic', code: null, title: 'Huge', value: '999999999999999.99', value_type: 'fixed_amount', amount: '39.98' },
      { type: 'automatic', code: null, title: 'Line', value: '100000000000000.01', value_type: 'fixed_amount', amount: '0.00' },
    ]);
    expect(c).toMatchObject({ subtotal_price: '0.00', total_discounts: '39.98', total_price: '0.00' });
  });
});

describe('C11.5, C9 erasure of a redacted customer', () => {
  it("a failed run's error message that quotes the customer's data is erased with the input", async () => {
    const s = await storeWith([{ handle: 'quotes', target: VALIDATION, expression: 'int(input.checkout.email) > 0 ? {"operations": []} : {"operations": []}' }]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const email = `erase-${uniq()}@example.com`;
    const res = await create(s, { email, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address });
    expect(res.statusCode, res.body).toBe(201);
    const [run] = await runsOf(s, 1);
    expect(run).toMatchObject({ status: 'failure', errorType: 'RuntimeError' });
    expect(run.errorMessage).toContain(email);

    await h.db.transaction((tx) => redactCustomer(tx, { storeId: s.merchant.storeId, customerId: null, customerEmail: email, orderIds: [] }, new Date()));
    const [erased] = await runsOf(s, 1);
    expect(erased).toMatchObject({ runId: run.runId, status: 'failure', errorType: 'RuntimeError', input: null, output: null });
    expect(JSON.stringify(erased)).not.toContain(email);
  });
});
