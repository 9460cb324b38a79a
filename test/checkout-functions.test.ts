// The store's functions at its checkout (C11.3, C11.4, C11.5): delivery options and payment
// methods hidden, renamed and moved; validation errors that block completion; automatic order and
// product discounts after a code, carried into the order; failed runs dropped; each run recorded,
// with its input, for the app's developer; erased with the customer (C9).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { DELIVERY_TARGET as DELIVERY, PAYMENT_TARGET as PAYMENT, VALIDATION_TARGET as VALIDATION, DISCOUNT_TARGET as DISCOUNT } from '../src/checkout/checkout-functions.js';
import { checkoutCalls } from './helpers/checkout.js';
import { runsOf as waitForRuns } from './helpers/function-runs.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { storeWithApp } from './helpers/actors.js';
import { address, insertProduct, uniq, type TestProduct } from './helpers/orders.js';
import { uuidv7 } from '../src/ids.js';
import { redactCustomer } from '../src/gdpr/gdpr.redaction.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const SCOPES = ['read_products', 'write_products', 'read_orders', 'write_orders', 'read_customers', 'write_customers'];

type Store = Awaited<ReturnType<typeof storeWithApp>>;

async function storeWith(functions: object[]) {
  return storeWithApp(h, { scopes: SCOPES, tier: 'enterprise', extensions: { functions } });
}

async function zone(storeId: string, name: string, price: number) {
  const id = uuidv7();
  await h.db.query(
    `INSERT INTO shipping_zones (id, store_id, name, countries, price_minor, type, created_at, updated_at)
     VALUES ($1, $2, $3, '["GB"]'::jsonb, $4, 'Simple', now(), now())`,
    [id, storeId, name, price],
  );
  return `zone-${id}`;
}

const { create, read, change, rates, complete } = checkoutCalls(() => h);

async function started(s: Store, product: TestProduct, quantity = 2) {
  const res = await create(s, { email: `buyer-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity }], shipping_address: address });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.checkout;
}

const runsOf = (s: Parameters<typeof waitForRuns>[1], n: number, handle?: string) => waitForRuns(h, s, n, handle);

describe('C11.3 delivery options', () => {
  it('shipping_rates are hidden, renamed and moved by the functions in activation order; a hidden rate cannot be chosen', async () => {
    const s = await storeWith([
      { handle: 'hide-costly', target: DELIVERY, expression: '{"operations": input.deliveryOptions.filter(o, double(o.price) > configuration.max).map(o, {"hide": {"handle": o.handle}})}', configuration: { max: 20 } },
      { handle: 'cheapest-last', target: DELIVERY, expression: '{"operations": [{"move": {"handle": input.deliveryOptions[0].handle, "index": 99}}, {"rename": {"handle": input.deliveryOptions[0].handle, "title": "Budget"}}]}' },
    ]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const cheap = await zone(s.merchant.storeId, 'Standard', 499);
    const mid = await zone(s.merchant.storeId, 'Express', 1299);
    const costly = await zone(s.merchant.storeId, 'Overnight', 2999);
    const c = await started(s, product);

    const res = await rates(s, c.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.shipping_rates.map((r: any) => [r.handle, r.title])).toEqual([[mid, 'Express'], [cheap, 'Budget']]);
    expectEnvelopeError(await change(s, c.token, { shipping_rate: { handle: costly } }), 422);
    const chosen = await change(s, c.token, { shipping_rate: { handle: cheap } });
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(chosen.json().data.checkout.shipping_line).toMatchObject({ handle: cheap, title: 'Budget', price: '4.99' });

    const runs = await runsOf(s, 2, 'hide-costly');
    expect(runs[0]).toMatchObject({ status: 'success', target: DELIVERY, checkoutToken: c.token, storeId: s.merchant.storeId });
    expect(runs[0].input.checkout.token).toBe(c.token);
    expect(runs[0].input.shop).toEqual({ id: s.merchant.storeId, domain: s.merchant.slug, currency: 'USD' });
    expect(runs[0].input.deliveryOptions.map((o: any) => o.handle)).toEqual([cheap, mid, costly]);
    expect(runs[0].output).toEqual({ operations: [{ hide: { handle: costly } }] });
  });
});

describe('C11.4 delivery functions run again at completion', () => {
  it('a rate chosen, then hidden by the function (the merchant changed its configuration), cannot complete the checkout', async () => {
    const s = await storeWith([{
      handle: 'hide-named', target: DELIVERY, configuration: { hide: 'none' },
      expression: '{"operations": [{"hide": {"handle": configuration.hide}}]}',
    }]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const standard = await zone(s.merchant.storeId, 'Standard', 499);
    const c = await started(s, product);
    expect((await change(s, c.token, { shipping_rate: { handle: standard }, payment_method: 'card' })).statusCode).toBe(200);
    const [fn] = (await h.req('GET', '/functions', { token: s.merchant.token })).json().data.functions;
    await h.req('PATCH', `/functions/${fn.functionId}`, { token: s.merchant.token, body: { configuration: { hide: standard } } });
    expectEnvelopeError(await complete(s, c.token), 422, 'a shipping rate that is still offered');
  });
});

describe('C11.3 payment methods', () => {
  it('are shaped by the functions when the checkout is created; choosing a hidden one is 422', async () => {
    const s = await storeWith([{ handle: 'no-cod', target: PAYMENT, expression: '{"operations": [{"hide": {"handle": "cod"}}, {"rename": {"handle": "card", "title": "Card"}}, {"move": {"handle": "wallet", "index": 0}}]}' }]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const c = await started(s, product);
    expect(c.payment_methods.map((m: any) => m.handle)).toEqual(['wallet', 'card', 'upi', 'bank_transfer']);
    expect(c.payment_methods[1].title).toBe('Card');
    expectEnvelopeError(await change(s, c.token, { payment_method: 'cod' }), 422);
    expect((await change(s, c.token, { payment_method: 'wallet' })).statusCode).toBe(200);
    // A GET shows what the last runs gave, and runs nothing.
    // Every run so far written (the recorder batches behind the answers), then counted.
    await h.deps.runRecorder.flush();
    const before = (await runsOf(s, 2)).length;
    expect((await read(s, c.token)).json().data.checkout.payment_methods.map((m: any) => m.handle)).toEqual(['wallet', 'card', 'upi', 'bank_transfer']);
    await h.deps.runRecorder.flush();
    expect((await runsOf(s, before)).length).toBe(before);
  });
});

describe('C11.3 the functions of a change see the checkout as changed', () => {
  it('a payment method and a shipping rate chosen by a PATCH are in that PATCH\'s input.checkout, and their errors show at once', async () => {
    const s = await storeWith([
      { handle: 'no-cod', target: VALIDATION, expression: '{"operations": input.checkout.payment_method == "cod" ? [{"validationAdd": {"errors": [{"message": "No cash on delivery", "target": "cart"}]}}] : []}' },
      { handle: 'no-express', target: VALIDATION, expression: '{"operations": has(input.checkout.shipping_line) && input.checkout.shipping_line != null && input.checkout.shipping_line.title == "Express" ? [{"validationAdd": {"errors": [{"message": "No express to this address", "target": "cart"}]}}] : []}' },
    ]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const express = await zone(s.merchant.storeId, 'Express', 1299);
    const c = await started(s, product);

    const cod = await change(s, c.token, { payment_method: 'cod' });
    expect(cod.statusCode, cod.body).toBe(200);
    expect(cod.json().data.checkout.validation_errors).toEqual([{ message: 'No cash on delivery', target: 'cart' }]);
    const card = await change(s, c.token, { payment_method: 'card', shipping_rate: { handle: express } });
    expect(card.statusCode, card.body).toBe(200);
    expect(card.json().data.checkout.validation_errors).toEqual([{ message: 'No express to this address', target: 'cart' }]);
    // What a GET shows is what that change's runs gave.
    expect((await read(s, c.token)).json().data.checkout.validation_errors).toEqual([{ message: 'No express to this address', target: 'cart' }]);
    expectEnvelopeError(await complete(s, c.token), 422);
  });
});

describe('C11.3 validations', () => {
  it("the functions' errors are the checkout's validation_errors and block completion until they are gone", async () => {
    const s = await storeWith([{
      handle: 'max-two', target: VALIDATION,
      expression: '{"operations": [{"validationAdd": {"errors": input.checkout.line_items.filter(l, l.quantity > 2.0).map(l, {"message": "At most 2 of " + l.title, "target": l.id})}}]}',
    }]);
    const product = await insertProduct(h, s.merchant.storeId, { title: 'Mug', price: 1000, stock: 10 });
    const rate = await zone(s.merchant.storeId, 'Standard', 500);
    const c = await started(s, product, 3);
    expect(c.validation_errors).toEqual([{ message: 'At most 2 of Mug', target: c.line_items[0].id }]);
    await change(s, c.token, { shipping_rate: { handle: rate }, payment_method: 'card' });
    expectEnvelopeError(await complete(s, c.token), 422, 'At most 2 of Mug');
    const fixed = await change(s, c.token, { line_items: [{ product_id: product.id, quantity: 2 }] });
    expect(fixed.json().data.checkout.validation_errors).toEqual([]);
    await change(s, c.token, { shipping_rate: { handle: rate } });
    const done = await complete(s, c.token);
    expect(done.statusCode, done.body).toBe(201);
  });
});

describe('C11.3 discounts', () => {
  it('order and product discounts after the code, capped, shown on the checkout and carried into the order', async () => {
    const s = await storeWith([
      { handle: 'ten-off', target: DISCOUNT, expression: '{"operations": [{"orderDiscountAdd": {"message": "10% off everything", "value": {"percentage": 10}}}]}' },
      { handle: 'mug-deal', target: DISCOUNT, expression: '{"operations": [{"productDiscountAdd": {"message": "2 off each mug line", "lineIds": input.checkout.line_items.map(l, l.id), "value": {"fixedAmount": "2.00"}}}]}' },
      { handle: 'greedy', target: DISCOUNT, expression: '{"operations": [{"orderDiscountAdd": {"message": "Everything", "value": {"percentage": 100}}}]}' },
    ]);
    const product = await insertProduct(h, s.merchant.storeId, { title: 'Mug', price: 2500, stock: 10 });
    await h.db.query(
      `INSERT INTO discounts (id, store_id, code, type, discount_percentage, status, start_date, created_at, updated_at)
       VALUES ($1, $2, 'HALF', 'Percentage', 50, 'Active', now() - interval '1 day', now(), now())`,
      [uuidv7(), s.merchant.storeId],
    );
    const rate = await zone(s.merchant.storeId, 'Standard', 500);
    const c = await started(s, product, 2); // 50.00
    expect(c.discount_applications).toEqual([
      { type: 'automatic', code: null, title: '10% off everything', value: '10.00', value_type: 'percentage', amount: '5.00' },
      { type: 'automatic', code: null, title: '2 off each mug line', value: '2.00', value_type: 'fixed_amount', amount: '2.00' },
      // 100 % of the subtotal, capped by what the others left.
      { type: 'automatic', code: null, title: 'Everything', value: '100.00', value_type: 'percentage', amount: '43.00' },
    ]);
    expect(c).toMatchObject({ subtotal_price: '0.00', total_discounts: '50.00', total_price: '0.00' });

    // With the code: the code first (25.00), then each function's share of what is left.
    const coded = await change(s, c.token, { discount_code: 'half', shipping_rate: { handle: rate }, payment_method: 'card' });
    expect(coded.statusCode, coded.body).toBe(200);
    expect(coded.json().data.checkout.discount_applications.map((d: any) => [d.type, d.title, d.amount])).toEqual([
      ['discount_code', 'HALF', '25.00'], ['automatic', '10% off everything', '5.00'], ['automatic', '2 off each mug line', '2.00'], ['automatic', 'Everything', '18.00'],
    ]);
    expect(coded.json().data.checkout).toMatchObject({ subtotal_price: '0.00', total_discounts: '50.00', shipping_price: '5.00', total_price: '5.00' });

    const done = await complete(s, c.token);
    expect(done.statusCode, done.body).toBe(201);
    const order = done.json().data.order;
    expect(order.discount_applications).toEqual([
      { type: 'discount_code', code: 'HALF', value: '50.00', value_type: 'percentage', title: 'HALF' },
      { type: 'automatic', code: null, value: '10.00', value_type: 'percentage', title: '10% off everything' },
      { type: 'automatic', code: null, value: '2.00', value_type: 'fixed_amount', title: '2 off each mug line' },
      { type: 'automatic', code: null, value: '100.00', value_type: 'percentage', title: 'Everything' },
    ]);
    expect(order).toMatchObject({ subtotal_price: '0.00', total_discounts: '50.00', total_price: '5.00' });
  });

  it('an order discount alone is shared over the lines, and the order keeps it', async () => {
    const s = await storeWith([
      { handle: 'five-off', target: DISCOUNT, expression: '{"operations": [{"orderDiscountAdd": {"message": "5 off", "value": {"fixedAmount": "5"}}}]}' },
    ]);
    const product = await insertProduct(h, s.merchant.storeId, { title: 'Mug', price: 1000, stock: 10 });
    const rate = await zone(s.merchant.storeId, 'Standard', 500);
    const c = await started(s, product, 3); // 30.00
    expect(c).toMatchObject({ subtotal_price: '25.00', total_discounts: '5.00', total_price: '25.00' });
    await change(s, c.token, { shipping_rate: { handle: rate }, payment_method: 'card' });
    const order = (await complete(s, c.token)).json().data.order;
    expect(order).toMatchObject({ subtotal_price: '25.00', total_discounts: '5.00', total_price: '30.00' });
    expect(order.line_items[0].total_discount).toBe('5.00');
  });
});

describe('C11.4 a failed run', () => {
  it('is dropped, the checkout goes on, and the failure is recorded with its error type', async () => {
    const s = await storeWith([
      { handle: 'broken', target: PAYMENT, expression: '{"operations": [{"hide": {"handle": input.nothing.here}}]}' },
      { handle: 'fine', target: PAYMENT, expression: '{"operations": [{"hide": {"handle": "upi"}}]}' },
    ]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const c = await started(s, product);
    expect(c.payment_methods.map((m: any) => m.handle)).toEqual(['card', 'wallet', 'cod', 'bank_transfer']);
    const [run] = await runsOf(s, 1, 'broken');
    expect(run).toMatchObject({ status: 'failure', errorType: 'RuntimeError', output: null, checkoutToken: c.token });
    expect(run.errorMessage).toEqual(expect.any(String));
  });
});

describe('C11.4 an output the platform cannot store', () => {
  it('a title with a NUL fails its run (InvalidOutputError), the checkout goes on, and both runs of the step are recorded', async () => {
    const s = await storeWith([
      { handle: 'nul-title', target: PAYMENT, expression: '{"operations": [{"rename": {"handle": "card", "title": "Card\\u0000"}}]}' },
      { handle: 'fine', target: PAYMENT, expression: '{"operations": [{"hide": {"handle": "upi"}}]}' },
    ]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const c = await started(s, product);
    expect(c.payment_methods[0]).toEqual({ handle: 'card', title: 'Credit or debit card' });
    expect(c.payment_methods.map((m: any) => m.handle)).toEqual(['card', 'wallet', 'cod', 'bank_transfer']);
    const runs = await runsOf(s, 2);
    const byHandle = Object.fromEntries(runs.map((r: any) => [r.functionHandle, r]));
    expect(byHandle['nul-title']).toMatchObject({
      status: 'failure', errorType: 'InvalidOutputError', output: null,
      errorMessage: 'output.operations[0].rename.title must not contain NUL characters or unpaired UTF-16 surrogates',
    });
    expect(byHandle.fine).toMatchObject({ status: 'success', output: { operations: [{ hide: { handle: 'upi' } }] } });
  });
});

describe('C11.5 run records', () => {
  it("a target's runs at one step share one stored input, and each reads back whole, token in place", async () => {
    const s = await storeWith([
      { handle: 'first', target: VALIDATION, expression: '{"operations": []}' },
      { handle: 'second', target: VALIDATION, expression: '{"operations": []}' },
    ]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const c = await started(s, product);
    const runs = await runsOf(s, 2);
    expect(runs.map((r: any) => r.functionHandle).sort()).toEqual(['first', 'second']);
    expect(runs[0].input).toEqual(runs[1].input);
    expect(runs[0].input.checkout).toMatchObject({ token: c.token, email: c.email });
    const { rows } = await h.db.query<any>('SELECT input, input_id FROM function_runs WHERE app_id = $1', [s.app.appId]);
    expect(rows).toHaveLength(2);
    expect(rows.map((r: any) => r.input)).toEqual([null, null]);
    expect(rows[0].input_id).toEqual(expect.any(String));
    expect(rows[1].input_id).toBe(rows[0].input_id);
    const { rows: inputs } = await h.db.query<any>('SELECT input FROM function_run_inputs WHERE id = $1', [rows[0].input_id]);
    expect(inputs).toHaveLength(1);
    // At rest the shared input holds no token (it is sealed with each run).
    expect(JSON.stringify(inputs[0].input)).not.toContain(c.token);
  });
});

describe('C11.5 erasure', () => {
  it("the platform's erasure of a redacted customer (C9) erases the inputs and outputs of the runs at their checkouts", async () => {
    const s = await storeWith([{ handle: 'peek', target: VALIDATION, expression: '{"operations": []}' }]);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const c = await started(s, product);
    await runsOf(s, 1);
    // The input is stored once for a target's runs (migration 0017), apart from the run's row.
    const stored = `SELECT coalesce(r.input, i.input) AS input, r.input_id, r.output, r.checkout_token_enc
      FROM function_runs r LEFT JOIN function_run_inputs i ON i.id = r.input_id WHERE r.app_id = $1`;
    const { rows: before } = await h.db.query<any>(stored, [s.app.appId]);
    expect(JSON.stringify(before)).toContain(c.email);
    await h.db.transaction((tx) => redactCustomer(tx, { storeId: s.merchant.storeId, customerId: null, customerEmail: c.email, orderIds: [] }, new Date()));
    const { rows } = await h.db.query<any>(stored, [s.app.appId]);
    expect(rows).toEqual([{ input: null, input_id: null, output: null, checkout_token_enc: null }]);
    const { rows: inputs } = await h.db.query('SELECT id FROM function_run_inputs WHERE id = $1', [before[0].input_id]);
    expect(inputs).toEqual([]);
  });
});
