// Installing an app (contract C4, C14.9): authorize, the signed handoff, code exchange, refresh
// rotation within the grant, storage as hashes, uninstall and reinstall, session tokens.
// The test clock only moves forward and is shared by the whole file: every test makes its own
// stores, apps and tokens, and nothing relies on wall-clock timing.
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { createTestApp, installApp, signupMerchant, signupPartner, storeWithApp, type Merchant, type TestApp } from './helpers/actors.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const uniq = () => randomBytes(5).toString('hex');
const THIRTY_DAYS = 30 * 24 * 3600;
const APP_SCOPES = ['read_products', 'write_products', 'read_orders'];

async function authorizeRes(token: string | undefined, query: Record<string, string>, headers: Record<string, string> = {}) {
  return h.req('GET', `/apps/oauth/authorize?${new URLSearchParams(query)}`, { token, headers });
}

interface Handoff {
  redirectUrl: string;
  installationId: string;
  url: URL;
  code: string;
  state: string;
  params: Record<string, string>;
}

async function authorize(merchant: Merchant, app: TestApp, scope?: string): Promise<Handoff> {
  const res = await authorizeRes(merchant.token, { client_id: app.clientId, ...(scope !== undefined ? { scope } : {}) });
  expect(res.statusCode).toBe(200);
  const { redirectUrl, installationId } = res.json().data;
  const url = new URL(redirectUrl);
  return { redirectUrl, installationId, url, code: url.searchParams.get('code')!, state: url.searchParams.get('state')!, params: Object.fromEntries(url.searchParams) };
}

function exchange(app: Pick<TestApp, 'clientId' | 'clientSecret'>, code: string | undefined, state: string | undefined, extra: Record<string, unknown> = {}) {
  return h.req('POST', '/apps/oauth/token', {
    body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'authorization_code', code, state, ...extra },
  });
}

function refresh(app: Pick<TestApp, 'clientId' | 'clientSecret'>, refreshToken: string | undefined) {
  return h.req('POST', '/apps/oauth/token', {
    body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'refresh_token', refresh_token: refreshToken },
  });
}

const products = (token: string) => h.req('GET', '/api/v1/products.json', { token });

async function expectTokenDead(token: string) {
  const res = await products(token);
  expect(res.statusCode).toBe(401);
  expect(res.json()).toEqual({ errors: { base: [expect.any(String)] } });
}

async function fresh() {
  const merchant = await signupMerchant(h);
  const partner = await signupPartner(h);
  const app = await createTestApp(h, partner.token);
  return { merchant, partner, app };
}

describe('C4.1 authorize', () => {
  it('C4.1 401 without Authorization, also for a browser top-level navigation; never a redirect', async () => {
    const { app } = await fresh();
    const plain = await authorizeRes(undefined, { client_id: app.clientId });
    expectEnvelopeError(plain, 401);

    const navigation = await authorizeRes(undefined, { client_id: app.clientId, scope: 'read_products' }, {
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'document',
      'upgrade-insecure-requests': '1',
      cookie: 'session=whatever',
    });
    expectEnvelopeError(navigation, 401);
    expect(navigation.headers.location).toBeUndefined();
    expect(navigation.headers['content-type']).toMatch(/^application\/json/);
    // Nothing was created for the refused requests.
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM installations i JOIN apps a ON a.id = i.app_id WHERE a.client_id = $1', [app.clientId]);
    expect(rows[0].n).toBe(0);
  });

  it('C4.1 401 for an invalid JWT; 403 for a partner (no store)', async () => {
    const { app, partner } = await fresh();
    expectEnvelopeError(await authorizeRes('not.a.jwt', { client_id: app.clientId }), 401);
    expectEnvelopeError(await authorizeRes(partner.token, { client_id: app.clientId }), 403);
  });

  it('C4.1 200 envelope data {redirectUrl, installationId}; redirectUrl is {appUrl}/auth?code&hmac&shop&state&timestamp', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { appUrl: 'https://install.example.com/myapp' });
    const res = await authorizeRes(merchant.token, { client_id: app.clientId });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      status: 200, state: 'success', message: null,
      data: { redirectUrl: expect.any(String), installationId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      count: null, pagination: null,
    });
    const url = new URL(body.data.redirectUrl);
    expect(`${url.origin}${url.pathname}`).toBe('https://install.example.com/myapp/auth');
    expect([...url.searchParams.keys()]).toEqual(['code', 'hmac', 'shop', 'state', 'timestamp']);
    expect(url.searchParams.get('shop')).toBe(merchant.slug);
    const ts = Number(url.searchParams.get('timestamp'));
    expect(Number.isInteger(ts)).toBe(true);
    expect(Math.abs(ts - Math.floor(h.clock.nowMs() / 1000))).toBeLessThan(60);
    expect(url.searchParams.get('code')!.length).toBeGreaterThanOrEqual(32);

    // The installation is pending until the code is exchanged.
    const list = (await h.req('GET', '/apps/installations', { token: merchant.token })).json().data.installations;
    expect(list).toEqual([expect.objectContaining({ installationId: body.data.installationId, status: 'pending', storeId: merchant.storeId, appId: app.appId })]);
  });

  it('C4.1 scope defaults to the app\'s scopes', async () => {
    const { merchant, app } = await fresh();
    const handoff = await authorize(merchant, app);
    const res = await exchange(app, handoff.code, handoff.state);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.scope.split(',').sort()).toEqual([...APP_SCOPES].sort());
  });

  it('C4.1 a subset of the app\'s scopes is accepted and the token carries only that subset', async () => {
    const { merchant, app } = await fresh();
    const handoff = await authorize(merchant, app, 'read_orders');
    const res = await exchange(app, handoff.code, handoff.state);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.scope).toBe('read_orders');
    // read_products was not granted: 403 on the products list.
    const denied = await products(res.json().data.access_token);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toEqual({ errors: { base: [expect.any(String)] } });

    const other = await fresh();
    const h2 = await authorize(other.merchant, other.app, ' read_products , write_products ');
    const res2 = await exchange(other.app, h2.code, h2.state);
    expect(res2.json().data.scope.split(',').sort()).toEqual(['read_products', 'write_products']);
    expect((await products(res2.json().data.access_token)).statusCode).toBe(200);
  });

  it('C4.1 400 for a scope outside the app\'s scopes, an unknown scope, an unknown or missing client_id', async () => {
    const { merchant, app } = await fresh();
    expectEnvelopeError(await authorizeRes(merchant.token, { client_id: app.clientId, scope: 'read_products,read_customers' }), 400);
    expectEnvelopeError(await authorizeRes(merchant.token, { client_id: app.clientId, scope: 'write_everything' }), 400);
    expectEnvelopeError(await authorizeRes(merchant.token, { client_id: `svcapp_${uniq()}` }), 400);
    expectEnvelopeError(await authorizeRes(merchant.token, {}), 400);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM installations WHERE store_id = $1', [merchant.storeId]);
    expect(rows[0].n).toBe(0);
  });
});

describe('C4.2 handoff signature', () => {
  it('C4.2 hmac = hex HMAC-SHA256(client secret, sorted name=value of the other params joined by &); shop = store slug', async () => {
    const storeName = `Signed Store ${uniq()}`;
    const merchant = await signupMerchant(h, { storeName });
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const handoff = await authorize(merchant, app);
    expect(handoff.params.shop).toBe(merchant.slug);
    expect(merchant.slug).toBe(storeName.toLowerCase().replace(/ /g, '-'));

    const message = Object.keys(handoff.params)
      .filter((k) => k !== 'hmac')
      .sort()
      .map((k) => `${k}=${handoff.params[k]}`)
      .join('&');
    expect(message).toBe(`code=${handoff.code}&shop=${merchant.slug}&state=${handoff.state}&timestamp=${handoff.params.timestamp}`);
    const expected = createHmac('sha256', app.clientSecret).update(message).digest('hex');
    expect(handoff.params.hmac).toMatch(/^[0-9a-f]{64}$/);
    expect(handoff.params.hmac).toBe(expected);

    // Any change to a parameter breaks it; another key does not produce it.
    const tampered = message.replace(`shop=${merchant.slug}`, 'shop=evil-store');
    expect(createHmac('sha256', app.clientSecret).update(tampered).digest('hex')).not.toBe(handoff.params.hmac);
    expect(createHmac('sha256', 'another-secret').update(message).digest('hex')).not.toBe(handoff.params.hmac);
  });

  it('C4.2 after rotate-secret the handoff is signed with the new secret', async () => {
    const { merchant, partner, app } = await fresh();
    const rot = await h.req('POST', `/apps/developer/apps/${app.appId}/rotate-secret`, { token: partner.token });
    const secret = rot.json().data.clientSecret;
    const handoff = await authorize(merchant, app);
    const message = ['code', 'shop', 'state', 'timestamp'].map((k) => `${k}=${handoff.params[k]}`).join('&');
    expect(handoff.params.hmac).toBe(createHmac('sha256', secret).update(message).digest('hex'));
  });
});

describe('C4.3 state and code', () => {
  it('C4.3 state has at least 128 random bits, URL-safe, and differs per authorization', async () => {
    const { merchant, app } = await fresh();
    const seen = new Set<string>();
    const codes = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const handoff = await authorize(merchant, app);
      expect(handoff.state).toMatch(/^[A-Za-z0-9_-]+$/);
      // base64url: 6 bits per character -> at least 22 characters for 128 bits.
      expect(handoff.state.length).toBeGreaterThanOrEqual(22);
      expect(encodeURIComponent(handoff.state)).toBe(handoff.state);
      seen.add(handoff.state);
      codes.add(handoff.code);
    }
    expect(seen.size).toBe(4);
    expect(codes.size).toBe(4);
  });

  it('C4.3 the code is single-use', async () => {
    const { merchant, app } = await fresh();
    const handoff = await authorize(merchant, app);
    expect((await exchange(app, handoff.code, handoff.state)).statusCode).toBe(200);
    expectEnvelopeError(await exchange(app, handoff.code, handoff.state), 400);
  });

  it('C4.3 the code still works at 599 s', async () => {
    const { merchant, app } = await fresh();
    const handoff = await authorize(merchant, app);
    // Count the 599 s from the code's own issue instant, so a slow machine does not eat the margin.
    const { rows } = await h.db.query<{ created_at: Date }>('SELECT created_at FROM oauth_codes WHERE code_hash = $1', [createHash('sha256').update(handoff.code).digest('hex')]);
    const elapsed = (h.clock.nowMs() - rows[0].created_at.getTime()) / 1000;
    await h.advance(599 - elapsed);
    expect((await exchange(app, handoff.code, handoff.state)).statusCode).toBe(200);
  });

  it('C4.3 the code is refused (400) at 601 s and stays unusable', async () => {
    const { merchant, app } = await fresh();
    const handoff = await authorize(merchant, app);
    await h.advance(601);
    expectEnvelopeError(await exchange(app, handoff.code, handoff.state), 400);
    // A new authorization works.
    const again = await authorize(merchant, app);
    expect((await exchange(app, again.code, again.state)).statusCode).toBe(200);
  });
});

describe('C4.4 code exchange', () => {
  it('C4.4 200 envelope data exactly {access_token, refresh_token, expires_in: 86400, refresh_token_expires_in, scope, token_type: Bearer}', async () => {
    const { merchant, app } = await fresh();
    const handoff = await authorize(merchant, app);
    const res = await exchange(app, handoff.code, handoff.state);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      status: 200,
      state: 'success',
      message: null,
      data: {
        access_token: expect.any(String),
        refresh_token: expect.any(String),
        expires_in: 86400,
        refresh_token_expires_in: THIRTY_DAYS,
        scope: APP_SCOPES.join(','),
        token_type: 'Bearer',
      },
      count: null,
      pagination: null,
    });
    expect(body.data.access_token).not.toBe(body.data.refresh_token);
    expect(body.data.access_token.length).toBeGreaterThanOrEqual(32);
    const api = await products(body.data.access_token);
    expect(api.statusCode).toBe(200);
    expect(api.json()).toEqual({ products: [] });

    const list = (await h.req('GET', '/apps/installations', { token: merchant.token })).json().data.installations;
    expect(list[0]).toMatchObject({ installationId: handoff.installationId, status: 'active' });
  });

  it('C4.4 a form-encoded token request is accepted as well', async () => {
    const { merchant, app } = await fresh();
    const handoff = await authorize(merchant, app);
    const payload = new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'authorization_code', code: handoff.code, state: handoff.state }).toString();
    const res = await h.req('POST', '/apps/oauth/token', { payload, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.token_type).toBe('Bearer');
  });

  it('C4.4 401 for a wrong client secret, an unknown client, a missing client; the code survives those', async () => {
    const { merchant, app } = await fresh();
    const other = await createTestApp(h, (await signupPartner(h)).token);
    const handoff = await authorize(merchant, app);
    expectEnvelopeError(await exchange({ clientId: app.clientId, clientSecret: `${app.clientSecret}x` }, handoff.code, handoff.state), 401);
    expectEnvelopeError(await exchange({ clientId: app.clientId, clientSecret: other.clientSecret }, handoff.code, handoff.state), 401);
    expectEnvelopeError(await exchange({ clientId: app.clientId, clientSecret: '' }, handoff.code, handoff.state), 401);
    expectEnvelopeError(await exchange({ clientId: `svcapp_${uniq()}`, clientSecret: app.clientSecret }, handoff.code, handoff.state), 401);
    expectEnvelopeError(await h.req('POST', '/apps/oauth/token', { body: { client_secret: app.clientSecret, grant_type: 'authorization_code', code: handoff.code, state: handoff.state } }), 401);
    expect((await exchange(app, handoff.code, handoff.state)).statusCode).toBe(200);
  });

  it('C4.4 400 for missing code, missing state, missing or unsupported grant_type, unknown code, state mismatch, another app\'s code', async () => {
    const { merchant, app } = await fresh();
    const handoff = await authorize(merchant, app);
    expectEnvelopeError(await exchange(app, undefined, handoff.state), 400);
    expectEnvelopeError(await exchange(app, handoff.code, undefined), 400);
    expectEnvelopeError(await exchange(app, handoff.code, handoff.state, { grant_type: undefined }), 400);
    expectEnvelopeError(await exchange(app, handoff.code, handoff.state, { grant_type: 'password' }), 400);
    expectEnvelopeError(await exchange(app, handoff.code, handoff.state, { grant_type: 'client_credentials' }), 400);
    expectEnvelopeError(await exchange(app, `svccode_${randomBytes(32).toString('base64url')}`, handoff.state), 400);
    expectEnvelopeError(await exchange(app, handoff.code, randomBytes(24).toString('base64url')), 400);
    expectEnvelopeError(await exchange(app, handoff.code, `${handoff.state}x`), 400);
    // Another app, with its own valid credentials, cannot use this app's code.
    const thief = await createTestApp(h, (await signupPartner(h)).token);
    expectEnvelopeError(await exchange(thief, handoff.code, handoff.state), 400);
    // Malformed JSON.
    expectEnvelopeError(await h.req('POST', '/apps/oauth/token', { payload: '{"client_id":', headers: { 'content-type': 'application/json' } }), 400);
  });

  it('C4.4 a code presented a second time -> 400 and the tokens issued from it are revoked', async () => {
    const { merchant, app } = await fresh();
    const handoff = await authorize(merchant, app);
    const first = await exchange(app, handoff.code, handoff.state);
    const { access_token: accessToken, refresh_token: refreshToken } = first.json().data;
    expect((await products(accessToken)).statusCode).toBe(200); // now cached in the token cache

    expectEnvelopeError(await exchange(app, handoff.code, handoff.state), 400);
    await expectTokenDead(accessToken);
    expectEnvelopeError(await refresh(app, refreshToken), 400);
  });

  it('C4.4 the access token lives 24 hours', async () => {
    const { merchant, app } = await fresh();
    const { accessToken } = await installApp(h, merchant, app);
    await h.advance(86_300);
    expect((await products(accessToken)).statusCode).toBe(200);
    await h.advance(101); // 86401 s after issue
    await expectTokenDead(accessToken);
  });

  it('C4.4 concurrency: two simultaneous exchanges of one code -> exactly one 200', async () => {
    const { merchant, app } = await fresh();
    const handoff = await authorize(merchant, app);
    const results = await Promise.all([exchange(app, handoff.code, handoff.state), exchange(app, handoff.code, handoff.state)]);
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([200, 400]);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM oauth_grants WHERE installation_id = $1', [handoff.installationId]);
    expect(rows[0].n).toBe(1);
  });
});

describe('C4.5 refresh', () => {
  it('C4.5 refresh returns a new pair; the new access token works; refresh_token_expires_in counts down', async () => {
    const { merchant, app } = await fresh();
    const first = await installApp(h, merchant, app);
    expect(first.tokenResponse.refresh_token_expires_in).toBe(THIRTY_DAYS);
    await h.advance(3600);
    const res = await refresh(app, first.refreshToken);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      status: 200, state: 'success', message: null,
      data: {
        access_token: expect.any(String), refresh_token: expect.any(String), expires_in: 86400,
        refresh_token_expires_in: expect.any(Number), scope: APP_SCOPES.join(','), token_type: 'Bearer',
      },
      count: null, pagination: null,
    });
    expect(body.data.access_token).not.toBe(first.accessToken);
    expect(body.data.refresh_token).not.toBe(first.refreshToken);
    expect(body.data.refresh_token_expires_in).toBeLessThanOrEqual(THIRTY_DAYS - 3600);
    expect(body.data.refresh_token_expires_in).toBeGreaterThan(THIRTY_DAYS - 3600 - 60);
    expect((await products(body.data.access_token)).statusCode).toBe(200);

    await h.advance(7200);
    const second = await refresh(app, body.data.refresh_token);
    expect(second.statusCode).toBe(200);
    expect(second.json().data.refresh_token_expires_in).toBeLessThanOrEqual(body.data.refresh_token_expires_in - 7200);
  });

  it('C4.5 rotation does not extend the grant: at 30 days even a freshly rotated refresh token -> 400', async () => {
    const { merchant, app } = await fresh();
    const first = await installApp(h, merchant, app);
    await h.advance(29 * 86400);
    const rotated = await refresh(app, first.refreshToken);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().data.refresh_token_expires_in).toBeLessThanOrEqual(86400);
    expect(rotated.json().data.refresh_token_expires_in).toBeGreaterThan(86400 - 60);
    await h.advance(86400 + 1);
    expectEnvelopeError(await refresh(app, rotated.json().data.refresh_token), 400);
    // Re-authorising starts a new 30-day grant (the merchant's 12-hour JWT has expired meanwhile).
    const login = await h.req('POST', '/auth/login', { body: { email: merchant.email, password: 'correct-horse' } });
    const again = await installApp(h, { ...merchant, token: login.json().data.token }, app);
    expect(again.tokenResponse.refresh_token_expires_in).toBe(THIRTY_DAYS);
    expect((await refresh(app, again.refreshToken)).statusCode).toBe(200);
  });

  it('C4.5 reuse of a rotated refresh token -> 400 and every token of the installation dies', async () => {
    const { merchant, app } = await fresh();
    const first = await installApp(h, merchant, app);
    const rotated = (await refresh(app, first.refreshToken)).json().data;
    expect((await products(rotated.access_token)).statusCode).toBe(200);

    expectEnvelopeError(await refresh(app, first.refreshToken), 400);
    await expectTokenDead(rotated.access_token);
    await expectTokenDead(first.accessToken);
    expectEnvelopeError(await refresh(app, rotated.refresh_token), 400);
    // The merchant re-authorises to recover.
    const recovered = await installApp(h, merchant, app);
    expect((await products(recovered.accessToken)).statusCode).toBe(200);
  });

  it('C4.5 400 for a missing, unknown or another app\'s refresh token; 401 for bad client credentials', async () => {
    const a = await storeWithApp(h);
    const b = await storeWithApp(h);
    expectEnvelopeError(await refresh(a.app, undefined), 400);
    expectEnvelopeError(await refresh(a.app, `svcrt_${randomBytes(32).toString('base64url')}`), 400);
    expectEnvelopeError(await refresh(a.app, b.refreshToken), 400);
    expectEnvelopeError(await refresh({ clientId: a.app.clientId, clientSecret: b.app.clientSecret }, a.refreshToken), 401);
    // None of that spent a's refresh token.
    expect((await refresh(a.app, a.refreshToken)).statusCode).toBe(200);
    expect((await products(b.accessToken)).statusCode).toBe(200);
  });
});

describe('C4.6 storage and tenancy', () => {
  it('C4.6 tokens and codes are stored only as hashes', async () => {
    const { merchant, app } = await fresh();
    const handoff = await authorize(merchant, app);
    const tokens = (await exchange(app, handoff.code, handoff.state)).json().data;
    const rotated = (await refresh(app, tokens.refresh_token)).json().data;
    const plain = [handoff.code, tokens.access_token, tokens.refresh_token, rotated.access_token, rotated.refresh_token];
    const sha = (v: string) => createHash('sha256').update(v).digest('hex');

    const tables = {
      oauth_codes: await h.db.query('SELECT * FROM oauth_codes WHERE installation_id = $1', [handoff.installationId]),
      access_tokens: await h.db.query('SELECT * FROM access_tokens WHERE installation_id = $1', [handoff.installationId]),
      refresh_tokens: await h.db.query('SELECT * FROM refresh_tokens WHERE installation_id = $1', [handoff.installationId]),
      oauth_grants: await h.db.query('SELECT g.* FROM oauth_grants g WHERE installation_id = $1', [handoff.installationId]),
      installations: await h.db.query('SELECT * FROM installations WHERE id = $1', [handoff.installationId]),
    };
    expect(tables.oauth_codes.rows).toHaveLength(1);
    expect(tables.access_tokens.rows).toHaveLength(2);
    expect(tables.refresh_tokens.rows).toHaveLength(2);
    for (const [name, result] of Object.entries(tables)) {
      const dump = JSON.stringify(result.rows);
      for (const value of plain) {
        expect(dump, `${name} holds a plain token`).not.toContain(value);
        // Nor the random part without its readable prefix.
        expect(dump, `${name} holds a plain token`).not.toContain(value.slice(value.indexOf('_') + 1));
      }
    }
    expect(tables.oauth_codes.rows[0].code_hash).toBe(sha(handoff.code));
    expect(tables.access_tokens.rows.map((r: any) => r.token_hash).sort()).toEqual([sha(tokens.access_token), sha(rotated.access_token)].sort());
    expect(tables.refresh_tokens.rows.map((r: any) => r.token_hash).sort()).toEqual([sha(tokens.refresh_token), sha(rotated.refresh_token)].sort());
  });

  it('C4.6 an access token opens only its own store', async () => {
    const a = await storeWithApp(h);
    const b = await storeWithApp(h, { scopes: ['read_products'] });
    const productId = randomUUID();
    const now = h.clock.now();
    await h.db.query(
      `INSERT INTO products (id, store_id, title, handle, created_at, updated_at) VALUES ($1, $2, 'Only in A', $3, $4, $4)`,
      [productId, a.merchant.storeId, `only-in-a-${uniq()}`, now],
    );
    const listA = await products(a.accessToken);
    expect(listA.json().products.map((p: any) => p.product_id)).toEqual([productId]);
    const listB = await products(b.accessToken);
    expect(listB.statusCode).toBe(200);
    expect(listB.json()).toEqual({ products: [] });
    expect((await h.req('GET', `/api/v1/products/${productId}.json`, { token: a.accessToken })).statusCode).toBe(200);
    const cross = await h.req('GET', `/api/v1/products/${productId}.json`, { token: b.accessToken });
    expect(cross.statusCode).toBe(404);
    expect(cross.json()).toEqual({ errors: { base: [expect.any(String)] } });
  });
});

describe('C4.7 uninstall and reinstall', () => {
  it('C4.7 GET /apps/installations lists data.installations with count and pagination', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app1 = await createTestApp(h, partner.token);
    const app2 = await createTestApp(h, partner.token, { pricing: { type: 'recurring', amount: '5.00', currency: 'USD', interval: 'month', trialDays: 7 } });
    const i1 = await installApp(h, merchant, app1);
    const i2 = await installApp(h, merchant, app2);
    const res = await h.req('GET', '/apps/installations', { token: merchant.token });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      status: 200, state: 'success', message: null, count: 2,
      pagination: { page: 1, limit: 50, totalPages: 1, resultCount: 2, totalResult: 2 },
    });
    expect(Object.keys(body.data)).toContain('installations');
    expect(body.data.installations.map((i: any) => i.installationId)).toEqual([i2.installationId, i1.installationId]);
    expect(body.data.installations[1]).toMatchObject({
      installationId: i1.installationId, appId: app1.appId, storeId: merchant.storeId, status: 'active', billingStatus: 'none',
      installedVersion: '1.0.0', autoUpdate: true, pinnedVersion: null, scopes: APP_SCOPES,
    });
    expect(body.data.installations[0]).toMatchObject({ installationId: i2.installationId, billingStatus: 'trialing', trialEndsAt: expect.any(String) });
    // Another store sees none of them.
    const other = await signupMerchant(h);
    const otherList = (await h.req('GET', '/apps/installations', { token: other.token })).json();
    expect(otherList.data.installations).toEqual([]);
    expect(otherList.count).toBe(0);
  });

  it('C4.7 uninstall -> 200 envelope data = the installation (uninstalled); tokens die at once; refresh 400', async () => {
    const s = await storeWithApp(h);
    expect((await products(s.accessToken)).statusCode).toBe(200); // cached
    const res = await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.merchant.token });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ status: 200, state: 'success', message: null, count: null, pagination: null });
    expect(body.data).toMatchObject({ installationId: s.installationId, appId: s.app.appId, storeId: s.merchant.storeId, status: 'uninstalled' });
    await expectTokenDead(s.accessToken);
    expectEnvelopeError(await refresh(s.app, s.refreshToken), 400);
    const listed = (await h.req('GET', '/apps/installations', { token: s.merchant.token })).json().data.installations;
    expect(listed).toEqual([expect.objectContaining({ installationId: s.installationId, status: 'uninstalled' })]);
    // A second uninstall: nothing to uninstall.
    expectEnvelopeError(await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.merchant.token }), 404);
  });

  it('C4.7 another store\'s merchant -> 403 (C7.1), unknown id -> 404, partner -> 403, no token -> 401; the installation is untouched', async () => {
    const s = await storeWithApp(h);
    const other = await signupMerchant(h);
    expectEnvelopeError(await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: other.token }), 403);
    expectEnvelopeError(await h.req('DELETE', `/apps/installations/${randomUUID()}`, { token: s.merchant.token }), 404);
    expectEnvelopeError(await h.req('DELETE', '/apps/installations/not-a-uuid', { token: s.merchant.token }), 404);
    expectEnvelopeError(await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.partner.token }), 403);
    expectEnvelopeError(await h.req('DELETE', `/apps/installations/${s.installationId}`), 401);
    expect((await products(s.accessToken)).statusCode).toBe(200);
  });

  it('C4.7 a code handed off before the uninstall cannot bring the app back', async () => {
    const { merchant, app } = await fresh();
    const handoff = await authorize(merchant, app);
    const del = await h.req('DELETE', `/apps/installations/${handoff.installationId}`, { token: merchant.token });
    expect(del.statusCode).toBe(200);
    expectEnvelopeError(await exchange(app, handoff.code, handoff.state), 400);
    const listed = (await h.req('GET', '/apps/installations', { token: merchant.token })).json().data.installations;
    expect(listed[0].status).toBe('uninstalled');
  });

  it('C4.7 reinstall through authorize issues a new code; new tokens work, the revoked ones stay dead', async () => {
    const s = await storeWithApp(h);
    const oldHandoffCodes = (await h.db.query('SELECT code_hash FROM oauth_codes WHERE installation_id = $1', [s.installationId])).rows.map((r: any) => r.code_hash);
    await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.merchant.token });

    const handoff = await authorize(s.merchant, s.app);
    expect(oldHandoffCodes).not.toContain(createHash('sha256').update(handoff.code).digest('hex'));
    const res = await exchange(s.app, handoff.code, handoff.state);
    expect(res.statusCode).toBe(200);
    const next = res.json().data;
    expect((await products(next.access_token)).statusCode).toBe(200);
    await expectTokenDead(s.accessToken);
    expectEnvelopeError(await refresh(s.app, s.refreshToken), 400);
    // The old refresh attempt did not hurt the new grant.
    expect((await products(next.access_token)).statusCode).toBe(200);
    expect((await refresh(s.app, next.refresh_token)).statusCode).toBe(200);

    const listed = (await h.req('GET', '/apps/installations', { token: s.merchant.token })).json().data.installations;
    expect(listed.filter((i: any) => i.appId === s.app.appId).map((i: any) => i.status)).toEqual(['active']);
  });
});

describe('C4.8 session tokens', () => {
  it('C4.8 200 envelope data {sessionToken}: HS256 JWT with iss, dest, aud, sub, iat, nbf, exp = iat + 60, jti, sid', async () => {
    const s = await storeWithApp(h);
    const res = await h.req('GET', `/apps/session-token?client_id=${s.app.clientId}`, { token: s.merchant.token });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({ status: 200, state: 'success', message: null, data: { sessionToken: expect.any(String) }, count: null, pagination: null });
    const token = body.data.sessionToken;

    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(s.app.clientSecret), {
      algorithms: ['HS256'],
      issuer: h.config.siteUrl,
      audience: s.app.clientId,
      currentDate: h.clock.now(),
    });
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload.iss).toBe(h.config.siteUrl);
    expect(payload.dest).toBe(s.merchant.slug);
    expect(payload.aud).toBe(s.app.clientId);
    expect(payload.sub).toBe(s.merchant.storeId);
    expect(typeof payload.iat).toBe('number');
    expect(payload.nbf).toBeLessThanOrEqual(payload.iat!);
    expect(payload.exp).toBe(payload.iat! + 60);
    expect(typeof payload.jti).toBe('string');
    expect(payload.jti!.length).toBeGreaterThan(0);
    expect(typeof payload.sid).toBe('string');
    expect((payload.sid as string).length).toBeGreaterThan(0);
    expect(Math.abs(payload.iat! - Math.floor(h.clock.nowMs() / 1000))).toBeLessThan(60);

    // Not verifiable with another key; each token has its own jti.
    await expect(jwtVerify(token, new TextEncoder().encode('wrong-secret'), { currentDate: h.clock.now() })).rejects.toThrow();
    const second = (await h.req('GET', `/apps/session-token?client_id=${s.app.clientId}`, { token: s.merchant.token })).json().data.sessionToken;
    expect(decodeJwt(second).jti).not.toBe(payload.jti);
  });

  it('C4.8 the token expires 60 s after issue', async () => {
    const s = await storeWithApp(h);
    const token = (await h.req('GET', `/apps/session-token?client_id=${s.app.clientId}`, { token: s.merchant.token })).json().data.sessionToken;
    await h.advance(61);
    await expect(jwtVerify(token, new TextEncoder().encode(s.app.clientSecret), { issuer: h.config.siteUrl, audience: s.app.clientId, currentDate: h.clock.now() }))
      .rejects.toThrow(/exp/);
  });

  it('C14.9 404 envelope when the app is not installed on the store (never installed, pending, uninstalled, unknown client)', async () => {
    const s = await storeWithApp(h);
    const stranger = await signupMerchant(h);
    expectEnvelopeError(await h.req('GET', `/apps/session-token?client_id=${s.app.clientId}`, { token: stranger.token }), 404);
    expectEnvelopeError(await h.req('GET', `/apps/session-token?client_id=svcapp_${uniq()}`, { token: s.merchant.token }), 404);

    const pendingApp = await createTestApp(h, s.partner.token);
    await authorize(s.merchant, pendingApp);
    expectEnvelopeError(await h.req('GET', `/apps/session-token?client_id=${pendingApp.clientId}`, { token: s.merchant.token }), 404);

    await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.merchant.token });
    expectEnvelopeError(await h.req('GET', `/apps/session-token?client_id=${s.app.clientId}`, { token: s.merchant.token }), 404);
  });

  it('C4.8 400 without client_id; 401 without a merchant JWT', async () => {
    const s = await storeWithApp(h);
    expectEnvelopeError(await h.req('GET', '/apps/session-token', { token: s.merchant.token }), 400);
    expectEnvelopeError(await h.req('GET', `/apps/session-token?client_id=${s.app.clientId}`), 401);
  });
});
