// The authentication matrix (design.md, "Habits": the same checks for every authenticated route,
// written once). Every route the service registers is collected from its route table
// (src/surfaces/surface.ts), so a route added tomorrow is checked the day it is added:
// - it belongs to a surface, and a route of a public surface is on PUBLIC below (a route cannot
//   become public by being registered in the wrong place unnoticed);
// - every other route answers each credential that must not open it with the status the documents
//   give (app-api.md "Authentication" and "Errors", C2.4, C5.1, C5.5, C7.1, C14.7), in the route's
//   error shape: no credential, a malformed one, another scheme, an expired platform JWT, an
//   expired access token, and each wrong kind (an access token where a JWT is due, a JWT on an
//   access-token surface, a role the surface or route does not admit);
// - its OpenAPI `security` names the credential its surface checks.
// Credentials that open a route are not sent: its handler would run (payout sweeps, job runs), and
// the area tests check what each route does for its callers.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, TEST_SECRET, type Harness } from './helpers/harness.js';
import { operatorToken, storeWithApp } from './helpers/actors.js';
import { claimRoutes, recordRoutes, routeTable, type RouteEntry } from '../src/surfaces/surface.js';

/** Routes that take no credential, and why (the documents' words). A new public route goes here. */
const PUBLIC: Record<string, string> = {
  'GET /healthz': 'liveness (C1.4)',
  'GET /readyz': 'readiness (C1.4)',
  'GET /metrics': 'Prometheus scrape; kept off the public network (README)',
  'GET /openapi.json': 'the API reference',
  'GET /uploads/*': 'uploaded images under names the service makes (C7.3)',
  'POST /auth/signup': 'sign-up (C2.1)',
  'POST /auth/login': 'login (C2.2)',
  'POST /apps/oauth/token': 'the app authenticates with client id and secret in the body (C4.4, C4.5)',
  'POST /storefront/:storeURL/events': 'storefront events, no credential (C7.4)',
  'GET /storefront/:storeURL/orders/:orderId': "the order's status for its customer, keyed by its confirmation number",
  'POST /storefront/:storeURL/checkouts': "a buyer's checkout; its token, returned here, is its only key (C15.1)",
  'GET /storefront/:storeURL/checkouts/:token': 'the checkout, keyed by its token (C15.1)',
  'PATCH /storefront/:storeURL/checkouts/:token': 'the checkout, keyed by its token (C15.1)',
  'GET /storefront/:storeURL/checkouts/:token/shipping_rates': 'the checkout, keyed by its token (C15.1)',
  'POST /storefront/:storeURL/checkouts/:token/complete': 'the checkout, keyed by its token (C15.1)',
  'POST /payments/stripe/webhook': 'Stripe events, verified by their Stripe-Signature (C13.1)',
};
const PUBLIC_SURFACES = ['platform', 'accounts', 'oauth-client', 'storefront', 'payments'];
/**
 * Surfaces that take no credential in `Authorization` but a cookie of their own: the dashboard's
 * HTML pages (issue 15), hidden from the OpenAPI document. No bearer credential opens them, so this
 * matrix has nothing to send; test/dashboard.test.ts checks every one of their routes without a
 * session (sent to sign in), with the wrong role, and with another developer's session (404).
 */
const COOKIE_SURFACES = ['dashboard'];

type Kind =
  | 'none' | 'malformed' | 'other scheme' | 'expired JWT' | 'expired access token'
  | 'access token' | 'merchant' | 'staff' | 'partner' | 'operator';

/** Refused by every authenticated route with 401. */
const NEVER_VALID: Kind[] = ['none', 'malformed', 'other scheme', 'expired JWT', 'expired access token'];

/** Per surface: the valid credentials it refuses, and how. Those not named open it. */
const REFUSED: Record<string, { scheme: 'accessToken' | 'bearer'; refuses: Partial<Record<Kind, 401 | 403>> }> = {
  // app-api.md Authentication: an access token only; a platform JWT is no access token (401).
  'app-api': { scheme: 'accessToken', refuses: { merchant: 401, staff: 401, partner: 401, operator: 401 } },
  // The GDPR acknowledge and complete calls: the app's access token (app-api.md GDPR routes).
  'app-token': { scheme: 'accessToken', refuses: { merchant: 401, staff: 401, partner: 401, operator: 401 } },
  // C7.1: MERCHANT, STAFF_ADMIN, MANAGER and SUPER_ADMIN; another role 403.
  'merchant-admin': { scheme: 'bearer', refuses: { 'access token': 401, partner: 403 } },
  // The store's own staff (C4.1, C4.7, C4.8, C2.4): the operator has no store.
  'store-staff': { scheme: 'bearer', refuses: { 'access token': 401, partner: 403, operator: 403 } },
  // C14.7: owner, staff with admin or manager access.
  'metafield-read': { scheme: 'bearer', refuses: { 'access token': 401, partner: 403, operator: 403 } },
  // app-api.md API surfaces: developer JWT, role MERCHANT or PARTNER.
  developer: { scheme: 'bearer', refuses: { 'access token': 401, staff: 403, operator: 403 } },
  // The platform operator: SUPER_ADMIN.
  operator: { scheme: 'bearer', refuses: { 'access token': 401, merchant: 403, staff: 403, partner: 403 } },
};

/** Routes that admit fewer roles than their surface. */
const NARROWER: Record<string, Partial<Record<Kind, 403>>> = {
  'POST /stores/staff': { staff: 403 }, // C2.4: role MERCHANT
  // Store-level webhooks (C6.5) belong to a store: the operator, who has none, is refused.
  'POST /webhooks': { operator: 403 },
  'GET /webhooks': { operator: 403 },
  'DELETE /webhooks/:id': { operator: 403 },
};

/** C5.1: the App API resources whose errors use the errors body; the rest (fulfillments too) the envelope. */
const ERRORS_BODY = /^\/api\/v1\/(products|collections|orders|customers|product_listings|webhooks)\b/;
const errorShape = (route: RouteEntry) =>
  route.surface === 'app-api' && ERRORS_BODY.test(route.url) && !route.url.includes('fulfillments') ? 'errors' : 'envelope';

const key = (r: { method: string; url: string }) => `${r.method} ${r.url}`;

/** Every way a route can fail to be claimed: outside every surface, or public without saying so. */
function unclaimed(routes: RouteEntry[]): string[] {
  return routes.flatMap((r) => {
    if (!r.surface) return [`${key(r)}: registered outside every surface`];
    if (COOKIE_SURFACES.includes(r.surface)) return r.hidden ? [] : [`${key(r)}: a cookie surface's route is in the OpenAPI document`];
    if (PUBLIC_SURFACES.includes(r.surface) && r.method !== 'HEAD' && !(key(r) in PUBLIC)) return [`${key(r)}: public (${r.surface}) but not on PUBLIC`];
    if (!PUBLIC_SURFACES.includes(r.surface) && !(r.surface in REFUSED)) return [`${key(r)}: surface ${r.surface} has no row in REFUSED`];
    return [];
  });
}

let h: Harness;
let routes: RouteEntry[];
const credentials = {} as Record<Kind, Record<string, string>>;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function platformJwt(claims: { sub: string; role: string; storeId?: string }, iat: number, exp: number) {
  return new SignJWT({ role: claims.role, ...(claims.storeId ? { storeId: claims.storeId } : {}) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuer(h.config.siteUrl)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(new TextEncoder().encode(TEST_SECRET));
}

beforeAll(async () => {
  h = await createHarness();
  routes = routeTable(h.app);

  // An access token that worked, then expired: its 24 hours pass on the service clock (C4.6).
  const old = await storeWithApp(h);
  expect((await h.req('GET', '/api/v1/products.json', { token: old.accessToken })).statusCode).toBe(200);
  await h.advance(25 * 3600);

  const s = await storeWithApp(h);
  const staffEmail = `staff-${randomUUID()}@example.com`;
  const created = await h.req('POST', '/stores/staff', { token: s.merchant.token, body: { email: staffEmail, password: 'staff-password', name: 'Staff', role: 'STAFF_ADMIN' } });
  expect(created.statusCode).toBe(201);
  const staff = (await h.req('POST', '/auth/login', { body: { email: staffEmail, password: 'staff-password' } })).json().data.token;

  // A platform JWT signed with the service's secret and issuer, 13 hours old: expired an hour ago
  // (C2.3: 12 hours). The same token made fresh opens the route, so only its expiry refuses it.
  const now = Math.floor(h.clock.nowMs() / 1000);
  const claims = { sub: s.merchant.userId, role: 'MERCHANT', storeId: s.merchant.storeId };
  const fresh = await platformJwt(claims, now, now + 3600);
  expect((await h.req('GET', '/apps/installations', { token: fresh })).statusCode).toBe(200);
  const expired = await platformJwt(claims, now - 13 * 3600, now - 3600);

  Object.assign(credentials, {
    none: {},
    malformed: bearer('not-a-credential'),
    'other scheme': { authorization: `Basic ${Buffer.from('user:password').toString('base64')}` },
    'expired JWT': bearer(expired),
    'expired access token': bearer(old.accessToken),
    'access token': bearer(s.accessToken),
    merchant: bearer(s.merchant.token),
    staff: bearer(staff),
    partner: bearer(s.partner.token),
    operator: bearer(await operatorToken(h)),
  } satisfies Record<Kind, Record<string, string>>);
}, 120_000);
afterAll(() => h?.close());

describe('every route belongs to a surface', () => {
  it('no route outside a surface; every public route is on PUBLIC, and PUBLIC names only real routes', () => {
    expect(unclaimed(routes)).toEqual([]);
    const registered = new Set(routes.map(key));
    expect(Object.keys(PUBLIC).filter((k) => !registered.has(k))).toEqual([]);
    // The matrix below has something to check on every authenticated surface.
    expect(new Set(routes.filter((r) => r.surface && r.surface in REFUSED).map((r) => r.surface))).toEqual(new Set(Object.keys(REFUSED)));
  });

  it('the check catches a route registered outside every surface, or public and unlisted', async () => {
    const app = Fastify();
    recordRoutes(app);
    app.get('/stray', async () => 'no surface');
    await app.register(async (s) => {
      claimRoutes(s, { name: 'accounts', security: null, credential: 'none' });
      s.get('/auth/new-public-route', async () => 'public');
    });
    await app.ready();
    expect(unclaimed(routeTable(app)).filter((m) => !m.startsWith('HEAD'))).toEqual([
      'GET /stray: registered outside every surface',
      'GET /auth/new-public-route: public (accounts) but not on PUBLIC',
    ]);
    await app.close();
  });

  it('a route cannot write its own security, nor sit in two surfaces: the app does not start', async () => {
    const start = async (plugin: (app: FastifyInstance) => Promise<void>) => {
      const app = Fastify();
      try {
        await app.register(plugin);
        await app.ready();
      } finally {
        await app.close();
      }
    };
    await expect(start(async (s) => {
      claimRoutes(s, { name: 'operator', security: 'bearer', credential: 'test' });
      s.get('/x', { schema: { security: [{ accessToken: [] }] } }, async () => 'x');
    })).rejects.toThrow(/GET \/x writes its own OpenAPI security/);
    await expect(start(async (outer) => {
      claimRoutes(outer, { name: 'operator', security: 'bearer', credential: 'test' });
      await outer.register(async (inner) => {
        claimRoutes(inner, { name: 'developer', security: 'bearer', credential: 'test' });
        inner.get('/y', async () => 'y');
      });
    })).rejects.toThrow(/GET \/y is registered in two surfaces/);
  });

  it("each route's OpenAPI security is its surface's credential, and its description names it; public routes have no security", async () => {
    const doc = (await h.req('GET', '/openapi.json')).json();
    const wrong: string[] = [];
    for (const r of routes) {
      if (r.hidden || r.method === 'HEAD') continue;
      const path = r.url.replace(/:(\w+)/g, '{$1}');
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      if (!op) {
        wrong.push(`${key(r)}: not in the OpenAPI document`);
        continue;
      }
      const documented = op.security ? Object.keys(op.security[0] ?? {}) : [];
      const expected = r.surface && r.surface in REFUSED ? [REFUSED[r.surface].scheme] : [];
      if (documented.join() !== expected.join()) wrong.push(`${key(r)}: documented [${documented}], checked [${expected}]`);
      if (!/(^|\n\n)Credential: [^\n]+\.$/.test(op.description ?? '')) wrong.push(`${key(r)}: no "Credential:" line in its description`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('the matrix: each credential that must not open a route is refused, in the route shape', () => {
  const kinds: Kind[] = [...NEVER_VALID, 'access token', 'merchant', 'staff', 'partner', 'operator'];

  it.each(kinds)('%s', async (kind) => {
    const mismatches: string[] = [];
    let checked = 0;
    // HEAD is the GET route's twin (same plugin, same hooks) and has no body to check.
    for (const route of routes.filter((r) => r.method !== 'HEAD' && r.surface && r.surface in REFUSED)) {
      const expected = NEVER_VALID.includes(kind) ? 401 : (NARROWER[key(route)]?.[kind] ?? REFUSED[route.surface!].refuses[kind]);
      if (!expected) continue;
      checked++;
      const url = route.url.replace(/:\w+/g, () => randomUUID()).replace('*', 'x');
      const res = await h.app.inject({ method: route.method as any, url, headers: credentials[kind] });
      const problem = refusalProblem(route, res, expected);
      if (problem) mismatches.push(`${key(route)} with ${kind}: ${problem}`);
    }
    expect(mismatches).toEqual([]);
    expect(checked).toBeGreaterThan(0);
  });
});

/** What is wrong with a refusal (status, body shape, C14.7 words, C5.5 headers), or null. */
function refusalProblem(route: RouteEntry, res: { statusCode: number; headers: Record<string, unknown>; body: string }, expected: 401 | 403): string | null {
  if (res.statusCode !== expected) return `${res.statusCode} instead of ${expected}: ${res.body.slice(0, 160)}`;
  let body: any;
  try {
    body = JSON.parse(res.body);
  } catch {
    return `not JSON: ${res.body.slice(0, 80)}`;
  }
  if (errorShape(route) === 'errors') {
    const base = body?.errors?.base;
    if (Object.keys(body).join() !== 'errors' || !Array.isArray(base) || typeof base[0] !== 'string' || !base[0]) return `not an errors body: ${res.body}`;
  } else {
    const { status, state, message, data, count, pagination, ...rest } = body ?? {};
    if (status !== expected || state !== 'error' || typeof message !== 'string' || !message || data !== null || count !== null || pagination !== null || Object.keys(rest).length) {
      return `not an envelope error: ${res.body}`;
    }
    if (route.surface === 'metafield-read' && message !== (expected === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN')) return `message ${message} (C14.7)`;
  }
  if (route.surface === 'app-api') {
    // C5.5: the version header on every /api/v1 response; a 401 belongs to no app: no rate-limit headers.
    if (res.headers['x-svc-api-version'] !== '2026-06') return 'no X-SVC-Api-Version header';
    if (res.headers['x-ratelimit-limit'] !== undefined) return 'rate-limit headers on a refusal';
  }
  return null;
}
