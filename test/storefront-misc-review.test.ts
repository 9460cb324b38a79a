// Review of the smaller public and merchant surfaces (storefront events and order status, reviews,
// mail, notifications, metafield owners): the bugs found, each pinned by a test that failed before
// its fix. Clauses: C7.4 and C14.14 (storefront events), C6.6 (metafield owners), C6.8 (analytics
// fed by the storefront).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { address, insertProduct, orderBody, orderStore, takeOrder } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

const event = (slug: string, body: unknown) => h.req('POST', `/storefront/${slug}/events`, { body });

describe('instants past year 9999 (C14.14: occurredAt is ISO 8601)', () => {
  it('a storefront event whose offset carries it into year 10000 -> 400 envelope, nothing stored (was 500 on PGlite, stored on PostgreSQL)', async () => {
    const s = await orderStore(h);
    // 9999-12-31T23:00-05:00 is 10000-01-01T04:00Z: no four-digit ISO 8601 year names it.
    expectEnvelopeError(await event(s.merchant.slug, { type: 'session', sessionId: 'far', occurredAt: '9999-12-31T23:00:00-05:00' }), 400, 'occurredAt must be an ISO 8601 date-time');
    const { rows } = await h.db.query('SELECT 1 FROM storefront_events WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows).toEqual([]);
    // The last instant a four-digit year names is still taken.
    expect((await event(s.merchant.slug, { type: 'session', sessionId: 'edge', occurredAt: '9999-12-31T23:59:59.999Z' })).statusCode).toBe(202);
    expect((await event(s.merchant.slug, { type: 'session', sessionId: 'edge', occurredAt: '9999-12-31T23:00:00+05:00' })).statusCode).toBe(202);
  });

  it('the same parser serves the analytics custom range: such a start_date -> 400 envelope (was 500 on both databases)', async () => {
    const s = await orderStore(h);
    const q = new URLSearchParams({ range: 'custom', start_date: '9999-12-31T20:00:00-05:00', end_date: '9999-12-31T22:00:00-05:00' });
    expectEnvelopeError(await h.req('GET', `/api/v1/analytics/sales?${q}`, { token: s.accessToken }), 400);
  });
});

describe('storefront sources and regions named like Object.prototype keys (C6.8)', () => {
  it('a session whose source is "__proto__" is counted under that source, so sourceCount adds up to the sessions', async () => {
    const s = await orderStore(h);
    await event(s.merchant.slug, { type: 'session', sessionId: 'p1', source: '__proto__', occurredAt: '2031-05-01T10:00:00Z' });
    await event(s.merchant.slug, { type: 'session', sessionId: 'p2', source: 'google', occurredAt: '2031-05-01T11:00:00Z' });
    const res = await h.req('GET', '/api/v1/analytics/sales?range=custom&start_date=2031-05-01&end_date=2031-05-01', { token: s.accessToken });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data.viewDataByDays).toBe(2);
    expect(JSON.parse(res.body).data.sourceCount).toEqual(JSON.parse('{"__proto__":{"count":1},"google":{"count":1}}'));
    expect(Object.keys(data.sourceCount).sort()).toEqual(['__proto__', 'google']);
  });

  it('an order shipped to a province named "__proto__" shows in saleByTopRegion', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { price: 1250 });
    await takeOrder(h, s.merchant.token, orderBody(p, { shipping_address: { ...address, province: '__proto__' } }));
    const res = await h.req('GET', '/api/v1/analytics/sales?range=today', { token: s.accessToken });
    expect(res.statusCode, res.body).toBe(200);
    expect(JSON.parse(res.body).data.saleByTopRegion).toEqual(JSON.parse('{"__proto__":12.5}'));
  });
});

describe("a deleted owner's metafields go with it (C6.6: a metafield's owner exists in the store)", () => {
  it('deleting a customer deletes its metafields in the same change; other owners keep theirs', async () => {
    const s = await storeWithApp(h, { scopes: ['read_metafields', 'write_metafields', 'read_customers', 'write_customers'] });
    const customer = async (email: string) => (await h.req('POST', '/api/v1/customers.json', { token: s.accessToken, body: { customer: { email } } })).json().customer.id as string;
    const gone = await customer(`gone-${Date.now()}@example.com`);
    const kept = await customer(`kept-${Date.now()}@example.com`);
    const item = (ownerType: string, ownerId: string, key: string) => ({ ownerType, ownerId, namespace: 'crm', key, type: 'single_line_text_field', value: `private ${key}` });
    const written = await h.req('POST', '/api/v1/metafields/bulk.json', {
      token: s.accessToken,
      body: { metafields: [item('customer', gone, 'note'), item('customer', gone, 'birthday'), item('customer', kept, 'note'), item('shop', s.merchant.storeId, 'note')] },
    });
    expect(written.statusCode, written.body).toBe(200);
    const goneId = written.json().data.metafields[0].id as string;

    expect((await h.req('DELETE', `/api/v1/customers/${gone}.json`, { token: s.accessToken })).statusCode).toBe(200);

    const list = (await h.req('GET', '/api/v1/metafields.json', { token: s.accessToken })).json();
    expect(list.count).toBe(2);
    expect(list.data.metafields.map((m: any) => [m.owner_type, m.owner_id]).sort()).toEqual([['customer', kept], ['shop', s.merchant.storeId]]);
    expect((await h.req('GET', `/api/v1/metafields.json?ownerType=customer&ownerId=${gone}`, { token: s.accessToken })).json().count).toBe(0);
    expectEnvelopeError(await h.req('GET', `/metafields/${goneId}`, { token: s.merchant.token }), 404, 'NOT_FOUND');
    const { rows } = await h.db.query('SELECT 1 FROM metafields WHERE owner_id = $1', [gone]);
    expect(rows).toEqual([]);
    // And a write naming the deleted customer is refused, as for any owner the store does not have.
    expectEnvelopeError(
      await h.req('POST', '/api/v1/metafields/bulk.json', { token: s.accessToken, body: { metafields: [item('customer', gone, 'again')] } }),
      400, /^metafields\[0\]: ownerId/,
    );
  });
});
