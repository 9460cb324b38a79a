// Money in every currency (C5.2 exact amounts, C6.8 analytics; docs/decisions.md "Currencies are
// ISO 4217's"): a figure computed by a division, a percentage or a sum is an amount the currency can
// hold (a whole yen, a whole won) and an exact one, past 2^53 hundredths too. A sweep of the places
// an amount is computed and shown, in USD, JPY, KRW and BHD.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { events } from './helpers/events.js';
import { address, insertProduct, orderBody, orderStore, takeOrder, uniq } from './helpers/orders.js';
import { checkoutCalls, insertSimpleZone } from './helpers/checkout.js';
import { hundredthsStep, isoCurrency } from '../src/currencies.js';
import { data as isoCurrencies } from 'currency-codes';
import { helpers } from '../src/dashboard/render.js';
import { createTestApp, installApp, signupMerchant, signupPartner } from './helpers/actors.js';
import { signedInBrowser } from './helpers/dashboard.js';
import { runBillingCharges } from '../src/billing/charges.js';
import { dispatchPayouts, runPayoutSweep } from '../src/payouts/payouts.js';
import { MAX_ORDER_MINOR } from '../src/orders/pricing.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ SVC_FX_RATES: '{"JPY":0.0067,"KRW":0.00075,"BHD":2.65}' });
});
afterAll(() => h?.close());

/** A small seeded generator: the sweeps are the same on every run. */
function generator(seed: number) {
  return (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
}

/** A decimal string or a JSON number of major units as hundredths (two decimals at most). */
function hundredthsOf(value: string | number): bigint {
  const text = typeof value === 'number' ? value.toFixed(2) : value;
  const m = /^(-)?(\d+)\.(\d{2})$/.exec(text);
  if (!m) throw new Error(`not a two-decimal amount: ${text}`);
  const n = BigInt(m[2]) * 100n + BigInt(m[3]);
  return m[1] ? -n : n;
}

/** Exact minor units as the number of major units nearest to them (what a JSON figure holds). */
const majorOf = (minor: bigint) => Number(`${minor / 100n}.${String(minor % 100n).padStart(2, '0')}`);

/** a / b rounded half up to a whole `step` of hundredths. */
const perStep = (a: bigint, b: bigint, step: bigint) => ((2n * a + b * step) / (2n * b * step)) * step;

/** Every amount (two-decimal string) anywhere in `value`, with its path. */
function amountsIn(value: unknown, keys: RegExp, path = ''): [string, string][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => amountsIn(v, keys, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => (typeof v === 'string' && keys.test(k) ? [[`${path}.${k}`, v] as [string, string]] : amountsIn(v, keys, `${path}.${k}`)));
  }
  return [];
}

const MONEY_KEYS = /^(price|line_price|final_price|final_line_price|total_discount|subtotal_price|tax_price|shipping_price|total_discounts|total_price|total_refunded_amount|total_net_amount|amount|original_price|subtotal|totalPrice)$/;

describe('orders in a currency without cents: every amount shown is a whole unit', () => {
  it('random JPY and KRW orders (percentage codes, tax, shipping, refunds): the order, its list row, its webhooks and its refund', async () => {
    const next = generator(11);
    for (const currency of ['JPY', 'KRW']) {
      const s = await orderStore(h);
      const step = BigInt(hundredthsStep(currency));
      const code = `P${uniq().toUpperCase()}`;
      const percent = 1 + next(9_900) / 100;
      expect((await h.req('POST', '/discounts', { token: s.merchant.token, body: { code, type: 'Percentage', discountPercentage: percent } })).statusCode).toBe(201);
      for (let i = 0; i < 4; i++) {
        const lines = Array.from({ length: 1 + next(4) }, (_, k) => ({ title: `Line ${k}`, price: String(1 + next(99_999)), quantity: 1 + next(13) }));
        const order = await takeOrder(h, s.merchant.token, orderBody(null, {
          currency, line_items: lines, discount_code: code, tax_rate: `0.0${1 + next(9)}${next(10)}`, shipping_line: { title: 'Std', price: String(next(2_000)) },
        }));
        // Half of them have their products replaced (C7.2): the totals are computed again with the code and the tax rate.
        let replaced: unknown = null;
        if (i % 2 === 1) {
          const product = await insertProduct(h, s.merchant.storeId, { price: Number(BigInt(1 + next(9_999)) * step), stock: 1_000 });
          const res = await h.req('PUT', `/orders/update/${order.orderId}`, {
            token: s.merchant.token, body: { products: [{ product_id: product.id, quantity: 1 + next(7) }, { product_id: product.id, quantity: 1 + next(7), price: String(1 + next(99_999)) }] },
          });
          expect(res.statusCode, res.body).toBe(200);
          replaced = res.json();
        }
        const view = (await h.req('GET', `/api/v1/orders/${order.orderId}.json`, { token: s.accessToken })).json().order;
        const list = (await h.req('GET', '/api/v1/orders.json?limit=1', { token: s.accessToken })).json().orders;
        const refund = await h.req('POST', `/orders/${order.orderId}/refund`, { token: s.merchant.token, body: { reason: 'customer' } });
        expect(refund.statusCode, refund.body).toBeLessThan(300);
        const shown = [
          ...amountsIn(view, MONEY_KEYS, 'order'),
          ...amountsIn(list, MONEY_KEYS, 'list'),
          ...amountsIn(order, MONEY_KEYS, 'record'),
          ...amountsIn(replaced, MONEY_KEYS, 'update'),
          ...amountsIn((await events(h, s.merchant.storeId)).map((e) => e.payload), MONEY_KEYS, 'events'),
        ];
        expect(shown.length).toBeGreaterThan(10);
        for (const [where, amount] of shown) {
          if (hundredthsOf(amount) % step !== 0n) throw new Error(`${currency} ${where} = ${amount} is not a whole ${currency} unit`);
        }
      }
    }
  });
});

describe('checkouts in a currency without cents: every amount shown is a whole unit (C15.1, C15.2)', () => {
  const { create, change, rates, complete } = checkoutCalls(() => h);
  it('random JPY and KRW checkouts with a Percentage, Flat or FreeShipping code and a zone rate: the checkout, its rates and its order', async () => {
    const next = generator(23);
    for (const currency of ['JPY', 'KRW']) {
      const step = BigInt(hundredthsStep(currency));
      for (const [type, extra] of [['Percentage', { discountPercentage: 12.34 }], ['Flat', { discountAmount: '777.50' }], ['FreeShipping', {}]] as const) {
        const s = await orderStore(h);
        await h.db.query(`UPDATE stores SET currency = $2 WHERE id = $1`, [s.merchant.storeId, currency]);
        const code = `C${uniq().toUpperCase()}`;
        const made = await h.req('POST', '/discounts', { token: s.merchant.token, body: { code, type, ...extra } });
        expect(made.statusCode, made.body).toBe(201);
        const zone = await insertSimpleZone(h, s.merchant.storeId, { name: 'Whole', countries: ['GB'], price: Number(BigInt(1 + next(3_000)) * step) });
        const products = await Promise.all([0, 1, 2].map(() => insertProduct(h, s.merchant.storeId, { price: Number(BigInt(1 + next(50_000)) * step), stock: 1_000 })));
        const c = await create(s, {
          email: `b-${uniq()}@example.com`, shipping_address: address, discount_code: code,
          line_items: products.map((p) => ({ product_id: p.id, quantity: 1 + next(9) })),
        });
        expect(c.statusCode, c.body).toBe(201);
        const token = c.json().data.checkout.token;
        const offered = (await rates(s, token)).json().data.shipping_rates;
        const changed = await change(s, token, { shipping_rate: { handle: `zone-${zone}` }, payment_method: 'card' });
        expect(changed.statusCode, changed.body).toBe(200);
        const checkout = changed.json().data.checkout;
        expect(checkout.validation_errors).toEqual([]);
        expect(checkout.discount_applications).toEqual([expect.objectContaining({ type: 'discount_code', code })]);
        expect(hundredthsOf(checkout.total_discounts)).toBeGreaterThan(0n);
        const done = await complete(s, token);
        expect(done.statusCode, done.body).toBe(201);
        const shown = [...amountsIn(offered, MONEY_KEYS, 'rates'), ...amountsIn(checkout, MONEY_KEYS, 'checkout'), ...amountsIn(done.json().data.order, MONEY_KEYS, 'order')];
        expect(shown.length).toBeGreaterThan(10);
        for (const [where, amount] of shown) {
          if (hundredthsOf(amount) % step !== 0n) throw new Error(`${currency} ${type} ${where} = ${amount} is not a whole ${currency} unit`);
        }
      }
    }
  });
});

describe('C6.8 store analytics: averages are amounts of the store currency', () => {
  let numbers = 500_000;
  /** Orders written directly (as the analytics tests do), today, of the given totals. */
  async function ordersOf(storeId: string, totals: bigint[], customerId: string | null = null) {
    const at = h.clock.now();
    for (const total of totals) {
      await h.db.query(
        `INSERT INTO orders (id, store_id, order_number, customer_id, status, financial_status, total_minor, tax_minor, shipping_address,
                             confirmation_number, processed_at, created_at, updated_at)
         VALUES (gen_random_uuid(), $1, $2, $3, 'paid', 'paid', $4, 0, '{"country":"JP"}'::jsonb, 'X', $5, $5, $5)`,
        [storeId, numbers++, customerId, total.toString(), at],
      );
    }
  }

  it('a yen store of orders of 100, 100 and 101 yen: an average order of 100 yen, not 100.33 (through POST /orders)', async () => {
    const s = await orderStore(h);
    await h.db.query(`UPDATE stores SET currency = 'JPY' WHERE id = $1`, [s.merchant.storeId]);
    for (const price of ['100', '100', '101']) await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ title: 'Tea', price, quantity: 1 }] }));
    const res = await h.req('GET', '/api/v1/analytics/sales?range=today', { token: s.accessToken });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ grossSale: 301, averageOrderValue: 100, avgSalePerDay: 301 });
    const week = (await h.req('GET', '/api/v1/analytics/sales?range=last_7_days', { token: s.accessToken })).json().data;
    // 301 / 7 days = 43.0 yen a day, half up to a whole yen
    expect(week).toMatchObject({ grossSale: 301, averageOrderValue: 100, avgSalePerDay: 43 });
  });

  it('over random totals in USD, JPY, KRW and BHD: averageOrderValue and avgSalePerDay are the exact quotient, half up to a whole step', async () => {
    const next = generator(5);
    for (const currency of ['USD', 'JPY', 'KRW', 'BHD']) {
      const step = BigInt(hundredthsStep(currency));
      for (let round = 0; round < 3; round++) {
        const s = await orderStore(h, ['read_analytics']);
        await h.db.query(`UPDATE stores SET currency = $2 WHERE id = $1`, [s.merchant.storeId, currency]);
        const totals = Array.from({ length: 2 + next(6) }, () => BigInt(1 + next(1_000_000)) * step);
        // one store in three is past 2^53 hundredths in all
        if (round === 2) totals.push(BigInt(MAX_ORDER_MINOR) - (BigInt(MAX_ORDER_MINOR) % step));
        await ordersOf(s.merchant.storeId, totals);
        const gross = totals.reduce((a, b) => a + b, 0n);
        for (const [range, days] of [['today', 1n], ['last_7_days', 7n], ['last_30_days', 30n]] as const) {
          const res = await h.req('GET', `/api/v1/analytics/sales?range=${range}`, { token: s.accessToken });
          expect(res.statusCode, res.body).toBe(200);
          const data = res.json().data;
          expect(data.grossSale).toBe(majorOf(gross));
          expect([currency, range, data.averageOrderValue]).toEqual([currency, range, majorOf(perStep(gross, BigInt(totals.length), step))]);
          expect([currency, range, data.avgSalePerDay]).toEqual([currency, range, majorOf(perStep(gross, days, step))]);
        }
      }
    }
  });
});

describe("a customer's total_spent is an exact sum (C5.2)", () => {
  // src/customers/customers.repo.ts (WITH_TOTALS) summed total_minor - refunded_minor in SQL and cast
  // it ::bigint, which both drivers read as a JavaScript number: past 2^53 hundredths the figure lost
  // cents (two orders of one customer suffice, each within MAX_ORDER_MINOR), and past int8 (1,025
  // orders at the largest total) the cast failed (a 500), as the analytics sums did before they
  // became numeric text (docs/decisions.md "Sales analytics sums"). Now read as numeric text too.
  it('two orders of one customer, 2^53 - 1 and 0.02 hundredths: total_spent "90071992547409.93", not a cent off', async () => {
    const s = await orderStore(h);
    const email = `big-${uniq()}@example.com`;
    // 900 x 100,000,000,000.00 + 71,992,547,409.91 = 2^53 - 1 hundredths, the largest order total
    const largest = await takeOrder(h, s.merchant.token, orderBody(null, {
      customer: { email, first_name: 'Ada', last_name: 'Lovelace' },
      line_items: [{ title: 'Ship', price: '100000000000.00', quantity: 900 }, { title: 'Rest', price: '71992547409.91', quantity: 1 }],
    }));
    const view = (await h.req('GET', `/api/v1/orders/${largest.orderId}.json`, { token: s.accessToken })).json().order;
    expect(hundredthsOf(view.total_price)).toBe(BigInt(MAX_ORDER_MINOR));
    await takeOrder(h, s.merchant.token, orderBody(null, { customer: { email, first_name: 'Ada', last_name: 'Lovelace' }, line_items: [{ title: 'Pin', price: '0.02', quantity: 1 }] }));
    const customer = view.customer;
    const res = await h.req('GET', `/api/v1/customers/${customer.id}.json`, { token: s.accessToken });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().customer).toMatchObject({ orders_count: 2, total_spent: '90071992547409.93' });
  });

  it('1,100 orders of one customer at the largest total: 200 with the exact total_spent, not a 500 (past int8)', async () => {
    const s = await orderStore(h);
    const first = await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ title: 'Pin', price: '0.02', quantity: 1 }] }));
    const customer = (await h.req('GET', `/api/v1/orders/${first.orderId}.json`, { token: s.accessToken })).json().order.customer;
    const at = h.clock.now();
    await h.db.query(
      `INSERT INTO orders (id, store_id, order_number, customer_id, status, financial_status, total_minor, tax_minor, confirmation_number, processed_at, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 700000 + g, $2, 'paid', 'paid', $3, 0, 'X', $4, $4, $4 FROM generate_series(1, 1100) g`,
      [s.merchant.storeId, customer.id, MAX_ORDER_MINOR, at],
    );
    const res = await h.req('GET', `/api/v1/customers/${customer.id}.json`, { token: s.accessToken });
    expect(res.statusCode, res.body).toBe(200);
    const exact = 1100n * BigInt(MAX_ORDER_MINOR) + 2n;
    expect(res.json().customer.total_spent).toBe(`${exact / 100n}.${String(exact % 100n).padStart(2, '0')}`);
  });
});

describe("the dashboard shows an amount as the service keeps it, in every currency", () => {
  /** The amount a formatted figure shows, in hundredths (the 'en' locale: ',' groups, '.' decimals). */
  const shownHundredths = (text: string) => {
    const digits = text.replace(/[^0-9.-]/g, '').replace(/^[.]+|[.]+$/g, '');
    const [whole, frac = ''] = digits.split('.');
    if (frac.replace(/0+$/, '').length > 2) throw new Error(`more than two decimals shown: ${text}`);
    return BigInt(whole) * 100n + BigInt(frac.padEnd(2, '0').slice(0, 2));
  };

  it('over every ISO 4217 currency and random two-decimal amounts: the figure shown is the amount, never rounded to the minor unit', () => {
    const next = generator(3);
    const { money } = helpers('en');
    const codes = isoCurrencies.map((c) => c.code).filter((c) => isoCurrency(c) !== null);
    expect(codes.length).toBeGreaterThan(150);
    const wrong: string[] = [];
    for (const code of codes) {
      for (let i = 0; i < 20; i++) {
        const minor = BigInt(next(2 ** 30)) * (i % 4 === 0 ? 100n : 1n);
        const amount = `${minor / 100n}.${String(minor % 100n).padStart(2, '0')}`;
        const shown = money(amount, code);
        if (shownHundredths(shown) !== minor) wrong.push(`${code} ${amount} shown as ${shown}`);
      }
    }
    expect(wrong.slice(0, 10)).toEqual([]);
  });

  it("a payout of a yen charge: the developer's share (C10.2, kept in hundredths of a yen) is shown as kept, 79,999.20, not rounded to 79,999", async () => {
    const partner = await signupPartner(h);
    const browser = await signedInBrowser(h, partner.email);
    const app = await createTestApp(h, partner.token, { pricing: { type: 'recurring', amount: '99999', currency: 'JPY', interval: 'month' } });
    await installApp(h, await signupMerchant(h), app);
    await runBillingCharges(h.deps, { developerIds: [partner.userId] });
    await h.req('PUT', '/apps/developer/payout-method', { token: partner.token, body: { type: 'paypal', email: `pay-${uniq()}@example.com` } });
    await runPayoutSweep(h.deps, { force: true, developerIds: [partner.userId] });
    await dispatchPayouts(h.deps, { developerIds: [partner.userId] });
    const earnings = await browser.get('/dashboard/earnings');
    const payoutId = /\/dashboard\/earnings\/payouts\/([0-9a-f-]+)/.exec(earnings.html)![1];
    // The service keeps and shows the share in hundredths of a yen (docs/decisions.md "Commission in zero-decimal currencies").
    const api = (await h.req('GET', `/apps/developer/payouts/${payoutId}`, { token: partner.token })).json();
    expect(JSON.stringify(api)).toContain('"developerAmount":"79999.20"');
    const detail = await browser.get(`/dashboard/earnings/payouts/${payoutId}`);
    expect(detail.status).toBe(200);
    // 99,999 yen, 20 % commission (19,999.80), 79,999.20 to the developer, $535.99 at 0.0067
    expect(detail.html).toMatch(/<td>¥99,999<\/td><td>¥79,999\.20<\/td><td>0\.0067<\/td><td>\$535\.99<\/td>/);
  });
});
