// Discounts (app-api.md Discount, `GET /api/v1/discounts.json`; C14.4 record fields and status
// filter on the service clock; C7.1 merchant `POST /discounts`, `PUT /discounts/{id}`). Envelopes
// throughout (C5.1). Each test names its clause.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { operatorToken, signupMerchant, signupPartner, staffToken, storeWithApp } from './helpers/actors.js';
import { uuidv7 } from '../src/ids.js';
import { insertDemoStoreData } from '../src/seed/demo-store.js';
import { isActiveAt } from '../src/discounts/discounts.service.js';
import type { DiscountRow } from '../src/discounts/discounts.repo.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());
afterEach(() => {
  vi.restoreAllMocks();
});

type Res = Awaited<ReturnType<Harness['req']>>;
const uniq = () => randomBytes(4).toString('hex');
const store = (scopes = ['read_discounts']) => storeWithApp(h, { scopes, tier: 'enterprise' });

/** Freeze the service clock at `ms` (the rate limiter and the JWTs are unaffected). */
function freezeClock(ms: number) {
  vi.spyOn(h.clock, 'nowMs').mockReturnValue(ms);
}

const postDiscount = (token: string, body: unknown) => h.req('POST', '/discounts', { token, body });

async function discount(token: string, body: Record<string, unknown> = {}) {
  const res = await postDiscount(token, { code: `CODE${uniq()}`, type: 'Percentage', discountPercentage: 10, ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

async function insertProduct(storeId: string) {
  const id = uuidv7();
  const now = new Date();
  await h.db.query('INSERT INTO products (id, store_id, title, handle, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)', [id, storeId, 'P', `p-${id}`, now]);
  return id;
}

const list = (token: string, query = '') => h.req('GET', `/api/v1/discounts.json${query}`, { token });
const codes = (res: Res) => res.json().data.discounts.map((d: any) => d.code);

// =============================================================================================

describe('merchant POST /discounts (C7.1, C14.4)', () => {
  it('201 envelope whose data is the discount, field by field', async () => {
    const s = await store();
    const product = await insertProduct(s.merchant.storeId);
    const res = await postDiscount(s.merchant.token, {
      code: 'Summer-25',
      type: 'Percentage',
      status: 'Inactive',
      discountPercentage: 12.5,
      minOrderTotal: '30.00',
      totalCoupons: 500,
      usesPerCustomer: 2,
      applyOnProducts: [product],
      startDate: '2026-07-01T00:00:00+02:00',
      endDate: '2026-08-31',
      usedCount: 99, // not settable
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      status: 201, state: 'success', message: null, count: null, pagination: null,
      data: {
        couponId: expect.any(String),
        code: 'Summer-25',
        type: 'Percentage',
        status: 'Inactive',
        discountPercentage: 12.5,
        discountAmount: null,
        minOrderTotal: 30,
        totalCoupons: 500,
        usedCount: 0,
        usesPerCustomer: 2,
        applyOnProducts: [product],
        startDate: '2026-06-30T22:00:00.000Z',
        endDate: '2026-08-31T00:00:00.000Z',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
  });

  it('defaults: status Active, minimum 0, unlimited uses, no products, starting now on the service clock, no end', async () => {
    const s = await store();
    const now = Math.floor(h.clock.nowMs() / 1000) * 1000 + 60_123;
    freezeClock(now);
    const d = await discount(s.merchant.token, { type: 'Flat', discountAmount: '5.5', discountPercentage: undefined });
    expect(d).toMatchObject({
      type: 'Flat', status: 'Active', discountAmount: 5.5, discountPercentage: null, minOrderTotal: 0, totalCoupons: 0, usedCount: 0,
      usesPerCustomer: null, applyOnProducts: [], startDate: new Date(now).toISOString(), endDate: null,
    });
    expect(d.createdAt).toBe(new Date(now).toISOString());
  });

  it("only the type's own value field is kept; FreeShipping, BuyXGetY and Freebie carry neither", async () => {
    const s = await store();
    expect(await discount(s.merchant.token, { discountAmount: 3 })).toMatchObject({ discountPercentage: 10, discountAmount: null });
    expect(await discount(s.merchant.token, { type: 'Flat', discountAmount: 3 })).toMatchObject({ discountPercentage: null, discountAmount: 3 });
    for (const type of ['FreeShipping', 'BuyXGetY', 'Freebie']) {
      expect(await discount(s.merchant.token, { type, discountAmount: 3 })).toMatchObject({ type, discountPercentage: null, discountAmount: null });
    }
  });

  it('invalid fields -> 400 envelope error naming the field; nothing stored', async () => {
    const s = await store();
    const otherStore = await signupMerchant(h);
    const foreignProduct = await insertProduct(otherStore.storeId);
    const base = { code: `C${uniq()}`, type: 'Percentage', discountPercentage: 10 };
    const cases: [Record<string, unknown>, string][] = [
      [{ code: undefined }, 'code'],
      [{ code: '  ' }, 'code'],
      [{ code: 'TWO WORDS' }, 'code'],
      [{ code: 5 }, 'code'],
      [{ type: undefined }, 'type'],
      [{ type: 'percentage' }, 'type'],
      [{ status: 'Paused' }, 'status'],
      [{ discountPercentage: undefined }, 'discountPercentage'],
      [{ discountPercentage: 0 }, 'discountPercentage'],
      [{ discountPercentage: 100.5 }, 'discountPercentage'],
      [{ discountPercentage: 'ten' }, 'discountPercentage'],
      [{ type: 'Flat', discountAmount: undefined }, 'discountAmount'],
      [{ type: 'Flat', discountAmount: -1 }, 'discountAmount'],
      [{ type: 'Flat', discountAmount: 1.234 }, 'discountAmount'],
      [{ minOrderTotal: -5 }, 'minOrderTotal'],
      [{ minOrderTotal: null }, 'minOrderTotal'],
      [{ totalCoupons: -1 }, 'totalCoupons'],
      [{ totalCoupons: 1.5 }, 'totalCoupons'],
      [{ usesPerCustomer: 0 }, 'usesPerCustomer'],
      [{ applyOnProducts: 'all' }, 'applyOnProducts'],
      [{ applyOnProducts: ['not-a-uuid'] }, 'applyOnProducts'],
      [{ applyOnProducts: [uuidv7()] }, 'applyOnProducts'],
      [{ applyOnProducts: [foreignProduct] }, 'applyOnProducts'],
      [{ startDate: 'tomorrow' }, 'startDate'],
      [{ startDate: '2026-02-30T00:00:00Z' }, 'startDate'],
      [{ startDate: null }, 'startDate'],
      [{ endDate: '2026-13-01' }, 'endDate'],
      [{ startDate: '2026-05-01T00:00:00Z', endDate: '2026-05-01T00:00:00Z' }, 'endDate'],
      [{ startDate: '2026-05-02', endDate: '2026-05-01' }, 'endDate'],
    ];
    for (const [patch, field] of cases) {
      const res = await postDiscount(s.merchant.token, { ...base, ...patch });
      expectEnvelopeError(res, 400, field);
    }
    expectEnvelopeError(await h.req('POST', '/discounts', { token: s.merchant.token, payload: '{"code":', headers: { 'content-type': 'application/json' } }), 400);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM discounts WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows[0].n).toBe(0);
  });

  it('a code already in the store (any case) -> 409 envelope; another store may use it', async () => {
    const s = await store();
    await discount(s.merchant.token, { code: 'SAVE10' });
    expectEnvelopeError(await postDiscount(s.merchant.token, { code: 'save10', type: 'FreeShipping' }), 409);
    const other = await signupMerchant(h);
    expect((await postDiscount(other.token, { code: 'SAVE10', type: 'FreeShipping' })).statusCode).toBe(201);
  });

  it('a date-time without an offset is UTC, never server-local time', async () => {
    const s = await store();
    const d = await discount(s.merchant.token, { startDate: '2027-01-02T03:04:05', endDate: '2027-01-02 04:00:00.5Z' });
    expect(d.startDate).toBe('2027-01-02T03:04:05.000Z');
    expect(d.endDate).toBe('2027-01-02T04:00:00.500Z');
  });

  it('authentication and roles: no token or a bad one 401, a partner 403, staff 201, operator with storeId', async () => {
    const m = await signupMerchant(h);
    const body = () => ({ code: `A${uniq()}`, type: 'FreeShipping' });
    expectEnvelopeError(await postDiscount('', body()), 401);
    expectEnvelopeError(await h.req('POST', '/discounts', { body: body() }), 401);
    expectEnvelopeError(await postDiscount('eyJhbGciOiJIUzI1NiJ9.e30.bad', body()), 401);
    expectEnvelopeError(await postDiscount((await signupPartner(h)).token, body()), 403);
    for (const role of ['STAFF_ADMIN', 'MANAGER'] as const) {
      const token = await staffToken(h, m, role);
      expect((await postDiscount(token, body())).statusCode).toBe(201);
    }
    const ops = await operatorToken(h);
    expectEnvelopeError(await postDiscount(ops, body()), 400, 'storeId');
    const made = await postDiscount(ops, { ...body(), storeId: m.storeId });
    expect(made.statusCode).toBe(201);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM discounts WHERE store_id = $1', [m.storeId]);
    expect(rows[0].n).toBe(3);
  });
});

describe('merchant PUT /discounts/{id} (C7.1, C14.4)', () => {
  it('changes the fields sent, keeps the rest; 200 envelope with the discount', async () => {
    const s = await store();
    const d = await discount(s.merchant.token, { code: 'KEEP', minOrderTotal: 20, endDate: '2040-01-01' });
    await h.advance(2);
    const res = await h.req('PUT', `/discounts/${d.couponId}`, { token: s.merchant.token, body: { status: 'Inactive', endDate: null, totalCoupons: 3 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 200, state: 'success', message: null, count: null, pagination: null });
    const updated = res.json().data;
    expect(updated).toEqual({ ...d, status: 'Inactive', endDate: null, totalCoupons: 3, updatedAt: expect.any(String) });
    expect(new Date(updated.updatedAt).getTime()).toBeGreaterThan(new Date(d.updatedAt).getTime());
    // Discount changes have no events (app-api.md Events).
    expect((await h.db.query('SELECT topic FROM events WHERE store_id = $1', [s.merchant.storeId])).rows).toEqual([]);
  });

  it('a type change needs the new value field, and clears the old one; the merged record is checked whole', async () => {
    const s = await store();
    const d = await discount(s.merchant.token, { startDate: '2030-01-01' });
    expectEnvelopeError(await h.req('PUT', `/discounts/${d.couponId}`, { token: s.merchant.token, body: { type: 'Flat' } }), 400, 'discountAmount');
    const flat = await h.req('PUT', `/discounts/${d.couponId}`, { token: s.merchant.token, body: { type: 'Flat', discountAmount: 7 } });
    expect(flat.json().data).toMatchObject({ type: 'Flat', discountAmount: 7, discountPercentage: null });
    // An end before the stored start is refused even when only the end is sent.
    expectEnvelopeError(await h.req('PUT', `/discounts/${d.couponId}`, { token: s.merchant.token, body: { endDate: '2029-12-31' } }), 400, 'endDate');
  });

  it("another store's discount -> 403; unknown -> 404; a taken code -> 409; all envelopes", async () => {
    const s = await store();
    const other = await signupMerchant(h);
    const theirs = await discount(other.token, { code: 'THEIRS' });
    await discount(s.merchant.token, { code: 'TAKEN' });
    const mine = await discount(s.merchant.token, { code: 'MINE' });
    expectEnvelopeError(await h.req('PUT', `/discounts/${theirs.couponId}`, { token: s.merchant.token, body: { status: 'Inactive' } }), 403);
    expectEnvelopeError(await h.req('PUT', `/discounts/${uuidv7()}`, { token: s.merchant.token, body: { status: 'Inactive' } }), 404);
    expectEnvelopeError(await h.req('PUT', '/discounts/nope', { token: s.merchant.token, body: { status: 'Inactive' } }), 404);
    expectEnvelopeError(await h.req('PUT', `/discounts/${mine.couponId}`, { token: s.merchant.token, body: { code: 'taken' } }), 409);
    expectEnvelopeError(await h.req('PUT', `/discounts/${mine.couponId}`, { body: { status: 'Inactive' } }), 401);
    expectEnvelopeError(await h.req('PUT', `/discounts/${mine.couponId}`, { token: 'x.y.z', body: { status: 'Inactive' } }), 401);
    expectEnvelopeError(await h.req('PUT', `/discounts/${mine.couponId}`, { token: (await signupPartner(h)).token, body: { status: 'Inactive' } }), 403);
    const { rows } = await h.db.query('SELECT status FROM discounts WHERE id = $1', [theirs.couponId]);
    expect(rows[0].status).toBe('Active');
    // The operator may change any store's discount.
    const ops = await operatorToken(h);
    const res = await h.req('PUT', `/discounts/${theirs.couponId}`, { token: ops, body: { status: 'Inactive' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.status).toBe('Inactive');
  });
});

describe('GET /api/v1/discounts.json (app-api.md: data = { discounts, total, page, limit })', () => {
  it('envelope with flat counters in data; count and pagination null; newest first; page and limit', async () => {
    const s = await store();
    const made = [];
    for (let i = 0; i < 3; i++) {
      made.push(await discount(s.merchant.token, { code: `LIST${i}` }));
      await h.advance(1);
    }
    const res = await list(s.accessToken);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-svc-api-version']).toBe('2026-06');
    expect(res.json()).toEqual({
      status: 200, state: 'success', message: null, count: null, pagination: null,
      data: { discounts: [made[2], made[1], made[0]], total: 3, page: 1, limit: 50 },
    });
    const p2 = await list(s.accessToken, '?page=2&limit=2');
    expect(p2.json().data).toEqual({ discounts: [made[0]], total: 3, page: 2, limit: 2 });
    expect((await list(s.accessToken, '?limit=5000')).json().data.limit).toBe(250);
    expect((await list(s.accessToken, '?page=7')).json().data).toEqual({ discounts: [], total: 3, page: 7, limit: 50 });
  });

  it('code: a part of the code in any case; %, _ and \\ match only themselves', async () => {
    const s = await store();
    for (const code of ['SUMMER-SALE', 'summer10', 'WINTER', '50%OFF', '500FF', 'A_B', 'AXB', 'BACK\\SLASH']) {
      await discount(s.merchant.token, { code });
    }
    expect(codes(await list(s.accessToken, '?code=uMmEr')).sort()).toEqual(['SUMMER-SALE', 'summer10']);
    expect(codes(await list(s.accessToken, `?code=${encodeURIComponent('%')}`))).toEqual(['50%OFF']);
    expect(codes(await list(s.accessToken, `?code=${encodeURIComponent('0%')}`))).toEqual(['50%OFF']);
    expect(codes(await list(s.accessToken, '?code=_'))).toEqual(['A_B']);
    expect(codes(await list(s.accessToken, `?code=${encodeURIComponent('\\')}`))).toEqual(['BACK\\SLASH']);
    expect((await list(s.accessToken, '?code=nothing')).json().data).toMatchObject({ discounts: [], total: 0 });
    expect((await list(s.accessToken, '?code=')).json().data.total).toBe(8);
    expect((await list(s.accessToken, '?code=summer&limit=1')).json().data).toMatchObject({ total: 2, limit: 1 });
  });

  it('status windows at their exact boundaries on the service clock (C14.4; docs/decisions.md)', async () => {
    const s = await store();
    // A round instant an hour ahead (JWTs and tokens stay valid; they were issued on this clock).
    const T = Math.ceil(h.clock.nowMs() / 60_000) * 60_000 + 3600_000;
    const iso = (ms: number) => new Date(ms).toISOString();
    // Created while the clock reads well before T.
    freezeClock(T - 3600_000);
    await discount(s.merchant.token, { code: 'STARTS_AT_T', startDate: iso(T), endDate: iso(T + 10_000) });
    await discount(s.merchant.token, { code: 'ENDS_AT_T', startDate: iso(T - 10_000), endDate: iso(T) });
    await discount(s.merchant.token, { code: 'OFF_RUNNING', status: 'Inactive', startDate: iso(T - 10_000) });
    await discount(s.merchant.token, { code: 'OFF_ENDED', status: 'Inactive', startDate: iso(T - 20_000), endDate: iso(T - 10_000) });
    await discount(s.merchant.token, { code: 'FOREVER', startDate: iso(T - 20_000) });

    const at = async (ms: number) => {
      freezeClock(ms);
      const out: Record<string, string[]> = {};
      for (const status of ['active', 'expired', 'scheduled', 'disabled']) {
        const res = await list(s.accessToken, `?status=${status}`);
        expect(res.statusCode).toBe(200);
        out[status] = codes(res).sort();
        expect(res.json().data.total).toBe(out[status].length);
      }
      // The single-record rule used at checkout agrees with the list filter at every instant.
      const { rows } = await h.db.query<DiscountRow>('SELECT * FROM discounts WHERE store_id = $1', [s.merchant.storeId]);
      expect(rows.filter((d) => isActiveAt(d, new Date(ms))).map((d) => d.code).sort()).toEqual(out.active);
      return out;
    };

    // One millisecond before T: STARTS_AT_T has not started; ENDS_AT_T still runs.
    expect(await at(T - 1)).toEqual({
      active: ['ENDS_AT_T', 'FOREVER'],
      expired: ['OFF_ENDED'],
      scheduled: ['STARTS_AT_T'],
      disabled: ['OFF_ENDED', 'OFF_RUNNING'],
    });
    // At T exactly: a start date is the first instant a discount works, an end date the last.
    expect(await at(T)).toEqual({
      active: ['ENDS_AT_T', 'FOREVER', 'STARTS_AT_T'],
      expired: ['OFF_ENDED'],
      scheduled: [],
      disabled: ['OFF_ENDED', 'OFF_RUNNING'],
    });
    // One millisecond after T: ENDS_AT_T has ended.
    expect(await at(T + 1)).toEqual({
      active: ['FOREVER', 'STARTS_AT_T'],
      expired: ['ENDS_AT_T', 'OFF_ENDED'],
      scheduled: [],
      disabled: ['OFF_ENDED', 'OFF_RUNNING'],
    });
    expect((await at(T + 10_000)).active).toContain('STARTS_AT_T');
    expect(await at(T + 10_001)).toMatchObject({ active: ['FOREVER'], expired: ['ENDS_AT_T', 'OFF_ENDED', 'STARTS_AT_T'] });
    // Every discount in the unfiltered list, whatever its state.
    expect((await list(s.accessToken)).json().data.total).toBe(5);
  });

  it('the status filter follows the service clock as it moves (C12.1)', async () => {
    const s = await store();
    const start = new Date(h.clock.nowMs() + 3600_000).toISOString();
    await discount(s.merchant.token, { code: 'LATER', startDate: start });
    expect(codes(await list(s.accessToken, '?status=scheduled'))).toEqual(['LATER']);
    await h.advance(3601);
    expect(codes(await list(s.accessToken, '?status=scheduled'))).toEqual([]);
    expect(codes(await list(s.accessToken, '?status=active'))).toEqual(['LATER']);
  });

  it('status and code combine; an unknown status -> 400 envelope', async () => {
    const s = await store();
    await discount(s.merchant.token, { code: 'VIP-ON' });
    await discount(s.merchant.token, { code: 'VIP-OFF', status: 'Inactive' });
    await discount(s.merchant.token, { code: 'OTHER' });
    const both = await list(s.accessToken, '?status=active&code=vip');
    expect(both.statusCode, both.body).toBe(200);
    expect(codes(both)).toEqual(['VIP-ON']);
    expect(codes(await list(s.accessToken, '?status=disabled&code=vip'))).toEqual(['VIP-OFF']);
    for (const status of ['Active', 'enabled', 'all']) expectEnvelopeError(await list(s.accessToken, `?status=${status}`), 400, 'status');
    expect((await list(s.accessToken, '?status=')).json().data.total).toBe(3);
  });

  it("lists only the token's store", async () => {
    const a = await store();
    const b = await store();
    await discount(a.merchant.token, { code: 'MINE' });
    await discount(b.merchant.token, { code: 'THEIRS' });
    expect(codes(await list(a.accessToken))).toEqual(['MINE']);
  });

  it('authentication: no token or a bad one 401, no read_discounts 403, envelope errors with the version header', async () => {
    const none = await list('');
    expectEnvelopeError(none, 401);
    expect(none.headers['x-svc-api-version']).toBe('2026-06');
    expect(none.headers['x-ratelimit-limit']).toBeUndefined();
    expectEnvelopeError(await list('svcat_nope'), 401);
    const s = await storeWithApp(h, { scopes: ['write_discounts', 'read_products'], tier: 'enterprise' });
    const forbidden = await list(s.accessToken);
    expectEnvelopeError(forbidden, 403);
    expect(forbidden.headers['x-ratelimit-limit']).toBe('500');
  });
});

describe('demo data (C1.5)', () => {
  it('the demo store lists its WELCOME10 discount as active', async () => {
    const s = await store();
    await h.db.transaction((tx) => insertDemoStoreData(tx, s.merchant.storeId, h.clock.now()));
    const res = await list(s.accessToken, '?status=active');
    expect(res.json().data.discounts).toEqual([
      expect.objectContaining({ code: 'WELCOME10', type: 'Percentage', status: 'Active', discountPercentage: 10, minOrderTotal: 20, totalCoupons: 100, usedCount: 1, usesPerCustomer: 1, endDate: null }),
    ]);
  });
});
