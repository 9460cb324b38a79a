// Money at its edges (C5.2 exact amounts, C6.8 analytics, C10.2 billing, C10.4 payout settings,
// C14.15 Stripe amounts): sums past 2^53, prices past exact integers, amounts with more than two
// decimals, and currencies whose minor unit is not a hundredth.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { developer, install, merchant, operator, paidApp, transactionsOf } from './helpers/billing.js';
import { signupMerchant, storeWithApp } from './helpers/actors.js';
import { events } from './helpers/events.js';
import { runBillingCharges } from '../src/billing/charges.js';
import { MAX_ORDER_MINOR } from '../src/orders/pricing.js';
import { event, invoiceEvent, signStripe } from './fixtures/webhook-stripe-events.js';

const STRIPE_SECRET = 'whsec_money_edge_0123456789';
let h: Harness;
let ops: () => Promise<string>;
beforeAll(async () => {
  h = await createHarness({ SVC_FX_RATES: '{"EUR":1.08}', SVC_STRIPE_WEBHOOK_SECRET: STRIPE_SECRET });
  ops = await operator(h);
});
afterAll(() => h?.close());

/** Exact minor units as the number of major units nearest to them (what a JSON figure can hold). */
const majorOf = (minor: bigint) => Number(`${minor / 100n}.${String(minor % 100n).padStart(2, '0')}`);

describe('C10.2 billing job: a price past exact integers', () => {
  it('is skipped, and every other due installation is still charged', async () => {
    const dev = await developer(h);
    // app-input.ts does not bound a price; set it in the row so this holds whatever the API accepts.
    const huge = await paidApp(h, dev, { amount: '10.00' });
    await h.db.query(`UPDATE apps SET pricing = jsonb_set(pricing, '{amount}', '"100000000000000000000.00"') WHERE id = $1`, [huge.appId]);
    const hugeEur = await paidApp(h, dev, { amount: '10.00', currency: 'EUR' });
    // exact in EUR, but its USD roll-up (x 1.08) is past 2^53 - 1
    await h.db.query(`UPDATE apps SET pricing = jsonb_set(pricing, '{amount}', '"90071992547409.91"') WHERE id = $1`, [hugeEur.appId]);
    const normal = await paidApp(h, dev, { amount: '10.00' });
    // installed in this order: the unchargeable installations come first in the job's id order
    const a = await install(h, await merchant(h), huge);
    const b = await install(h, await merchant(h), hugeEur);
    const c = await install(h, await merchant(h), normal);

    const run = await runBillingCharges(h.deps, { developerIds: [dev.userId] });
    expect(run.processed).toBe(1);
    expect(await transactionsOf(h, a.installationId)).toEqual([]);
    expect(await transactionsOf(h, b.installationId)).toEqual([]);
    const [txn] = await transactionsOf(h, c.installationId);
    expect(txn).toMatchObject({ status: 'paid', amount_cents: 1000, commission_cents: 200, developer_amount_cents: 800 });
  });
});

describe('C10.4 minimumPayoutAmount: exact amounts of at most two decimals', () => {
  it('400 (not a 500, not a rounded value) past 2^53 - 1 cents or with more than two decimals; the setting is unchanged', async () => {
    const dev = await developer(h);
    const patch = async (minimumPayoutAmount: unknown) =>
      h.req('PATCH', `/apps/admin/developers/${dev.userId}`, { token: await ops(), body: { minimumPayoutAmount } });
    expect((await patch('30.00')).statusCode).toBe(200);
    for (const bad of ['99999999999999999999.99', 1e20, '90071992547409.93', 25.999, '25.999']) {
      const res = await patch(bad);
      expect(res.statusCode, `${bad}: ${res.body}`).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, state: 'error', data: null });
    }
    const kept = await h.req('GET', `/apps/admin/developers/${dev.userId}`, { token: await ops() });
    expect(kept.json().data.developer.minimumPayoutAmount).toBe('30.00');
    const largest = await patch('90071992547409.91');
    expect(largest.statusCode).toBe(200);
    expect(largest.json().data.developer.minimumPayoutAmount).toBe('90071992547409.91');
    expect((await patch(25.5)).json().data.developer.minimumPayoutAmount).toBe('25.50');
  });
});

describe('C6.8 analytics: sums over many orders', () => {
  let numbers = 100_000;
  async function bulkOrders(storeId: string, count: number, totalMinor: number, taxMinor: number, status = 'paid') {
    const at = h.clock.now();
    const first = numbers;
    numbers += count;
    await h.db.query(
      `INSERT INTO orders (id, store_id, order_number, status, financial_status, cancelled_at, total_minor, tax_minor, shipping_address,
                           confirmation_number, processed_at, created_at, updated_at)
       SELECT gen_random_uuid(), $1, $2::int + g, $3, 'paid', CASE WHEN $3 = 'canceled' THEN $6::timestamptz END, $4, $5,
              '{"province":"Ontario","country":"CA"}'::jsonb, 'X', $6, $6, $6
         FROM generate_series(1, $7::int) g`,
      [storeId, first, status, totalMinor, taxMinor, at, count],
    );
  }

  it('past int8 (1,100 orders at the largest total): 200 with figures from the exact sums, not a 500', async () => {
    const s = await storeWithApp(h, { scopes: ['read_analytics'] });
    await bulkOrders(s.merchant.storeId, 1100, MAX_ORDER_MINOR, MAX_ORDER_MINOR - 1);
    await bulkOrders(s.merchant.storeId, 1030, MAX_ORDER_MINOR, 0, 'canceled');
    const res = await h.req('GET', '/api/v1/analytics/sales?range=today', { token: s.accessToken });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    const gross = 1100n * BigInt(MAX_ORDER_MINOR);
    expect(data.grossSale).toBe(majorOf(gross));
    expect(data.taxCollected).toBe(majorOf(1100n * BigInt(MAX_ORDER_MINOR - 1)));
    expect(data.canceledOrdersAmount).toBe(majorOf(1030n * BigInt(MAX_ORDER_MINOR)));
    expect(data.averageOrderValue).toBe(majorOf(BigInt(MAX_ORDER_MINOR)));
    expect(data.avgSalePerDay).toBe(majorOf(gross));
    expect(data.saleByTopRegion).toEqual({ Ontario: majorOf(gross) });
    expect(data.ordersData.totalOrders).toBe(1100);
    expect(data.cancelOrdersCount).toBe(1030);
  });

  it('past 2^53 (two orders): the figure is the number nearest the exact sum, not a sum that lost cents', async () => {
    const s = await storeWithApp(h, { scopes: ['read_analytics'] });
    await bulkOrders(s.merchant.storeId, 1, MAX_ORDER_MINOR, 0);
    await bulkOrders(s.merchant.storeId, 1, 8, 0);
    const res = await h.req('GET', '/api/v1/analytics/sales?range=today', { token: s.accessToken });
    expect(res.statusCode, res.body).toBe(200);
    // 9,007,199,254,740,991 + 8 = 9,007,199,254,740,999 hundredths: 90071992547409.98 as near as a
    // number gets, where the sum read as an int8 number first became ...741,000 (90071992547410)
    expect(res.json().data.grossSale).toBe(majorOf(9_007_199_254_740_999n));
    expect(res.json().data.grossSale).toBe(90071992547409.98);
  });
});

describe('C14.15 Stripe amounts: minor units to major units', () => {
  function post(body: unknown) {
    const payload = JSON.stringify(body);
    return h.req('POST', '/payments/stripe/webhook', { payload, headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(payload, STRIPE_SECRET) } });
  }

  it('three-decimal currencies (KWD, BHD, JOD, OMR, TND) are in thousandths: 5124 fils is 5.124 KWD', async () => {
    const m = await signupMerchant(h);
    const cases: [string, number, number][] = [['kwd', 5124, 5.124], ['bhd', 10_000, 10], ['jod', 1500, 1.5], ['omr', 990, 0.99], ['tnd', 25_010, 25.01], ['usd', 1999, 19.99]];
    for (const [currency, amount] of cases) {
      const ref = { subscriptionId: `sub_money_${currency}_${Date.now().toString(36)}`, storeId: m.storeId, orderId: `order-${currency}` };
      const res = await post(invoiceEvent('invoice.paid', ref, { currency, amount }));
      expect(res.json().data.topic, res.body).toBe('subscriptions/create');
    }
    const amounts = (await events(h, m.storeId, 'subscriptions/')).map((e) => [e.payload.currency, e.payload.amount]);
    expect(amounts).toEqual(cases.map(([currency, , major]) => [currency, major]));
  });

  it('a subscription update in a three-decimal currency: unit amount x quantity in thousandths', async () => {
    const m = await signupMerchant(h);
    const subscriptionId = `sub_money_upd_${Date.now().toString(36)}`;
    // Its subscriptions/create first: an update before it waits for it (stripe-order.test.ts).
    await post(invoiceEvent('invoice.paid', { subscriptionId, storeId: m.storeId, orderId: 'order-kwd' }, { currency: 'kwd', amount: 7500 }));
    const res = await post(event('customer.subscription.updated', {
      id: subscriptionId, object: 'subscription', customer: 'cus_1', status: 'active',
      metadata: { storeId: m.storeId, orderId: 'order-kwd' },
      items: { object: 'list', data: [{ id: 'si_1', quantity: 3, price: { id: 'price_kwd', currency: 'kwd', unit_amount: 2500, recurring: { interval: 'month', interval_count: 1 } } }] },
    }));
    expect(res.json().data.topic, res.body).toBe('subscriptions/update');
    const [written] = await events(h, m.storeId, 'subscriptions/update');
    expect(written.payload).toMatchObject({ amount: 7.5, currency: 'kwd' });
  });
});
