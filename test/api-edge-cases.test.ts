// Edge cases of OAuth (C4) and the App API surface (C5, store-data resources) found by probing:
// each test names the clause it holds the service to. Every test makes its own stores and apps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { expectEnvelopeError, expectErrorsBody } from './helpers/expect.js';
import { installApp, signupPartner, storeWithApp, unique } from './helpers/actors.js';

let h: Harness;
beforeAll(async () => {
  // The rate limit itself is tested elsewhere; here no request may be refused by it.
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

function refresh(app: { clientId: string; clientSecret: string }, refreshToken: string) {
  return h.req('POST', '/apps/oauth/token', {
    body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'refresh_token', refresh_token: refreshToken },
  });
}

describe('C4.6 a token opens its installation\'s scopes only', () => {
  it('C4.6 after the merchant authorises again with fewer scopes, earlier tokens and their refreshes lose the scopes taken away', async () => {
    const s = await storeWithApp(h, { scopes: ['read_products', 'write_products', 'read_customers'] });
    expect((await h.req('GET', '/api/v1/customers.json', { token: s.accessToken })).statusCode).toBe(200);

    // The merchant installs the app again, granting read_products only.
    const again = await installApp(h, s.merchant, s.app, 'read_products');
    expect(again.tokenResponse.scope).toBe('read_products');
    const listed = (await h.req('GET', '/apps/installations', { token: s.merchant.token })).json().data.installations;
    expect(listed.find((i: any) => i.installationId === s.installationId).scopes).toEqual(['read_products']);

    // The earlier grant is not revoked (docs/decisions.md), but it no longer reads customers.
    expectErrorsBody(await h.req('GET', '/api/v1/customers.json', { token: s.accessToken }), 403);
    expect((await h.req('GET', '/api/v1/products.json', { token: s.accessToken })).statusCode).toBe(200);
    const rotated = await refresh(s.app, s.refreshToken);
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().data.scope).toBe('read_products');
    expectErrorsBody(await h.req('GET', '/api/v1/customers.json', { token: rotated.json().data.access_token }), 403);
  });

  it('C4.6 authorising again with the same scopes leaves earlier tokens as they were; a wider grant does not widen earlier ones', async () => {
    const s = await storeWithApp(h, { scopes: ['read_products', 'write_products', 'read_customers'] });
    await installApp(h, s.merchant, s.app);
    expect((await h.req('GET', '/api/v1/customers.json', { token: s.accessToken })).statusCode).toBe(200);

    const narrow = await installApp(h, s.merchant, s.app, 'read_products');
    const wide = await installApp(h, s.merchant, s.app);
    expectErrorsBody(await h.req('GET', '/api/v1/customers.json', { token: narrow.accessToken }), 403);
    expect((await h.req('GET', '/api/v1/customers.json', { token: wide.accessToken })).statusCode).toBe(200);
  });
});

describe('C6.6 metafield values', () => {
  it('C6.6 a number_decimal sent as a JSON number is stored as plain decimal text, never with an exponent (docs/decisions.md)', async () => {
    const s = await storeWithApp(h, { scopes: ['read_metafields', 'write_metafields'] });
    const item = (key: string, value: unknown) => ({ ownerType: 'shop', ownerId: s.merchant.storeId, namespace: 'edge', key, type: 'number_decimal', value });
    const res = await h.req('POST', '/api/v1/metafields/bulk.json', { token: s.accessToken, body: { metafields: [item('big', 1e21), item('tiny', -2.5e-7), item('plain', 19.5)] } });
    expect(res.statusCode, res.body).toBe(200);
    const byKey = Object.fromEntries(res.json().data.metafields.map((m: any) => [m.key, m]));
    expect(byKey.big).toMatchObject({ raw_value: '1000000000000000000000', value: 1e21 });
    expect(byKey.tiny).toMatchObject({ raw_value: '-0.00000025', value: -2.5e-7 });
    expect(byKey.plain).toMatchObject({ raw_value: '19.5', value: 19.5 });
    // The same text sent as a string is accepted and reads back the same.
    const again = await h.req('POST', '/api/v1/metafields/bulk.json', { token: s.accessToken, body: { metafields: [item('big', byKey.big.raw_value)] } });
    expect(again.json().data).toMatchObject({ created: 0, updated: 1, metafields: [{ raw_value: '1000000000000000000000', value: 1e21 }] });
  });
});

describe('C3.1 app pricing (C5.2: exact amounts)', () => {
  const recurring = (amount: unknown) => ({ type: 'recurring', amount, currency: 'USD', interval: 'month' });
  const create = (token: string, pricing: unknown) =>
    h.req('POST', '/apps/developer/apps', { token, body: { name: `Priced ${unique()}`, appUrl: 'https://app.example.com', scopes: ['read_products'], pricing } });

  it('C3.1 an amount sent as a JSON number with more than two decimals is refused, not rounded', async () => {
    const dev = await signupPartner(h);
    expectEnvelopeError(await create(dev.token, recurring(9.999)), 400, 'pricing.amount');
    expectEnvelopeError(await create(dev.token, recurring('9.999')), 400, 'pricing.amount');
    const ok = await create(dev.token, recurring(9.5));
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().data.app.pricing).toMatchObject({ amount: '9.50' });
  });

  it('C3.1 a price too large to charge exactly is refused (it was accepted, then never billed)', async () => {
    const dev = await signupPartner(h);
    expectEnvelopeError(await create(dev.token, recurring('99999999999999999999.99')), 400, 'pricing.amount');
    expectEnvelopeError(await create(dev.token, recurring(1e20)), 400, 'pricing.amount');
    const app = (await create(dev.token, recurring('9.99'))).json().data.app;
    expectEnvelopeError(await h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: dev.token, body: { pricing: recurring('100000000000000.00') } }), 400, 'pricing.amount');
    const stored = (await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: dev.token })).json().data.app;
    expect(stored.pricing).toMatchObject({ amount: '9.99' });
  });
});
