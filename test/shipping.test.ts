// Shipping zones (app-api.md Shipping zone, `POST /api/v1/shipping_zones.json`; C6.10 list, get,
// update, delete and ISO 3166-1 alpha-2 codes; C14.8 list key). Envelopes throughout, errors
// included (C5.1). Each test names its clause.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { uuidv7 } from '../src/ids.js';
import { insertDemoStoreData } from '../src/seed/demo-store.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

type Res = Awaited<ReturnType<Harness['req']>>;
const store = (scopes = ['read_shipping', 'write_shipping']) => storeWithApp(h, { scopes, tier: 'enterprise' });
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The shared envelope error, from an App API route: with its version header (C5.1). */
function expectApiEnvelopeError(res: Res, status: number, messagePart?: string) {
  expectEnvelopeError(res, status, messagePart);
  expect(res.headers['x-svc-api-version']).toBe('2026-06');
}

const post = (token: string, body: unknown) => h.req('POST', '/api/v1/shipping_zones.json', { token, body });
async function zone(token: string, body: Record<string, unknown> = {}) {
  const res = await post(token, { name: 'Zone', ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.shipping_zone;
}
const zoneCount = async (storeId: string) => (await h.db.query('SELECT count(*)::int AS n FROM shipping_zones WHERE store_id = $1', [storeId])).rows[0].n;

// =============================================================================================

describe('POST /api/v1/shipping_zones.json (app-api.md; write_shipping)', () => {
  it('201 envelope data.shipping_zone field by field; price a decimal string; count and pagination null', async () => {
    const s = await store();
    const res = await post(s.accessToken, {
      name: 'Europe heavy',
      countries: ['DE', 'fr', 'NL', 'DE'],
      description: 'Parcels over 5 kg',
      price: 19.9,
      type: 'Weight',
      digitalProd: false,
      minWeight: 5,
      maxWeight: 30.5,
      minPrice: 10,
      maxPrice: 500.25,
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-ratelimit-limit']).toBe('500');
    expect(res.json()).toEqual({ status: 201, state: 'success', message: null, data: { shipping_zone: expect.any(Object) }, count: null, pagination: null });
    expect(res.json().data.shipping_zone).toEqual({
      shippingZoneId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      shippingName: 'Europe heavy',
      zone: ['DE', 'FR', 'NL'], // upper case, duplicates dropped (docs/decisions.md)
      description: 'Parcels over 5 kg',
      price: '19.90',
      type: 'Weight',
      digitalProd: false,
      minWeight: 5,
      maxWeight: 30.5,
      minPrice: 10,
      maxPrice: 500.25,
      storeId: s.merchant.storeId,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
  });

  it('defaults: type Simple, digitalProd true, price 0.00, no countries, empty description, no bounds', async () => {
    const s = await store();
    expect(await zone(s.accessToken, { name: 'Local' })).toMatchObject({
      shippingName: 'Local', zone: [], description: '', price: '0.00', type: 'Simple', digitalProd: true,
      minWeight: null, maxWeight: null, minPrice: null, maxPrice: null,
    });
  });

  it('aliases: shippingName for name, zone for countries; the documented name wins when both are sent', async () => {
    const s = await store();
    expect(await zone(s.accessToken, { name: undefined, shippingName: 'Alias', zone: ['US', 'CA'], price: '7.5' })).toMatchObject({ shippingName: 'Alias', zone: ['US', 'CA'], price: '7.50' });
    expect(await zone(s.accessToken, { name: 'Name', shippingName: 'Alias', countries: ['GB'], zone: ['US'] })).toMatchObject({ shippingName: 'Name', zone: ['GB'] });
  });

  it('missing or blank name -> 400 envelope error; nothing stored', async () => {
    const s = await store();
    for (const body of [{}, { name: '' }, { name: '  ' }, { shippingName: ' ' }, { name: null }, { countries: ['US'] }]) {
      expectApiEnvelopeError(await post(s.accessToken, body), 400, 'name');
    }
    expect(await zoneCount(s.merchant.storeId)).toBe(0);
  });

  it('country codes outside ISO 3166-1 alpha-2 -> 400 envelope naming them (C6.10)', async () => {
    const s = await store();
    for (const countries of [['UK'], ['USA'], ['US', 'XX'], ['840'], ['U'], [''], [1], [null], ['United States']]) {
      expectApiEnvelopeError(await post(s.accessToken, { name: 'Z', countries }), 400, 'countries');
    }
    expectApiEnvelopeError(await post(s.accessToken, { name: 'Z', zone: ['ZZ'] }), 400, 'ZZ');
    expectApiEnvelopeError(await post(s.accessToken, { name: 'Z', countries: 'US' }), 400, 'countries');
    expect(await zoneCount(s.merchant.storeId)).toBe(0);
    // Every assigned code passes, whatever the case.
    expect((await zone(s.accessToken, { countries: ['gb', 'Jp', 'BR', 'ZA', 'AQ'] })).zone).toEqual(['GB', 'JP', 'BR', 'ZA', 'AQ']);
  });

  it('other invalid fields -> 400 envelope naming the field', async () => {
    const s = await store();
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'simple' }, 'type'],
      [{ type: 'Free' }, 'type'],
      [{ digitalProd: 'yes' }, 'digitalProd'],
      [{ price: -1 }, 'price'],
      [{ price: 1.999 }, 'price'],
      [{ price: 'ten' }, 'price'],
      [{ price: null }, 'price'],
      [{ minWeight: 'heavy' }, 'minWeight'],
      [{ minWeight: 10, maxWeight: 5 }, 'minWeight'],
      [{ minPrice: 100, maxPrice: 50 }, 'minPrice'],
      [{ description: 5 }, 'description'],
    ];
    for (const [patch, field] of cases) expectApiEnvelopeError(await post(s.accessToken, { name: 'Z', ...patch }), 400, field);
    expectApiEnvelopeError(await h.req('POST', '/api/v1/shipping_zones.json', { token: s.accessToken, payload: '{', headers: { 'content-type': 'application/json' } }), 400);
    expect(await zoneCount(s.merchant.storeId)).toBe(0);
  });
});

describe('GET /api/v1/shipping_zones.json (C6.10, C14.8: data.shipping_zones with count and pagination)', () => {
  it('newest first, envelope count and pagination; page and limit (clamped at 250)', async () => {
    const s = await store();
    const made = [];
    for (let i = 0; i < 3; i++) {
      made.push(await zone(s.accessToken, { name: `Z${i}` }));
      await h.advance(1);
    }
    const res = await h.req('GET', '/api/v1/shipping_zones.json', { token: s.accessToken });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 200, state: 'success', message: null,
      data: { shipping_zones: [made[2], made[1], made[0]] },
      count: 3,
      pagination: { page: 1, limit: 50, totalPages: 1, resultCount: 3, totalResult: 3 },
    });
    const p2 = (await h.req('GET', '/api/v1/shipping_zones.json?page=2&limit=2', { token: s.accessToken })).json();
    expect(p2.data.shipping_zones).toEqual([made[0]]);
    expect(p2.count).toBe(3);
    expect(p2.pagination).toEqual({ page: 2, limit: 2, totalPages: 2, resultCount: 1, totalResult: 3 });
    expect((await h.req('GET', '/api/v1/shipping_zones.json?limit=999', { token: s.accessToken })).json().pagination.limit).toBe(250);
  });

  it("an empty store answers an empty list; another store's zones never show", async () => {
    const s = await store();
    const other = await store();
    await zone(other.accessToken);
    expect((await h.req('GET', '/api/v1/shipping_zones.json', { token: s.accessToken })).json()).toMatchObject({
      data: { shipping_zones: [] }, count: 0, pagination: { page: 1, limit: 50, totalPages: 0, resultCount: 0, totalResult: 0 },
    });
  });
});

describe('GET, PUT and DELETE /api/v1/shipping_zones/{id}.json (C6.10)', () => {
  it('GET answers the zone in data.shipping_zone; unknown, malformed or another store\'s id -> 404 envelope', async () => {
    const s = await store();
    const z = await zone(s.accessToken, { countries: ['US'] });
    const res = await h.req('GET', `/api/v1/shipping_zones/${z.shippingZoneId}.json`, { token: s.accessToken });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 200, state: 'success', message: null, data: { shipping_zone: z }, count: null, pagination: null });
    const other = await store();
    const theirs = await zone(other.accessToken);
    for (const id of [uuidv7(), 'nope', theirs.shippingZoneId]) {
      expectApiEnvelopeError(await h.req('GET', `/api/v1/shipping_zones/${id}.json`, { token: s.accessToken }), 404);
    }
  });

  it('PUT changes the fields sent (aliases too) and keeps the rest; 200 data.shipping_zone', async () => {
    const s = await store();
    const z = await zone(s.accessToken, { name: 'Before', countries: ['US'], price: 5, type: 'Price', minPrice: 0, maxPrice: 100, description: 'd' });
    await h.advance(2);
    const res = await h.req('PUT', `/api/v1/shipping_zones/${z.shippingZoneId}.json`, { token: s.accessToken, body: { shippingName: 'After', zone: ['ca', 'MX'], price: '6.25', maxPrice: null } });
    expect(res.statusCode).toBe(200);
    const updated = res.json().data.shipping_zone;
    expect(updated).toEqual({ ...z, shippingName: 'After', zone: ['CA', 'MX'], price: '6.25', maxPrice: null, updatedAt: expect.stringMatching(ISO) });
    expect(new Date(updated.updatedAt).getTime()).toBeGreaterThan(new Date(z.updatedAt).getTime());
    expect((await h.req('GET', `/api/v1/shipping_zones/${z.shippingZoneId}.json`, { token: s.accessToken })).json().data.shipping_zone).toEqual(updated);
  });

  it('PUT checks what it is sent and the merged zone: blank name, bad codes, crossed bounds -> 400; unknown or foreign -> 404', async () => {
    const s = await store();
    const z = await zone(s.accessToken, { minWeight: 1, maxWeight: 2 });
    const put = (id: string, body: unknown) => h.req('PUT', `/api/v1/shipping_zones/${id}.json`, { token: s.accessToken, body });
    expectApiEnvelopeError(await put(z.shippingZoneId, { name: ' ' }), 400, 'name');
    expectApiEnvelopeError(await put(z.shippingZoneId, { countries: ['EU'] }), 400, 'countries');
    expectApiEnvelopeError(await put(z.shippingZoneId, { minWeight: 3 }), 400, 'minWeight');
    expectApiEnvelopeError(await put(z.shippingZoneId, 'text'), 400);
    const other = await store();
    const theirs = await zone(other.accessToken, { name: 'Theirs' });
    expectApiEnvelopeError(await put(theirs.shippingZoneId, { name: 'Mine now' }), 404);
    expectApiEnvelopeError(await put(uuidv7(), { name: 'X' }), 404);
    expect((await h.req('GET', `/api/v1/shipping_zones/${theirs.shippingZoneId}.json`, { token: other.accessToken })).json().data.shipping_zone.shippingName).toBe('Theirs');
    expect((await h.req('GET', `/api/v1/shipping_zones/${z.shippingZoneId}.json`, { token: s.accessToken })).json().data.shipping_zone).toEqual(z);
  });

  it('DELETE answers 200 envelope with data null; the zone is gone; a second delete or a foreign zone -> 404', async () => {
    const s = await store();
    const z = await zone(s.accessToken);
    const keep = await zone(s.accessToken);
    const res = await h.req('DELETE', `/api/v1/shipping_zones/${z.shippingZoneId}.json`, { token: s.accessToken });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 200, state: 'success', message: null, data: null, count: null, pagination: null });
    expectApiEnvelopeError(await h.req('GET', `/api/v1/shipping_zones/${z.shippingZoneId}.json`, { token: s.accessToken }), 404);
    expectApiEnvelopeError(await h.req('DELETE', `/api/v1/shipping_zones/${z.shippingZoneId}.json`, { token: s.accessToken }), 404);
    const other = await store();
    expectApiEnvelopeError(await h.req('DELETE', `/api/v1/shipping_zones/${keep.shippingZoneId}.json`, { token: other.accessToken }), 404);
    expect((await h.req('GET', '/api/v1/shipping_zones.json', { token: s.accessToken })).json().data.shipping_zones).toEqual([keep]);
    // Shipping zone changes have no events (app-api.md Events).
    expect((await h.db.query('SELECT topic FROM events WHERE store_id = $1', [s.merchant.storeId])).rows).toEqual([]);
  });
});

describe('authentication on every shipping zone route (Rules 1-2; C5.1 envelope)', () => {
  const routes = (id: string) => [
    { method: 'POST', url: '/api/v1/shipping_zones.json', scope: 'write', body: { name: 'Z' } },
    { method: 'GET', url: '/api/v1/shipping_zones.json', scope: 'read' },
    { method: 'GET', url: `/api/v1/shipping_zones/${id}.json`, scope: 'read' },
    { method: 'PUT', url: `/api/v1/shipping_zones/${id}.json`, scope: 'write', body: { name: 'Z' } },
    { method: 'DELETE', url: `/api/v1/shipping_zones/${id}.json`, scope: 'write' },
  ];

  it('no credential or a bad one -> 401; without the scope -> 403 (write does not imply read); nothing changes', async () => {
    const s = await store();
    const z = await zone(s.accessToken, { name: 'Owned' });
    const readOnly = await store(['read_shipping']);
    const writeOnly = await store(['write_shipping']);
    for (const r of routes(z.shippingZoneId)) {
      for (const token of [undefined, 'svcat_never-issued']) {
        const res = await h.req(r.method, r.url, { token, body: r.body });
        expectApiEnvelopeError(res, 401);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
      const res = await h.req(r.method, r.url, { token: r.scope === 'write' ? readOnly.accessToken : writeOnly.accessToken, body: r.body });
      expectApiEnvelopeError(res, 403);
      expect(res.headers['x-ratelimit-limit']).toBe('500');
    }
    expect(await zoneCount(readOnly.merchant.storeId)).toBe(0);
    expect((await h.req('GET', `/api/v1/shipping_zones/${z.shippingZoneId}.json`, { token: s.accessToken })).json().data.shipping_zone.shippingName).toBe('Owned');
  });
});

describe('demo data (C1.5)', () => {
  it('the demo store lists its zones: Domestic, and one of each kind for a few countries (issue 12)', async () => {
    const s = await store();
    await h.db.transaction((tx) => insertDemoStoreData(tx, s.merchant.storeId, h.clock.now()));
    const res = await h.req('GET', '/api/v1/shipping_zones.json', { token: s.accessToken });
    const zones = res.json().data.shipping_zones;
    expect(zones).toHaveLength(5);
    expect(zones).toEqual(expect.arrayContaining([
      expect.objectContaining({ shippingName: 'Domestic', zone: ['US'], price: '5.00', type: 'Simple', digitalProd: true, description: 'Flat rate within the United States' }),
      expect.objectContaining({ shippingName: 'Domestic heavy', type: 'Weight', minWeight: 2, maxWeight: null }),
      expect.objectContaining({ shippingName: 'Free shipping over 100', zone: ['US', 'CA'], type: 'Price', price: '0.00' }),
      expect.objectContaining({ shippingName: 'Canada', zone: ['CA'] }),
      expect.objectContaining({ shippingName: 'Europe and UK', zone: ['GB', 'FR', 'DE', 'IE', 'NL'] }),
    ]));
  });
});
