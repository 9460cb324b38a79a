// Review of authentication, OAuth tokens, scopes and the request-rate limit (app-api.md
// Authentication, Token state, Limits, Errors; C2.3, C4, C5.5). Each test names the clause it checks.
//
// The rate limiter runs on a clock this file drives by hand (a fresh one-second window per test,
// time frozen within it), so "the 21st request within one second" holds however slow the machine.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, TEST_SECRET, type Harness } from './helpers/harness.js';
import { expectApiHeaders, expectEnvelopeError, expectErrorsBody, type Res } from './helpers/expect.js';
import { createTestApp, installApp, signupMerchant, storeWithApp } from './helpers/actors.js';
import { MemoryRateLimiter } from '../src/ratelimit/memory.js';
import { WINDOW_MS } from '../src/ratelimit/limiter.js';
import { recordedRoutes } from '../src/surfaces/surface.js';
import { SCOPES } from '../src/oauth/scopes.js';
import { uuidv7 } from '../src/ids.js';
import { AccessTokenCache, REVOCATION_CHANNEL } from '../src/oauth/token-cache.js';
import type { Db } from '../src/db/db.js';

let h: Harness;
let limiterNow = Date.now();
const limiter = new MemoryRateLimiter({ now: () => limiterNow });

beforeAll(async () => {
  h = await createHarness({}, { limiter });
}, 60_000);
afterAll(() => h?.close());
beforeEach(() => {
  limiterNow = Math.max(limiterNow + WINDOW_MS, Date.now());
});

function rate(res: Res) {
  return { limit: Number(res.headers['x-ratelimit-limit']), remaining: Number(res.headers['x-ratelimit-remaining']), reset: Number(res.headers['x-ratelimit-reset']) };
}

/** C5.1: the App API resources whose errors are the errors body; the others answer envelopes. */
const ERRORS_BODY = /^\/api\/v1\/(products|collections|orders|customers|product_listings|webhooks)\b/;
const shapeOf = (url: string) => (ERRORS_BODY.test(url) && !url.includes('fulfillments') ? 'errors' : 'envelope');
function expectShape(res: Res, url: string, status: number) {
  if (shapeOf(url) === 'errors') expectErrorsBody(res, status);
  else expectEnvelopeError(res, status);
}

// ---------------------------------------------------------------------------------------------
// Requests Fastify refuses before routing (a path it cannot percent-decode, a path parameter over
// its length limit) are still App API calls: app-api.md Limits ("Headers on every /api/v1/
// response"; "requests that end in a 4xx also count"), Rules 1 and 2, C5.5.

const UNROUTABLE = [
  '/api/v1/shipping_zones/%FF.json',
  `/api/v1/shipping_zones/${'x'.repeat(300)}.json`,
  '/api/v1/orders/%C0%80/fulfillments.json',
  '/api/v1/products/%FF.json',
  `/api/v1/orders/${'9'.repeat(300)}.json`,
];

describe('an /api/v1 request refused before routing passes the App API gate (Limits; Rules 1, 2; C5.5)', () => {
  it('with a valid token: 400 in the endpoint shape, with the rate-limit headers, and counted', async () => {
    const s = await storeWithApp(h, { scopes: ['read_products', 'read_orders', 'write_orders', 'read_shipping'] });
    for (const [i, url] of UNROUTABLE.entries()) {
      const res = await h.req('GET', url, { token: s.accessToken });
      expectShape(res, url, 400);
      expectApiHeaders(res);
      expect(rate(res)).toMatchObject({ limit: 20, remaining: 19 - i });
      expect(res.headers['retry-after']).toBeUndefined();
    }
    // Counted like any other request: the routed request after them sees the window they used.
    expect(rate(await h.req('GET', '/api/v1/products.json', { token: s.accessToken })).remaining).toBe(19 - UNROUTABLE.length);
  });

  it('without a token, or with an invalid one: 401 in the endpoint shape, no rate-limit headers (Rules 1)', async () => {
    for (const url of UNROUTABLE) {
      for (const headers of [{}, { authorization: 'Bearer svcat_not-a-token' }] as Record<string, string>[]) {
        const res = await h.req('GET', url, { headers });
        expectShape(res, url, 401);
        expectApiHeaders(res, { rated: false });
      }
    }
  });

  it('a token lacking the scope of the endpoint the URL names: 403, counted (Rules 2)', async () => {
    const s = await storeWithApp(h, { scopes: ['read_orders'] });
    const res = await h.req('GET', '/api/v1/shipping_zones/%FF.json', { token: s.accessToken });
    expectEnvelopeError(res, 403, /read_shipping/);
    expect(rate(res)).toMatchObject({ limit: 20, remaining: 19 });
  });

  it('past the limit: 429 with the rate-limit body and Retry-After 1, like every other App API request', async () => {
    const s = await storeWithApp(h, { scopes: ['read_products'] });
    for (let i = 0; i < 20; i++) expect((await h.req('GET', '/api/v1/products.json', { token: s.accessToken })).statusCode).toBe(200);
    const res = await h.req('GET', '/api/v1/products/%FF.json', { token: s.accessToken });
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({ error: 'Too Many Requests', message: 'Rate limit exceeded. Retry after 1 second(s).' });
    expect(res.headers['retry-after']).toBe('1');
    expect(rate(res)).toMatchObject({ limit: 20, remaining: 0 });
    expectApiHeaders(res);
  });

  it('other surfaces keep their 400 envelope before routing (no rate limit outside /api/v1)', async () => {
    const s = await storeWithApp(h);
    const res = await h.req('GET', `/apps/developer/apps/${'x'.repeat(300)}`, { token: s.partner.token });
    expectEnvelopeError(res, 400, /^A path parameter is too long$/);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    expect(res.headers['x-svc-api-version']).toBeUndefined();
  });
});

describe('the cap is the tier\'s (Limits, Request rate table)', () => {
  it('free 20, basic 40, pro 100, enterprise 500 in X-RateLimit-Limit; Remaining counts down from it; Reset is whole Unix seconds', async () => {
    const merchant = await signupMerchant(h);
    const partner = (await storeWithApp(h)).partner;
    for (const [tier, cap] of [['free', 20], ['basic', 40], ['pro', 100], ['enterprise', 500]] as const) {
      const app = await createTestApp(h, partner.token, { tier });
      const { accessToken } = await installApp(h, merchant, app);
      const first = await h.req('GET', '/api/v1/products.json', { token: accessToken });
      const second = await h.req('GET', '/api/v1/no-such-thing.json', { token: accessToken });
      expect(rate(first), tier).toEqual({ limit: cap, remaining: cap - 1, reset: Math.ceil((limiterNow + WINDOW_MS) / 1000) });
      expect(rate(second), tier).toMatchObject({ limit: cap, remaining: cap - 2 });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Scopes (app-api.md Endpoints "Scope" column, Scopes, Rules 2): a property over every App API route.

/** The scope app-api.md's Endpoints table (and C6 for the routes it adds) gives each route. */
const SPEC_SCOPES: Record<string, string> = {
  'GET /api/v1/products.json': 'read_products',
  'PUT /api/v1/products/:id.json': 'write_products',
  'POST /api/v1/pages.json': 'write_content',
  'POST /api/v1/collections.json': 'write_products',
  'POST /api/v1/shipping_zones.json': 'write_shipping',
  'POST /api/v1/orders/:orderId/fulfillments.json': 'write_orders',
  'PUT /api/v1/fulfillments/:fulfillment_id.json': 'write_orders',
  'POST /api/v1/product_listings.json': 'write_products',
  'GET /api/v1/menus.json': 'read_content',
  'GET /api/v1/orders.json': 'read_orders',
  'GET /api/v1/orders/:id.json': 'read_orders',
  'POST /api/v1/customers.json': 'write_customers',
  'GET /api/v1/discounts.json': 'read_discounts',
  'GET /api/v1/analytics/sales': 'read_analytics',
  'GET /api/v1/metafields.json': 'read_metafields',
  'POST /api/v1/webhooks.json': 'read_shop',
};

interface ApiRoute {
  method: string;
  url: string;
  scope: string | undefined;
}

function apiRoutes(): ApiRoute[] {
  return recordedRoutes(h.app)
    .filter((r) => r.config?.surface === 'app-api')
    .flatMap((r) => ([] as string[]).concat(r.method).map((method) => ({ method, url: r.url, scope: r.config?.scope })))
    .filter((r) => r.method !== 'HEAD');
}

/** A concrete URL for a route pattern: every parameter an unknown id. */
const concrete = (url: string) => url.replace(/:\w+/g, uuidv7()).replace('*', 'x');

describe('every App API route demands exactly its scope (Rules 2; Scopes)', () => {
  it('the routes the Endpoints table lists require the scope it names; only the file routes (no endpoint bound) take none', () => {
    const routes = apiRoutes();
    const key = (r: ApiRoute) => `${r.method} ${r.url}`;
    const byKey = new Map(routes.map((r) => [key(r), r.scope]));
    for (const [route, scope] of Object.entries(SPEC_SCOPES)) expect(byKey.get(route), route).toBe(scope);
    for (const r of routes) {
      if (r.url.startsWith('/api/v1/files')) expect(r.scope, key(r)).toBeUndefined();
      else expect(SCOPES as readonly string[], key(r)).toContain(r.scope);
    }
  });

  it('a token holding every scope but the one a route requires -> 403 in the route shape, with rate-limit headers; with that scope alone, never 403', async () => {
    const routes = apiRoutes().filter((r) => r.scope);
    const merchant = await signupMerchant(h);
    const partner = (await storeWithApp(h)).partner;
    const install = async (scopes: string[]) => {
      const app = await createTestApp(h, partner.token, { scopes, tier: 'enterprise' });
      return (await installApp(h, merchant, app)).accessToken;
    };
    const failures: string[] = [];
    for (const scope of new Set(routes.map((r) => r.scope!))) {
      const lacking = await install(SCOPES.filter((s) => s !== scope));
      const only = await install([scope]);
      for (const r of routes.filter((x) => x.scope === scope)) {
        const url = concrete(r.url);
        const refused = await h.req(r.method, url, { token: lacking, body: {} });
        const where = `${r.method} ${r.url}`;
        if (refused.statusCode !== 403) failures.push(`${where} without ${scope}: ${refused.statusCode}`);
        else {
          expectShape(refused, r.url, 403);
          expectApiHeaders(refused);
          expect(rate(refused).limit, where).toBe(500);
        }
        const allowed = await h.req(r.method, url, { token: only, body: {} });
        if (allowed.statusCode === 403 || allowed.statusCode >= 500) failures.push(`${where} with ${scope} alone: ${allowed.statusCode} ${allowed.body}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
// Credential kinds (app-api.md Authentication Methods; C2.3, C4.6, C4.8): one kind is never
// accepted where another is required.

async function hs256(claims: Record<string, unknown>, key: string, options: { iss?: string; alg?: string } = {}) {
  const now = Math.floor(h.clock.nowMs() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT' })
    .setIssuer(options.iss ?? h.config.siteUrl)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(new TextEncoder().encode(key));
}

describe('credential kinds are not interchangeable (Authentication Methods; C2.3, C4.6, C4.8)', () => {
  it('a session token, an unsigned or foreign-key JWT, a refresh token or a code open no surface', async () => {
    const s = await storeWithApp(h);
    const session = (await h.req('GET', `/apps/session-token?client_id=${s.app.clientId}`, { token: s.merchant.token })).json().data.sessionToken;
    const merchantClaims = { sub: s.merchant.userId, role: 'MERCHANT', storeId: s.merchant.storeId };
    const [header, payload] = s.merchant.token.split('.');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    const appSigned = await hs256(merchantClaims, s.app.clientSecret); // the developer knows this key
    const otherIssuer = await hs256(merchantClaims, TEST_SECRET, { iss: 'https://elsewhere.example' });
    const hs512 = await hs256(merchantClaims, TEST_SECRET, { alg: 'HS512' });
    const strippedSignature = `${header}.${payload}.`;
    const handoff = new URL((await h.req('GET', `/apps/oauth/authorize?client_id=${s.app.clientId}`, { token: s.merchant.token })).json().data.redirectUrl);
    const code = handoff.searchParams.get('code')!;

    const jwtRoutes = ['/apps/installations', '/apps/developer/apps', '/notifications', '/apps/gdpr/requests', '/apps/admin/emails'];
    for (const token of [session, unsigned, appSigned, otherIssuer, hs512, strippedSignature, s.accessToken, s.refreshToken, code]) {
      for (const url of jwtRoutes) expectEnvelopeError(await h.req('GET', url, { token }), 401);
    }
    for (const token of [session, s.merchant.token, s.partner.token, s.refreshToken, code, s.app.clientSecret]) {
      const res = await h.req('GET', '/api/v1/products.json', { token });
      expectErrorsBody(res, 401);
      expectApiHeaders(res, { rated: false });
    }
    // The access token still works: nothing above was counted against it or revoked it.
    expect((await h.req('GET', '/api/v1/products.json', { token: s.accessToken })).statusCode).toBe(200);
  });

  it('an access token is no refresh token, and a refresh token is no code (C4.4, C4.5): 400, and nothing is revoked', async () => {
    const s = await storeWithApp(h);
    const client = { client_id: s.app.clientId, client_secret: s.app.clientSecret };
    const asRefresh = await h.req('POST', '/apps/oauth/token', { body: { ...client, grant_type: 'refresh_token', refresh_token: s.accessToken } });
    expectEnvelopeError(asRefresh, 400);
    const asCode = await h.req('POST', '/apps/oauth/token', { body: { ...client, grant_type: 'authorization_code', code: s.refreshToken, state: 'x' } });
    expectEnvelopeError(asCode, 400);
    expect((await h.req('GET', '/api/v1/products.json', { token: s.accessToken })).statusCode).toBe(200);
    const refreshed = await h.req('POST', '/apps/oauth/token', { body: { ...client, grant_type: 'refresh_token', refresh_token: s.refreshToken } });
    expect(refreshed.statusCode).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
// Token state (app-api.md Token state; C4.7): revocation takes effect at once in every process.

describe('a revocation that lands while a token is being looked up is not undone by the cache (C4.7)', () => {
  it('the look-up read the token before the uninstall and returned after the revocation notice: the next call is 401', async () => {
    const s = await storeWithApp(h);
    // A second process's token cache on the same database. Its look-up query is held between
    // reading the row and handing it back, so that the uninstall commits (and its NOTIFY reaches
    // this cache) in between: the order a busy process sees when a revocation races a request.
    let holdLookup: Promise<void> | null = null;
    let rowRead!: () => void;
    const lookupRead = new Promise<void>((resolve) => (rowRead = resolve));
    const notices: string[] = [];
    const db = h.db;
    const racing = {
      kind: db.kind,
      async query(sql: string, params?: unknown[], options?: { name?: string }) {
        const result = await db.query(sql, params, options as never);
        if (options?.name === 'access_token_lookup' && holdLookup) {
          rowRead();
          await holdLookup;
        }
        return result;
      },
      listen: (channel: string, onMessage: (payload: string) => void) =>
        db.listen(channel, (payload) => {
          if (channel === REVOCATION_CHANNEL) notices.push(payload);
          onMessage(payload);
        }),
    } as unknown as Db;
    const cache = new AccessTokenCache(racing, h.clock);
    await cache.start();
    try {
      let release!: () => void;
      holdLookup = new Promise((resolve) => (release = resolve));
      const lookup = cache.lookup(s.accessToken);
      await lookupRead; // the token's row is read, still live
      expect((await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.merchant.token })).statusCode).toBe(200);
      await expect.poll(() => notices.includes(s.installationId), { timeout: 5000 }).toBe(true);
      holdLookup = null;
      release();
      await lookup; // began before the revocation: either answer is fair for that one request
      expect(await cache.lookup(s.accessToken)).toBeNull();
    } finally {
      await cache.stop();
    }
    expectErrorsBody(await h.req('GET', '/api/v1/products.json', { token: s.accessToken }), 401);
  });
});
