// The store's address (C15.4): `GET` and `PUT /stores/address` on the merchant admin (merchant JWT,
// or the operator naming the store), envelopes with `data.address`, `country` ISO 3166-1 alpha-2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { operatorToken, signupMerchant, signupPartner, staffToken } from './helpers/actors.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const EMPTY = { address1: null, address2: null, city: null, province: null, country: null, zip: null, phone: null };
const FULL = { address1: '1 Main St', address2: 'Unit 2', city: 'Ottawa', province: 'ON', country: 'CA', zip: 'K1A 0B1', phone: '+1 613 555 0100' };
const ok = (address: unknown) => ({ status: 200, state: 'success', message: null, data: { address }, count: null, pagination: null });
const error = (status: number, message: string) => ({ status, state: 'error', message, data: null, count: null, pagination: null });

describe('C15.4 store address', () => {
  it('a store without an address answers every field null; PUT saves it, GET reads it back', async () => {
    const m = await signupMerchant(h);
    const before = await h.req('GET', '/stores/address', { token: m.token });
    expect(before.statusCode).toBe(200);
    expect(before.json()).toEqual(ok(EMPTY));

    const put = await h.req('PUT', '/stores/address', { token: m.token, body: FULL });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual(ok(FULL));
    expect((await h.req('GET', '/stores/address', { token: m.token })).json()).toEqual(ok(FULL));

    // Another store's address is its own.
    const other = await signupMerchant(h);
    expect((await h.req('GET', '/stores/address', { token: other.token })).json()).toEqual(ok(EMPTY));
  });

  it('PUT replaces the whole address: left out, null or blank is null; text is trimmed; the country is upper-cased', async () => {
    const m = await signupMerchant(h);
    await h.req('PUT', '/stores/address', { token: m.token, body: FULL });
    const res = await h.req('PUT', '/stores/address', { token: m.token, body: { city: '  Lyon ', country: 'fr', zip: '', phone: null, unknownKey: 1 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(ok({ ...EMPTY, city: 'Lyon', country: 'FR' }));
    expect((await h.req('PUT', '/stores/address', { token: m.token, body: {} })).json()).toEqual(ok(EMPTY));
  });

  it('400 for each bad field, with nothing saved', async () => {
    const m = await signupMerchant(h);
    await h.req('PUT', '/stores/address', { token: m.token, body: FULL });
    const cases: [string, Record<string, unknown>][] = [
      ['country', { country: 'XX' }], // two letters, but not an assigned code
      ['country', { country: 'USA' }],
      ['country', { country: 'U1' }],
      ['country', { country: 12 }],
      ...(['address1', 'address2', 'city', 'province', 'zip', 'phone'] as const).flatMap((f): [string, Record<string, unknown>][] => [
        [f, { [f]: 5 }],
        [f, { [f]: { nested: true } }],
        [f, { [f]: 'x'.repeat(256) }],
      ]),
    ];
    for (const [field, body] of cases) {
      const res = await h.req('PUT', '/stores/address', { token: m.token, body: { ...FULL, ...body } });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toEqual(error(400, expect.stringMatching(new RegExp(`^${field} `))));
    }
    for (const payload of ['[]', '"text"', '{"city":']) {
      const res = await h.req('PUT', '/stores/address', { token: m.token, payload, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode, payload).toBe(400);
      expect(res.json()).toEqual(error(400, expect.any(String)));
    }
    expect((await h.req('GET', '/stores/address', { token: m.token })).json()).toEqual(ok(FULL));
  });

  it('401 without a credential, 403 for a partner; store staff may; the operator names the store', async () => {
    const m = await signupMerchant(h);
    const none = await h.req('GET', '/stores/address');
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual(error(401, expect.any(String)));
    const partner = await signupPartner(h);
    const refused = await h.req('PUT', '/stores/address', { token: partner.token, body: FULL });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual(error(403, expect.any(String)));

    for (const role of ['STAFF_ADMIN', 'MANAGER'] as const) {
      const token = await staffToken(h, m, role);
      const res = await h.req('PUT', '/stores/address', { token, body: { ...FULL, city: role } });
      expect(res.statusCode, role).toBe(200);
      expect(res.json()).toEqual(ok({ ...FULL, city: role }));
    }

    const ops = await operatorToken(h);
    expect((await h.req('GET', '/stores/address', { token: ops })).statusCode).toBe(400);
    expect((await h.req('GET', '/stores/address?storeId=not-a-store', { token: ops })).statusCode).toBe(400);
    const put = await h.req('PUT', '/stores/address', { token: ops, body: { ...FULL, storeId: m.storeId } });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual(ok(FULL));
    expect((await h.req('GET', `/stores/address?storeId=${m.storeId}`, { token: ops })).json()).toEqual(ok(FULL));
    expect((await h.req('GET', '/stores/address', { token: m.token })).json()).toEqual(ok(FULL));
  });
});
