// Storefront events (C7.4 `POST /storefront/{storeURL}/events`, no credential, 202; C14.14
// occurredAt defaults to now) and the customer-facing order status behind `order_status_url`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { insertProduct, orderBody, orderStore, takeOrder } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const post = (slug: string, body: unknown) => h.req('POST', `/storefront/${slug}/events`, { body });

describe('POST /storefront/{storeURL}/events (C7.4)', () => {
  it('202 envelope; the event is kept with occurredAt defaulting to the service clock', async () => {
    const s = await orderStore(h);
    await h.advance(3600);
    const res = await post(s.merchant.slug, { type: 'session', sessionId: 'abc', source: 'google', path: '/' });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ status: 202, state: 'success', message: null, data: { eventId: expect.any(String) }, count: null, pagination: null });
    const page = await post(s.merchant.slug.toUpperCase(), { type: 'page_view', sessionId: 'abc', path: '/products/x', occurredAt: '2030-01-02T03:04:05+01:00' });
    expect(page.statusCode).toBe(202);
    const { rows } = await h.db.query<any>('SELECT type, session_id, source, path, occurred_at, created_at FROM storefront_events WHERE store_id = $1 ORDER BY created_at, id', [s.merchant.storeId]);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ type: 'session', session_id: 'abc', source: 'google', path: '/' });
    expect(rows[0].occurred_at.getTime()).toBe(rows[0].created_at.getTime());
    expect(Math.abs(rows[0].occurred_at.getTime() - h.clock.nowMs())).toBeLessThan(60_000);
    expect(rows[1]).toMatchObject({ type: 'page_view', source: null, path: '/products/x', occurred_at: new Date('2030-01-02T02:04:05Z') });
  });

  it('400 envelope for a bad body; 404 for an unknown store', async () => {
    const s = await orderStore(h);
    for (const [body, field] of [
      [{ type: 'click', sessionId: 'a' }, 'type'], [{ sessionId: 'a' }, 'type'], [{ type: 'session' }, 'sessionId'], [{ type: 'session', sessionId: '  ' }, 'sessionId'],
      [{ type: 'session', sessionId: 'a', occurredAt: 'yesterday' }, 'occurredAt'], [{ type: 'session', sessionId: 'a', source: 5 }, 'source'],
    ] as [unknown, string][]) expectEnvelopeError(await post(s.merchant.slug, body), 400, field);
    expectEnvelopeError(await h.req('POST', `/storefront/${s.merchant.slug}/events`, { payload: 'nope', headers: { 'content-type': 'application/json' } }), 400);
    expectEnvelopeError(await post('no-such-store-here', { type: 'session', sessionId: 'a' }), 404);
  });
});

describe('GET order_status_url', () => {
  it('shows the order\'s status with its key; 404 without it, with a wrong one, or for another store', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId);
    const o = await takeOrder(h, s.merchant.token, orderBody(p));
    const view = (await h.req('GET', `/api/v1/orders/${o.orderId}.json`, { token: s.accessToken })).json().order;
    const url = new URL(view.order_status_url);
    const res = await h.req('GET', url.pathname + url.search);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.order).toEqual({
      name: o.name, financial_status: 'paid', fulfillment_status: 'unfulfilled', cancelled: false, tracking_number: null, tracking_url: null, created_at: view.created_at,
    });
    expectEnvelopeError(await h.req('GET', url.pathname), 404);
    expectEnvelopeError(await h.req('GET', `${url.pathname}?key=WRONG`), 404);
    const other = await orderStore(h);
    expectEnvelopeError(await h.req('GET', `/storefront/${other.merchant.slug}/orders/${o.orderId}${url.search}`), 404);
  });
});
