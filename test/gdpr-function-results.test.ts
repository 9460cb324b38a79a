// The platform's erasure of a redacted customer (C9, C11.5) in what the checkout's functions wrote:
// a function that echoes the buyer's name, street or phone into a validation message, a payment
// method's title, a discount's message or the chosen rate's title must not keep them once the
// checkout's personal data is emptied. Only the text changes: amounts, handles, codes and totals stay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { DELIVERY_TARGET as DELIVERY, PAYMENT_TARGET as PAYMENT, VALIDATION_TARGET as VALIDATION, DISCOUNT_TARGET as DISCOUNT } from '../src/checkout/checkout-functions.js';
import { checkoutCalls, insertSimpleZone } from './helpers/checkout.js';
import { storeWithApp } from './helpers/actors.js';
import { insertProduct, uniq } from './helpers/orders.js';
import { redactCustomer } from '../src/gdpr/gdpr.redaction.js';
import { erasedValuesPattern } from '../src/gdpr/erased-text.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

const { create, read, change, rates } = checkoutCalls(() => h);
type Store = Awaited<ReturnType<typeof storeWithApp>>;

const A = 'input.checkout.shipping_address';
/** Functions of each cart target (and a delivery one) that echo the buyer's data into their text. */
const FUNCTIONS = [
  {
    handle: 'cod-title', target: PAYMENT,
    expression: `{"operations": [{"rename": {"handle": "cod", "title": "Cash from " + ${A}.first_name + " at " + ${A}.address1 + " (fee 4.99)"}}]}`,
  },
  {
    handle: 'no-delivery', target: VALIDATION,
    expression: `{"operations": [{"validationAdd": {"errors": [{"target": "cart", "message": "Sorry " + ${A}.first_name + " " + ${A}.last_name + " of " + ${A}.company
      + ", we do not deliver to " + ${A}.address1 + ", Flat " + ${A}.address2 + ", " + ${A}.city + " " + ${A}.zip
      + " (" + ${A}.phone + ", " + input.checkout.email + ") under 4.99 (min 1234.50)"}]}}]}`,
  },
  {
    handle: 'thanks', target: DISCOUNT,
    expression: `{"operations": [
      {"orderDiscountAdd": {"message": "Thanks " + ${A}.first_name + " of " + ${A}.city, "value": {"fixedAmount": "4.99"}}},
      {"productDiscountAdd": {"message": ${A}.last_name + " gets 10%", "lineIds": input.checkout.line_items.map(l, l.id) + [${A}.first_name], "value": {"percentage": 10}}}]}`,
  },
  {
    handle: 'courier', target: DELIVERY,
    expression: `{"operations": [{"rename": {"handle": input.deliveryOptions[0].handle, "title": "Courier to " + ${A}.address1 + " for " + ${A}.first_name}}]}`,
  },
];

const echoingStore = () => storeWithApp(h, { scopes: ['read_products'], tier: 'enterprise', extensions: { functions: FUNCTIONS } });

type Buyer = { first_name: string; last_name: string; company: string; address1: string; address2: string; city: string; zip: string; phone: string };

/** A checkout with a line, the buyer's address and note, and the store's 4.99 rate chosen. */
async function checkoutOf(s: Store, buyer: Buyer, note: string) {
  const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
  const zoneId = await insertSimpleZone(h, s.merchant.storeId, { name: 'Standard', countries: ['GB'], price: 499 });
  const email = `buyer-${uniq()}@example.com`;
  const created = await create(s, {
    email, note, line_items: [{ product_id: product.id, quantity: 2 }],
    shipping_address: { ...buyer, province: 'Kent', province_code: 'KEN', country: 'United Kingdom', country_code: 'GB' },
  });
  expect(created.statusCode, created.body).toBe(201);
  const token: string = created.json().data.checkout.token;
  expect((await rates(s, token)).statusCode).toBe(200);
  const chosen = await change(s, token, { shipping_rate: { handle: `zone-${zoneId}` } });
  expect(chosen.statusCode, chosen.body).toBe(200);
  // The runs are recorded behind the answers: all of them are written before the erasure.
  await h.deps.runRecorder.flush();
  const { rows } = await h.db.query<{ id: string }>('SELECT id FROM checkouts WHERE store_id = $1 AND lower(email) = $2', [s.merchant.storeId, email]);
  return { id: rows[0].id, token, email };
}

const redact = (storeId: string, customerEmail: string) =>
  h.db.transaction((tx) => redactCustomer(tx, { storeId, customerId: null, customerEmail, orderIds: [] }, new Date()));

/** The checkout's row as text, and its runs (inline or shared inputs, migration 0017) as text, lower case. */
async function storedText(checkoutId: string) {
  const row = await h.db.query<{ t: string }>('SELECT c::text AS t FROM checkouts c WHERE id = $1', [checkoutId]);
  const runs = await h.db.query<{ t: string }>(
    `SELECT r::text || coalesce(i::text, '') AS t FROM function_runs r LEFT JOIN function_run_inputs i ON i.id = r.input_id WHERE r.checkout_id = $1`,
    [checkoutId],
  );
  return { row: row.rows[0].t.toLowerCase(), runs: runs.rows.map((r) => r.t.toLowerCase()) };
}

/** What the erasure must not move: every amount, handle and code of the checkout's GET. */
const figures = (c: any) => ({
  line_items: c.line_items, shipping_line: { ...c.shipping_line, title: undefined },
  discount_applications: c.discount_applications.map((d: any) => ({ ...d, title: undefined })),
  payment_methods: c.payment_methods.map((m: any) => m.handle), validation_errors: c.validation_errors.map((e: any) => e.target),
  subtotal_price: c.subtotal_price, total_discounts: c.total_discounts, shipping_price: c.shipping_price, tax_price: c.tax_price, total_price: c.total_price,
});

describe('C9, C11.4, C11.5 erasure of what the functions echoed at the checkout', () => {
  it("the buyer's name, street, city, zip, phone, email and note leave the checkout's function results and chosen rate; amounts and totals stay", async () => {
    const s = await echoingStore();
    const buyer: Buyer = {
      first_name: 'Gwendolyn', last_name: 'Quarshie', company: 'Quarshie Looms', address1: '17 Wexford Lane', address2: 'Unit 9B',
      city: 'Tumbleford', zip: 'TB9 4ZZ', phone: '+447700900123',
    };
    const note = 'Ring twice for Gwendolyn';
    const c = await checkoutOf(s, buyer, note);
    const erased = [...Object.values(buyer), note, c.email].map((v) => v.toLowerCase());
    const before = (await read(s, c.token)).json().data.checkout;
    // The functions did echo the buyer (else the test proves nothing).
    expect(before.validation_errors[0].message).toContain('Gwendolyn Quarshie of Quarshie Looms, we do not deliver to 17 Wexford Lane');
    expect(before.payment_methods.find((m: any) => m.handle === 'cod').title).toBe('Cash from Gwendolyn at 17 Wexford Lane (fee 4.99)');
    expect(before.shipping_line).toMatchObject({ title: 'Courier to 17 Wexford Lane for Gwendolyn', price: '4.99' });
    expect(before.discount_applications.map((d: any) => [d.title, d.value, d.amount])).toEqual([['Thanks Gwendolyn of Tumbleford', '4.99', '4.99'], ['Quarshie gets 10%', '10.00', '2.00']]);
    const stored = await storedText(c.id);
    expect(stored.runs.length).toBeGreaterThanOrEqual(4);
    expect(stored.row).toContain('17 wexford lane');

    await redact(s.merchant.storeId, c.email);

    const after = (await read(s, c.token)).json().data.checkout;
    expect(figures(after)).toEqual(figures(before));
    expect(after.validation_errors).toEqual([{
      target: 'cart',
      message: 'Sorry [redacted] [redacted] of [redacted], we do not deliver to [redacted], Flat [redacted], [redacted] [redacted] ([redacted], [redacted]) under 4.99 (min 1234.50)',
    }]);
    expect(after.payment_methods).toEqual(before.payment_methods.map((m: any) => (m.handle === 'cod' ? { handle: 'cod', title: 'Cash from [redacted] at [redacted] (fee 4.99)' } : m)));
    expect(after.shipping_line).toEqual({ ...before.shipping_line, title: 'Courier to [redacted] for [redacted]' });
    expect(after.discount_applications.map((d: any) => d.title)).toEqual(['Thanks [redacted] of [redacted]', '[redacted] gets 10%']);
    expect(after.shipping_address).toMatchObject({ first_name: null, address1: null, province: 'Kent', country_code: 'GB' });

    const { row, runs } = await storedText(c.id);
    for (const value of erased) {
      expect(row, value).not.toContain(value);
      for (const run of runs) expect(run, value).not.toContain(value);
    }
    // The discount's line id is a code and stays; the text the function put among them does not.
    const results = (await h.db.query<{ r: any }>('SELECT function_results AS r FROM checkouts WHERE id = $1', [c.id])).rows[0].r;
    expect(results.discountOutputs[0].operations[1].productDiscountAdd.lineIds).toEqual([before.line_items[0].id, '[redacted]']);
    expect(results.discountOutputs[0].operations[0].orderDiscountAdd.value).toEqual({ fixedAmount: '4.99' });
  });

  it('a short erased value (address2 "4") alters no amount nor the text around it; a zip "1234" goes, "1234.50" stays', async () => {
    const s = await echoingStore();
    const buyer: Buyer = { first_name: 'Bo', last_name: 'Li', company: 'Li Bakery', address1: '3 Elm Row', address2: '4', city: 'Hexworth', zip: '1234', phone: '+447700900456' };
    const c = await checkoutOf(s, buyer, 'Back door please');
    const before = (await read(s, c.token)).json().data.checkout;
    const resultsBefore = (await h.db.query<{ r: any }>('SELECT function_results AS r FROM checkouts WHERE id = $1', [c.id])).rows[0].r;

    await redact(s.merchant.storeId, c.email);

    const after = (await read(s, c.token)).json().data.checkout;
    expect(figures(after)).toEqual(figures(before));
    expect(after).toMatchObject({ shipping_price: '4.99', shipping_line: { price: '4.99' } });
    expect(after.validation_errors[0].message).toBe(
      'Sorry [redacted] [redacted] of [redacted], we do not deliver to [redacted], Flat 4, [redacted] [redacted] ([redacted], [redacted]) under 4.99 (min 1234.50)',
    );
    expect(after.payment_methods.find((m: any) => m.handle === 'cod').title).toBe('Cash from [redacted] at [redacted] (fee 4.99)');
    const results = (await h.db.query<{ r: any }>('SELECT function_results AS r FROM checkouts WHERE id = $1', [c.id])).rows[0].r;
    // Only the messages changed: values, line ids and the order of everything are as they were.
    const withoutText = (r: any) => JSON.stringify(r).replace(/"(message|title)":"[^"]*"/g, '"$1":""').replace(/"Bo"|"\[redacted\]"/g, '""');
    expect(withoutText(results)).toBe(withoutText(resultsBefore));
    expect(results.discountOutputs[0].operations[0].orderDiscountAdd.value).toEqual({ fixedAmount: '4.99' });
  });
});

describe('erased values are matched as whole tokens (erased-text.ts)', () => {
  it('never inside a longer word or number (an email anywhere); single characters and one- or two-digit numbers are not searched', () => {
    const scrub = (values: string[], text: string) => text.replace(erasedValuesPattern(values) ?? /$^/, '[redacted]');
    expect(scrub(['4'], 'Flat 4 pays 4.99')).toBe('Flat 4 pays 4.99');
    expect(scrub(['12'], 'Buy 12, pay 12.00')).toBe('Buy 12, pay 12.00');
    expect(scrub(['123'], 'zip 123, not 123.45 nor 0.123 nor 1,123 nor 1234')).toBe('zip [redacted], not 123.45 nor 0.123 nor 1,123 nor 1234');
    expect(scrub(['Ann'], "Annual sale for ann's order, ANN")).toBe("Annual sale for [redacted]'s order, [redacted]");
    expect(scrub(['Li', 'Li Bakery'], 'Li Bakery and Li, not Lisa')).toBe('[redacted] and [redacted], not Lisa');
    expect(scrub(['+44 20 7946 0000'], 'call +44 20 7946 0000.')).toBe('call [redacted].');
    expect(scrub(['a@b.com'], 'to A@B.com, to_a@b.com')).toBe('to [redacted], to_[redacted]');
  });
});
