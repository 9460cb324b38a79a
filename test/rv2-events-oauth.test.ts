// Review of authentication and token state (app-api.md Authentication, Token state; C4): each test
// names the clause it holds the service to, and fails on the service as it was before its fix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { expectEnvelopeError, expectErrorsBody } from './helpers/expect.js';
import { storeWithApp, type Merchant, type TestApp } from './helpers/actors.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

/** C4.1: the merchant authorises; the handoff's code and state, not yet exchanged. */
async function authorize(merchant: Merchant, app: TestApp, scope?: string) {
  const q = new URLSearchParams({ client_id: app.clientId, ...(scope ? { scope } : {}) });
  const res = await h.req('GET', `/apps/oauth/authorize?${q}`, { token: merchant.token });
  expect(res.statusCode, res.body).toBe(200);
  const handoff = new URL(res.json().data.redirectUrl).searchParams;
  return { code: handoff.get('code')!, state: handoff.get('state')! };
}

const exchange = (app: TestApp, handoff: { code: string; state: string }) =>
  h.req('POST', '/apps/oauth/token', {
    body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'authorization_code', code: handoff.code, state: handoff.state },
  });

describe('C4.1, C4.6 the latest authorisation decides the installation\'s scopes, whatever order the app exchanges codes in', () => {
  it('a code handed off before the merchant authorised again with fewer scopes no longer opens what was taken away', async () => {
    const s = await storeWithApp(h, { scopes: ['read_products', 'read_customers'] });
    // The merchant authorises again with every scope (code A), then changes their mind within the
    // code's 10 minutes and authorises with read_products only (code B).
    const wide = await authorize(s.merchant, s.app);
    const narrow = await authorize(s.merchant, s.app, 'read_products');
    const b = await exchange(s.app, narrow);
    expect(b.statusCode, b.body).toBe(200);
    expect(b.json().data.scope).toBe('read_products');
    // The app now exchanges the earlier code: it must not give back what the merchant took away.
    const a = await exchange(s.app, wide);
    expectEnvelopeError(a, 400, /expired/);
    const listed = (await h.req('GET', '/apps/installations', { token: s.merchant.token })).json().data.installations;
    expect(listed.find((i: any) => i.installationId === s.installationId).scopes).toEqual(['read_products']);
    expectErrorsBody(await h.req('GET', '/api/v1/customers.json', { token: s.accessToken }), 403);
    expectErrorsBody(await h.req('GET', '/api/v1/customers.json', { token: b.json().data.access_token }), 403);
  });
});

describe('C4.5, Token state: a rotated refresh token of an expired grant revokes nothing more', () => {
  const refresh = (app: TestApp, refreshToken: string) =>
    h.req('POST', '/apps/oauth/token', { body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'refresh_token', refresh_token: refreshToken } });

  it('after the 30 days and a re-authorisation, a stale rotated token is a 400 and the new grant keeps working', async () => {
    const s = await storeWithApp(h, { scopes: ['read_products'] });
    const rotated = await refresh(s.app, s.refreshToken);
    expect(rotated.statusCode, rotated.body).toBe(200);
    // The grant ends 30 days after the authorisation; the merchant must re-authorise (Token state).
    await h.advance(30 * 86400 + 1);
    expectEnvelopeError(await refresh(s.app, rotated.json().data.refresh_token), 400, /re-authorise/);
    const login = await h.req('POST', '/auth/login', { body: { email: s.merchant.email, password: 'correct-horse' } });
    const merchant = { ...s.merchant, token: login.json().data.token };
    const handoff = await authorize(merchant, s.app);
    const again = await exchange(s.app, handoff);
    expect(again.statusCode, again.body).toBe(200);
    const fresh = again.json().data;
    // The app (or whoever kept it) presents the first refresh token of the dead grant, rotated long
    // ago: that grant is over, so this is no theft of a live family (docs/decisions.md "OAuth").
    expectEnvelopeError(await refresh(s.app, s.refreshToken), 400, /re-authorise/);
    expect((await h.req('GET', '/api/v1/products.json', { token: fresh.access_token })).statusCode).toBe(200);
    expect((await refresh(s.app, fresh.refresh_token)).statusCode).toBe(200);
  });
});
