// Sales analytics (app-api.md Store analytics; `GET /api/v1/analytics/sales`, scope read_analytics,
// envelope; C6.7 ranges on UTC days; C6.8 figures; C14.14 custom ranges of whole UTC days), checked
// against a hand-computed fixture, with sessions and page views from storefront events (C7.4).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';
import { uuidv7 } from '../src/ids.js';
import { resolveRange } from '../src/analytics/sales.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { orderStore } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const sales = (token: string, query: string) => h.req('GET', `/api/v1/analytics/sales${query}`, { token });

let n = 5000;
async function customer(storeId: string) {
  const id = uuidv7();
  await h.db.query(`INSERT INTO customers (id, store_id, email, created_at, updated_at) VALUES ($1, $2, $3, now(), now())`, [id, storeId, `a-${id}@example.com`]);
  return id;
}
async function order(storeId: string, o: { at: string; customer?: string | null; total: number; tax?: number; province?: string; country?: string; cancelled?: boolean; noAddress?: boolean }) {
  const address = o.noAddress ? null : JSON.stringify({ province: o.province ?? '', country: o.country ?? 'US' });
  await h.db.query(
    `INSERT INTO orders (id, store_id, order_number, customer_id, status, financial_status, cancelled_at, total_minor, tax_minor, shipping_address,
                         confirmation_number, processed_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, 'paid', $6, $7, $8, $9::jsonb, 'X', $10, $10, $10)`,
    [uuidv7(), storeId, ++n, o.customer ?? null, o.cancelled ? 'canceled' : 'paid', o.cancelled ? o.at : null, o.total, o.tax ?? 0, address, o.at],
  );
}
async function event(slug: string, body: Record<string, unknown>) {
  const res = await h.req('POST', `/storefront/${slug}/events`, { body });
  expect(res.statusCode, res.body).toBe(202);
}

describe('GET /api/v1/analytics/sales on a hand-computed fixture (C6.8)', () => {
  it('every figure over 2030-03-01 .. 2030-03-06 (6 UTC days)', async () => {
    const s = await orderStore(h);
    const store = s.merchant.storeId;
    const [c1, c2, c3] = [await customer(store), await customer(store), await customer(store)];
    // Before the range: c1 ordered (returning); c2 only cancelled (not returning).
    await order(store, { at: '2030-02-20T10:00:00Z', customer: c1, total: 1000 });
    await order(store, { at: '2030-02-25T10:00:00Z', customer: c2, total: 500, cancelled: true });
    // In the range.
    await order(store, { at: '2030-03-01T00:00:00.000Z', customer: c1, total: 10000, tax: 800, province: 'CA' });
    await order(store, { at: '2030-03-01T23:59:59.999Z', customer: c2, total: 5050, tax: 404, province: 'NY' });
    await order(store, { at: '2030-03-02T08:00:00Z', customer: null, total: 1000, noAddress: true });
    await order(store, { at: '2030-03-03T12:00:00Z', customer: c2, total: 2525, province: '  ', country: 'DE' });
    await order(store, { at: '2030-03-04T10:00:00Z', customer: c3, total: 4000, tax: 320, province: 'TX', cancelled: true });
    await order(store, { at: '2030-03-05T23:59:59Z', customer: c3, total: 3000, tax: 240, province: 'CA' });
    // After the range (its first instant), and another store's order in it.
    await order(store, { at: '2030-03-07T00:00:00Z', customer: c1, total: 99900 });
    const other = await orderStore(h);
    await order(other.merchant.storeId, { at: '2030-03-02T00:00:00Z', total: 77700 });

    const slug = s.merchant.slug;
    await event(slug, { type: 'session', sessionId: 's1', source: 'google', occurredAt: '2030-03-01T09:00:00Z' });
    await event(slug, { type: 'page_view', sessionId: 's1', path: '/', occurredAt: '2030-03-01T09:00:01Z' });
    await event(slug, { type: 'page_view', sessionId: 's1', path: '/p/1', occurredAt: '2030-03-01T09:01:00Z' });
    await event(slug, { type: 'session', sessionId: 's2', occurredAt: '2030-03-02T09:00:00Z' });
    await event(slug, { type: 'page_view', sessionId: 's2', path: '/', occurredAt: '2030-03-02T09:00:01Z' });
    await event(slug, { type: 'session', sessionId: 's3', source: 'google', occurredAt: '2030-03-05T09:00:00Z' });
    await event(slug, { type: 'session', sessionId: 's3', source: 'google', occurredAt: '2030-03-05T09:30:00Z' });
    await event(slug, { type: 'page_view', sessionId: 's3', path: '/', occurredAt: '2030-03-06T23:59:59Z' });
    await event(slug, { type: 'session', sessionId: 's4', source: 'instagram', occurredAt: '2030-02-28T23:59:59Z' });
    await event(slug, { type: 'session', sessionId: 's5', source: 'facebook', occurredAt: '2030-03-07T00:00:00Z' });
    await event(other.merchant.slug, { type: 'session', sessionId: 'o1', occurredAt: '2030-03-02T00:00:00Z' });

    const res = await sales(s.accessToken, '?range=custom&start_date=2030-03-01&end_date=2030-03-06');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 200, state: 'success', message: null, count: null, pagination: null });
    expect(res.json().data).toEqual({
      grossSale: 215.75, // 100.00 + 50.50 + 10.00 + 25.25 + 30.00
      averageOrderValue: 43.15, // / 5 orders
      avgSalePerDay: 35.96, // / 6 days = 35.958
      avgOrders: 0.83, // 5 / 6
      conversionRate: 166.67, // 5 orders / 3 sessions x 100
      cancelOrdersCount: 1,
      canceledOrdersAmount: 40,
      totalCustomers: 3, // c1, c2, c3 (c3 also has a live order)
      returningCustomers: 1, // c1
      returningCustomerRate: 33.33,
      taxCollected: 14.44, // 8.00 + 4.04 + 2.40
      viewDataByDays: 3, // s1, s2, s3 (s3 counted once)
      ordersData: {
        totalOrders: 5,
        ordersByDay: { '2030-03-01': 2, '2030-03-02': 1, '2030-03-03': 1, '2030-03-04': 0, '2030-03-05': 1, '2030-03-06': 0 },
      },
      saleByTopRegion: { CA: 130, NY: 50.5, DE: 25.25, Unknown: 10 },
      viewsByDate: {
        '2030-03-01': { count: 2 }, '2030-03-02': { count: 1 }, '2030-03-03': { count: 0 }, '2030-03-04': { count: 0 },
        '2030-03-05': { count: 0 }, '2030-03-06': { count: 1 },
      },
      sourceCount: { google: { count: 2 }, direct: { count: 1 } },
    });
    // Keys in app-api.md's order; every day of the range present.
    expect(Object.keys(res.json().data)).toEqual([
      'grossSale', 'averageOrderValue', 'avgSalePerDay', 'avgOrders', 'conversionRate', 'cancelOrdersCount', 'canceledOrdersAmount',
      'totalCustomers', 'returningCustomers', 'returningCustomerRate', 'taxCollected', 'viewDataByDays', 'ordersData', 'saleByTopRegion',
      'viewsByDate', 'sourceCount',
    ]);
    // Date-times name their whole UTC day (C14.14): the same range.
    const same = await sales(s.accessToken, `?range=custom&start_date=${encodeURIComponent('2030-03-01T23:00:00+05:00')}&end_date=2030-03-06T01:00:00Z`);
    expect(same.json().data).toEqual(res.json().data);
    // One day only: the first.
    const one = (await sales(s.accessToken, '?range=custom&start_date=2030-03-01&end_date=2030-03-01')).json().data;
    expect([one.grossSale, one.ordersData.totalOrders, Object.keys(one.ordersData.ordersByDay), one.avgSalePerDay]).toEqual([150.5, 2, ['2030-03-01'], 150.5]);
  });

  it('zero denominators give 0; an empty range still lists every day', async () => {
    const s = await orderStore(h);
    const data = (await sales(s.accessToken, '?range=custom&start_date=2029-12-30&end_date=2030-01-02')).json().data;
    expect(data).toEqual({
      grossSale: 0, averageOrderValue: 0, avgSalePerDay: 0, avgOrders: 0, conversionRate: 0, cancelOrdersCount: 0, canceledOrdersAmount: 0,
      totalCustomers: 0, returningCustomers: 0, returningCustomerRate: 0, taxCollected: 0, viewDataByDays: 0,
      ordersData: { totalOrders: 0, ordersByDay: { '2029-12-30': 0, '2029-12-31': 0, '2030-01-01': 0, '2030-01-02': 0 } },
      saleByTopRegion: {},
      viewsByDate: { '2029-12-30': { count: 0 }, '2029-12-31': { count: 0 }, '2030-01-01': { count: 0 }, '2030-01-02': { count: 0 } },
      sourceCount: {},
    });
  });

  it('saleByTopRegion keeps the top 10 by sales', async () => {
    const s = await orderStore(h);
    for (let i = 1; i <= 12; i++) await order(s.merchant.storeId, { at: '2030-06-01T12:00:00Z', total: i * 100, province: `R${String(i).padStart(2, '0')}` });
    const regions = (await sales(s.accessToken, '?range=custom&start_date=2030-06-01&end_date=2030-06-01')).json().data.saleByTopRegion;
    expect(Object.keys(regions)).toEqual(['R12', 'R11', 'R10', 'R09', 'R08', 'R07', 'R06', 'R05', 'R04', 'R03']);
    expect(regions.R12).toBe(12);
  });

  it('the default range is last_7_days: the 7 UTC days ending today, today included', async () => {
    const s = await orderStore(h);
    const now = new Date(h.clock.nowMs());
    await order(s.merchant.storeId, { at: now.toISOString(), total: 1234 });
    const data = (await sales(s.accessToken, '')).json().data;
    const days = Object.keys(data.ordersData.ordersByDay);
    expect(days).toHaveLength(7);
    expect(days[6]).toBe(now.toISOString().slice(0, 10));
    expect(data.ordersData.ordersByDay[days[6]]).toBe(1);
    expect(data.grossSale).toBe(12.34);
    expect(Object.keys((await sales(s.accessToken, '?range=last_90_days')).json().data.ordersData.ordersByDay)).toHaveLength(90);
  });

  it('a bad range is a 400 envelope; 403 without read_analytics; 401 without a token', async () => {
    const s = await orderStore(h);
    for (const q of [
      '?range=last_week', '?range=custom', '?range=custom&start_date=2030-01-02', '?range=custom&start_date=2030-01-02&end_date=2030-01-01',
      '?range=custom&start_date=2030-02-30&end_date=2030-03-01', '?range=custom&start_date=yesterday&end_date=today',
      '?range=custom&start_date=2000-01-01&end_date=2030-01-01',
    ]) expectEnvelopeError(await sales(s.accessToken, q), 400);
    const noScope = await storeWithApp(h, { scopes: ['read_orders'], tier: 'enterprise' });
    expectEnvelopeError(await sales(noScope.accessToken, ''), 403);
    expectEnvelopeError(await h.req('GET', '/api/v1/analytics/sales'), 401);
  });
});

describe('resolveRange (C6.7: UTC days, last_N_days ending today)', () => {
  const now = new Date('2030-03-15T10:30:00Z');
  const days = (range: string, extra: Record<string, string> = {}) => {
    const r = resolveRange({ range, ...extra }, now);
    return [r.start.toISOString().slice(0, 10), new Date(r.end.getTime() - 86_400_000).toISOString().slice(0, 10), r.days];
  };
  it('each named range', () => {
    expect(days('today')).toEqual(['2030-03-15', '2030-03-15', 1]);
    expect(days('yesterday')).toEqual(['2030-03-14', '2030-03-14', 1]);
    expect(days('last_7_days')).toEqual(['2030-03-09', '2030-03-15', 7]);
    expect(days('last_30_days')).toEqual(['2030-02-14', '2030-03-15', 30]);
    expect(days('last_90_days')).toEqual(['2029-12-16', '2030-03-15', 90]);
    expect(days('this_month')).toEqual(['2030-03-01', '2030-03-15', 15]);
    expect(days('last_month')).toEqual(['2030-02-01', '2030-02-28', 28]);
    expect(days('this_year')).toEqual(['2030-01-01', '2030-03-15', 74]);
    expect(days('custom', { start_date: '2030-01-31', end_date: '2030-01-31' })).toEqual(['2030-01-31', '2030-01-31', 1]);
    expect(days('')).toEqual(days('last_7_days'));
    expect(resolveRange({ range: 'last_month' }, new Date('2030-01-05T00:00:00Z')).start.toISOString()).toBe('2029-12-01T00:00:00.000Z');
  });
});
