// Review of app installation and API access (C4, C5.5, app-api.md Scopes and Limits): bugs an app
// developer or a merchant would notice, each test naming the clause it holds the service to.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { createTestApp, installApp, signupMerchant, signupPartner, storeWithApp, unique, type TestApp } from './helpers/actors.js';
import { MAX_ECHOED_CHARS, MAX_ECHOED_VALUES } from '../src/oauth/scopes.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const products = (token: string) => h.req('GET', '/api/v1/products.json', { token });
const refresh = (app: Pick<TestApp, 'clientId' | 'clientSecret'>, refreshToken: string) =>
  h.req('POST', '/apps/oauth/token', { body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'refresh_token', refresh_token: refreshToken } });
const authorizeRes = (token: string, query: Record<string, string>) => h.req('GET', `/apps/oauth/authorize?${new URLSearchParams(query)}`, { token });

/** `count` distinct refused scopes, each `length` characters long. */
const bogus = (count: number, length: number) => Array.from({ length: count }, (_, i) => `bogus_${i}_`.padEnd(length, 'x'));
/** What a 400 names of them: the first five, each cut to 64 characters, and how many more. */
const named = (values: string[]) => {
  const shown = values.slice(0, MAX_ECHOED_VALUES).map((v) => (v.length > MAX_ECHOED_CHARS ? `${v.slice(0, MAX_ECHOED_CHARS)}...` : v));
  const rest = values.length - shown.length;
  return rest > 0 ? `${shown.join(', ')} and ${rest} more` : shown.join(', ');
};

describe('C4.1, C3.1 a 400 that names refused scopes does not echo the input without bound', () => {
  // Before: every refused value came back whole: 2,000 bogus scopes made a 125 KB authorize
  // message, 10,000 on app create an 860 KB one (the body limit is 1 MB).
  const many = bogus(2000, 60);
  const long = bogus(7, 100_000);

  it('authorize (C4.1): the first five refused scopes, each cut to 64 characters, and a count of the rest', async () => {
    const { merchant, app } = await storeWithApp(h);
    const prefix = "scope must be a subset of the app's scopes; not allowed: ";
    for (const values of [many, long]) {
      const body = expectEnvelopeError(await authorizeRes(merchant.token, { client_id: app.clientId, scope: ['read_products', ...values].join(',') }), 400);
      expect(body.message).toBe(prefix + named(values));
      expect(body.message.length).toBeLessThan(500);
    }
    // Repeats are named once and counted once.
    const repeated = expectEnvelopeError(await authorizeRes(merchant.token, { client_id: app.clientId, scope: 'read_customers,read_customers,write_orders' }), 400);
    expect(repeated.message).toBe(`${prefix}read_customers, write_orders`);
    // A short list reads as before.
    expectEnvelopeError(await authorizeRes(merchant.token, { client_id: app.clientId, scope: 'read_products,read_customers' }), 400, /not allowed: read_customers$/);
  });

  it('authorize (C4.1): a scope list that names no scope (`scope=,`) is a 400, not an installation granted nothing', async () => {
    const { merchant, app } = await storeWithApp(h);
    for (const scope of [',', ' , ,', ',,,']) {
      expectEnvelopeError(await authorizeRes(merchant.token, { client_id: app.clientId, scope }), 400, /^scope names no scope/);
    }
    // Blank is all of the app's scopes, as absent is.
    const all = await authorizeRes(merchant.token, { client_id: app.clientId, scope: ' ' });
    expect(all.statusCode, all.body).toBe(200);
  });

  it('app create and PATCH (C3.1, C3.2): unknown scope: the first five, each cut to 64 characters, and a count of the rest', async () => {
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const manyMore = bogus(10_000, 80);
    for (const values of [manyMore, long]) {
      const scopes = ['read_products', ...values];
      const created = expectEnvelopeError(await h.req('POST', '/apps/developer/apps', { token: partner.token, body: { name: `App ${unique()}`, appUrl: 'https://app.example.com', scopes } }), 400);
      expect(created.message).toBe(`unknown scope: ${named(values)}`);
      const patched = expectEnvelopeError(await h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: partner.token, body: { scopes } }), 400);
      expect(patched.message).toBe(`unknown scope: ${named(values)}`);
    }
    // A cut never splits a character made of two UTF-16 units.
    const emoji = '\u{1F600}'.repeat(70);
    const cut = expectEnvelopeError(await h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: partner.token, body: { scopes: [emoji] } }), 400);
    expect(cut.message).toBe(`unknown scope: ${'\u{1F600}'.repeat(MAX_ECHOED_CHARS)}...`);
    expect((await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: partner.token })).json().data.app.scopes).toEqual(['read_products', 'write_products', 'read_orders']);
  });
});

describe('C4.5, C4.7 a refresh token revoked already revokes nothing more', () => {
  // Before: a refresh token rotated before an uninstall, presented after the reinstall, was taken
  // for a reuse (C4.5) and revoked every token of the installation: the tokens the reinstall had
  // just given the app died too (401), and the merchant had to install the app a third time.
  it('rotated before an uninstall, presented after the reinstall -> 400; the reinstalled app keeps working', async () => {
    const s = await storeWithApp(h);
    const rotated = await refresh(s.app, s.refreshToken);
    expect(rotated.statusCode).toBe(200);
    expect((await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.merchant.token })).statusCode).toBe(200);
    const again = await installApp(h, s.merchant, s.app);

    expectEnvelopeError(await refresh(s.app, s.refreshToken), 400, 'revoked'); // rotated, then revoked by the uninstall
    expectEnvelopeError(await refresh(s.app, rotated.json().data.refresh_token), 400, 'revoked'); // never rotated, revoked by the uninstall
    expect((await products(again.accessToken)).statusCode).toBe(200);
    expect((await refresh(s.app, again.refreshToken)).statusCode).toBe(200);
  });

  it('after a reuse detection and a re-authorisation, the stolen token presented again -> 400; the new grant lives', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const first = await installApp(h, merchant, app);
    const second = (await refresh(app, first.refreshToken)).json().data;
    // The reuse (C4.5): everything of the installation dies.
    expectEnvelopeError(await refresh(app, first.refreshToken), 400, 'already used');
    expect((await products(second.access_token)).statusCode).toBe(401);
    // The merchant re-authorises; the old token comes back once more.
    const recovered = await installApp(h, merchant, app);
    expectEnvelopeError(await refresh(app, first.refreshToken), 400, 'revoked');
    expectEnvelopeError(await refresh(app, second.refresh_token), 400, 'revoked');
    expect((await products(recovered.accessToken)).statusCode).toBe(200);
    expect((await refresh(app, recovered.refreshToken)).statusCode).toBe(200);
  });

  it('a rotated token of a live grant is still a reuse (C4.5): every token of the installation dies, the later grant too', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const first = await installApp(h, merchant, app);
    const second = (await refresh(app, first.refreshToken)).json().data;
    const later = await installApp(h, merchant, app); // a second grant, alive beside the first (docs/decisions.md "OAuth")
    expectEnvelopeError(await refresh(app, first.refreshToken), 400, 'already used');
    for (const token of [second.access_token, later.accessToken]) expect((await products(token)).statusCode).toBe(401);
  });
});
