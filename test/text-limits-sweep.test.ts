// Every documented text limit counts characters (code points), the way JSON Schema's `maxLength`
// counts them, never UTF-16 units (docs/decisions.md, "Hardening: input": text limits count
// characters, src/text.ts `longerThan`). A field checked both by its route schema (Ajv: code points) and by a hand-written
// reader (`.length`: UTF-16 units) took 255 ASCII letters but refused 128 emoji.
//
// The sweep sends, to every documented operation, each field with a limit at exactly the limit in
// astral characters (two UTF-16 units each) and expects it taken, then one more and expects the
// endpoint's validation error (400, or 422 where the resource answers so) naming the field:
// - the fields whose limit the route schemas declare (`maxLength` in the service's own
//   /openapi.json), found by walking each JSON request body schema, so a new limit is swept the day
//   it is declared;
// - the fields whose limit only a reader checks (HAND_CHECKED below), listed by hand.
// Bodies start from the fuzz's valid seed per operation (test/fixtures/fuzz-seeds.ts). The few
// fields that cannot hold astral characters at all (ids, codes, closed sets) are named in
// NOT_FREE_TEXT with the reason; limits the 1 MiB body cap reaches first are checked to be a 413.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { knownParam, makeKnown, seedBodies, type Known } from './fixtures/fuzz-seeds.js';
import { developer, install, merchant, paidApp } from './helpers/billing.js';
import { runBillingCharges } from '../src/billing/charges.js';
import { runPayoutSweep } from '../src/payouts/payouts.js';
import { MAX_BODY_BYTES } from '../src/http/input-guard.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { codePoints, cutTo, longerThan, shorterThan } from '../src/text.js';

/** One field's limit on one operation. `path` walks the body: a number is an array index. */
interface Limit {
  op: string;
  path: (string | number)[];
  max: number;
  /** The text around the characters (a URL's scheme and host, an email's domain), inside the limit. */
  prefix?: string;
  suffix?: string;
}

/** Fields whose schema limit cannot be met with astral characters: the value has a closed form. */
const NOT_FREE_TEXT: [RegExp, string][] = [
  [/checkouts.* line_items\.0\.(product_id|variant_id)$/, 'a catalog id (UUID or number)'],
  [/checkouts.* shipping_address\.(country|country_code|province_code)$/, 'a country or region the zones know'],
  [/checkouts.* discount_code$/, "one of the store's discount codes"],
  [/checkouts.* shipping_rate\.handle$/, 'one of the quote\'s rate handles'],
  [/checkouts.* payment_method$/, "one of the store's payment methods"],
  [/variants\.0\.stockStatus$|\bstockStatus$/, 'a closed set of stock statuses'],
  [/^PUT \/stores\/address country$/, 'an ISO 3166 country code'],
  [/^(POST|PATCH) \/apps\/developer\/apps\S* handle$/, 'a slug: lowercase letters, digits and -'],
  [/^(POST|PATCH) \/apps\/developer\/apps\S* version$/, 'a SemVer version: ASCII by its grammar'],
];

/** A handle keeps only ASCII letters and digits (slugify): it gets a new one each time (`h12-`). */
const HANDLE = '(handle)';

/** Wrappers the resource routes accept around the body (`{ product: {...} }`) or not. */
const WRAPPERS = new Set(['product', 'collection', 'customer', 'fulfillment', 'product_listing', 'webhook']);

/** Fields with a documented limit that only their reader checks (no `maxLength` in the schema). */
const HAND_CHECKED: Limit[] = [
  // Catalog
  ...['POST /products', 'POST /api/v1/products.json'].map((op) => ({ op, path: ['tags', 0], max: 255 })),
  // Orders (C7.1) and their update
  ...['first_name', 'last_name', 'company', 'address1', 'address2', 'city', 'province', 'zip', 'phone'].map((key) => ({ op: 'POST /orders', path: ['shipping_address', key], max: 255 })),
  { op: 'POST /orders', path: ['billing_address', 'city'], max: 255 },
  { op: 'POST /orders', path: ['shipping_line', 'title'], max: 255 },
  { op: 'POST /orders', path: ['shipping_line', 'code'], max: 255 },
  { op: 'POST /orders', path: ['email'], max: 254, suffix: '@example.com' },
  { op: 'POST /orders', path: ['customer', 'email'], max: 254, suffix: '@example.com' },
  { op: 'POST /orders', path: ['phone'], max: 64 },
  { op: 'POST /orders', path: ['line_items', 0, 'properties', 0, 'value'], max: 1000 },
  ...([['courierName', 255], ['trackingNumber', 255], ['digitaldata', 10_000], ['staffId', 255], ['clientName', 255], ['mobileNumber', 64], ['address', 255], ['city', 255], ['state', 255], ['country', 255], ['pinCode', 64]] as const)
    .map(([key, max]) => ({ op: 'PUT /orders/update/{orderId}', path: [key], max })),
  { op: 'PUT /orders/update/{orderId}', path: ['email'], max: 254, suffix: '@example.com' },
  { op: 'POST /orders/{orderId}/refund', path: ['reason'], max: 255 },
  // Customers
  ...['first_name', 'last_name'].map((key) => ({ op: 'POST /api/v1/customers.json', path: ['customer', key], max: 255 })),
  { op: 'POST /api/v1/customers.json', path: ['customer', 'phone'], max: 64 },
  { op: 'POST /api/v1/customers.json', path: ['customer', 'email'], max: 254, suffix: '@example.com' },
  ...['address1', 'city', 'province', 'zip'].map((key) => ({ op: 'POST /customers', path: ['addresses', 0, key], max: 255 })),
  // Content
  ...['title', 'handle', 'templateSuffix', 'seoTitle'].map((key) => ({ op: 'POST /pages', path: [key], max: 255, prefix: key === 'handle' ? HANDLE : undefined })),
  { op: 'POST /pages', path: ['seoDesc'], max: 1000 },
  { op: 'POST /pages', path: ['seoImage'], max: 2048, prefix: 'https://example.com/' },
  { op: 'POST /pages', path: ['link'], max: 2048, prefix: 'https://example.com/' },
  { op: 'POST /menus', path: ['name'], max: 255 },
  { op: 'POST /menus', path: ['child', 0, 'name'], max: 255 },
  // Discounts, shipping zones
  { op: 'POST /discounts', path: ['code'], max: 100 },
  { op: 'POST /api/v1/shipping_zones.json', path: ['name'], max: 255 },
  { op: 'POST /api/v1/shipping_zones.json', path: ['description'], max: 2000 },
  // Storefront events
  { op: 'POST /storefront/{storeURL}/events', path: ['sessionId'], max: 200 },
  { op: 'POST /storefront/{storeURL}/events', path: ['source'], max: 200 },
  { op: 'POST /storefront/{storeURL}/events', path: ['path'], max: 2048 },
  // Metafields: a text value's raw form
  { op: 'POST /api/v1/metafields/bulk.json', path: ['metafields', 0, 'value'], max: 65_536 },
  // GDPR
  { op: 'POST /apps/gdpr/data-request', path: ['customerPhone'], max: 64 },
  { op: 'POST /apps/gdpr/data-request', path: ['customerEmail'], max: 320, suffix: '@example.com' },
  { op: 'POST /apps/gdpr/complete/{requestId}', path: ['dataExportUrl'], max: 2048, prefix: 'https://example.com/' },
  // Payouts (C10.4, C10.7)
  { op: 'PUT /apps/developer/payout-method', path: ['accountHolder'], max: 255 },
  { op: 'PUT /apps/developer/payout-method#paypal', path: ['email'], max: 254, suffix: '@example.com' },
  { op: 'POST /apps/admin/payouts/{payoutId}/fail', path: ['reason'], max: 1000 },
  // Apps, accounts and reviews (their schemas say the same; checked by their readers too)
  { op: 'POST /auth/signup', path: ['name'], max: 255 },
  { op: 'POST /auth/signup', path: ['storeName'], max: 255 },
];

let h: Harness;
let known: Known;
let schemaLimits: Limit[];
let payoutIds: string[] = [];
let checkoutToken: string;
let sent = 0;

beforeAll(async () => {
  h = await createHarness({ SVC_ALLOW_PRIVATE_WEBHOOKS: '1' }, { limiter: unlimitedLimiter() });
  known = await makeKnown(h);
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  schemaLimits = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const schema = op.requestBody?.content?.['application/json']?.schema;
      if (schema) collectLimits(`${method.toUpperCase()} ${path}`, schema, [], schemaLimits);
    }
  }
  const c = await h.req('POST', `/storefront/${known.slug}/checkouts`, { body: checkoutBody() });
  if (c.statusCode !== 201 && c.statusCode !== 200) throw new Error(`checkout fixture: ${c.statusCode} ${c.body}`);
  checkoutToken = c.json().data.checkout.token;
}, 120_000);
afterAll(() => h?.close());

function collectLimits(op: string, schema: any, at: (string | number)[], out: Limit[]): void {
  if (!schema || typeof schema !== 'object') return;
  if (typeof schema.maxLength === 'number') {
    const key = String(at.filter((p) => typeof p === 'string').at(-1) ?? '');
    out.push({
      op, path: at, max: schema.maxLength,
      prefix: /url|src|image/i.test(key) ? 'https://example.com/' : key === 'handle' ? HANDLE : undefined,
      suffix: key === 'email' ? '@example.com' : undefined,
    });
  }
  for (const [key, child] of Object.entries<any>(schema.properties ?? {})) collectLimits(op, child, [...at, key], out);
  if (schema.items) collectLimits(op, schema.items, [...at, 0], out);
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) collectLimits(op, branch, at, out);
}

function checkoutBody() {
  return {
    email: 'buyer@example.com',
    line_items: [{ product_id: known.productId, variant_id: known.variantId, quantity: 1 }],
    shipping_address: { first_name: 'Ada', last_name: 'L', address1: '1 St', city: 'Berlin', country: 'Germany', country_code: 'DE', zip: '10115', phone: '+49' },
    note: 'n',
  };
}

/** A valid body for the operation, new unique values each call. */
let tags = 0;
function seedFor(op: string): Record<string, unknown> {
  const seeds: Record<string, unknown> = {
    ...seedBodies(known, `t${++tags}`),
    'POST /storefront/{storeURL}/checkouts': checkoutBody(),
    'PATCH /storefront/{storeURL}/checkouts/{token}': { note: 'n', shipping_address: checkoutBody().shipping_address },
    'PUT /stores/address': { address1: '1 St', city: 'Lyon', country: 'FR', zip: '69001', phone: '+33' },
    'PUT /apps/developer/payout-method': { type: 'bank', accountHolder: 'Ada', accountNumber: '12345678', routingNumber: '021000021' },
    'PUT /apps/developer/payout-method#paypal': { type: 'paypal', email: 'dev@example.com' },
    'POST /apps/developer/apps': { name: `Sweep app ${tags}`, appUrl: 'https://app.example.com', redirectUrls: ['https://app.example.com/cb'], scopes: ['read_products'] },
  };
  const seed = seeds[op];
  if (seed === undefined) throw new Error(`no seed body for ${op}`);
  return structuredClone(seed) as Record<string, unknown>;
}

/** Sets `path` in `body` to `value`, wrapping or unwrapping the resource as the path names it. */
function withValue(seed: Record<string, unknown>, path: (string | number)[], value: string): Record<string, unknown> {
  const keys = Object.keys(seed);
  let body: any = seed;
  const wrapped = keys.length === 1 && WRAPPERS.has(keys[0]) && seed[keys[0]] && typeof seed[keys[0]] === 'object';
  if (wrapped && path[0] !== keys[0]) body = seed[keys[0]];
  else if (!wrapped && typeof path[0] === 'string' && WRAPPERS.has(path[0]) && path.length > 1 && !(path[0] in seed)) body = { [path[0]]: seed };
  let node = body;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i];
    const next = path[i + 1];
    if (node[key] === undefined || node[key] === null || typeof node[key] !== 'object') node[key] = typeof next === 'number' ? [] : {};
    node = node[key];
  }
  node[path.at(-1)!] = value;
  return body;
}

/** `n` characters, each two UTF-16 units, inside the limit's prefix and suffix; varied per call. */
let variety = 0;
function astral(limit: Limit, n: number): string {
  const prefix = limit.prefix === HANDLE ? `h${++variety}-` : (limit.prefix ?? '');
  const suffix = limit.suffix ?? '';
  const last = String.fromCodePoint(0x1f600 + (++variety % 64));
  return `${prefix}${'😀'.repeat(n - prefix.length - suffix.length - 1)}${last}${suffix}`;
}

/** The operation's URL and credential. */
function target(op: string): { method: string; url: string; token?: string } {
  const [method, rawPath] = op.replace(/#.*$/, '').split(' ');
  const url = rawPath.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === 'token') return checkoutToken;
    if (name === 'payoutId') return payoutIds.shift() ?? 'none';
    return encodeURIComponent(knownParam(known, rawPath, name));
  });
  if (rawPath.startsWith('/storefront/') || rawPath === '/auth/signup') return { method, url };
  if (rawPath.startsWith('/api/v1/')) return { method, url, token: known.accessToken };
  if (rawPath.startsWith('/apps/admin/')) return { method, url, token: known.operatorToken };
  if (rawPath.startsWith('/apps/developer/')) return { method, url, token: known.developerToken };
  if (rawPath.startsWith('/apps/gdpr/complete/')) return { method, url, token: known.accessToken };
  return { method, url, token: known.merchantToken };
}

const name = (l: Limit) => `${l.op} ${l.path.join('.')}`;

/** What went wrong with one limit, or null: over the limit refused naming the field, at it taken. */
async function sweep(limit: Limit): Promise<string | null> {
  const named = limit.path.filter((p): p is string => typeof p === 'string' && !WRAPPERS.has(p));
  const send = async (n: number) => {
    const t = target(limit.op);
    sent++;
    return h.req(t.method, t.url, { token: t.token, body: withValue(seedFor(limit.op), limit.path, astral(limit, n)) });
  };
  // Four UTF-8 bytes a character: past the 1 MiB body cap (bytes, by design) before the text limit.
  if (limit.max * 4 > MAX_BODY_BYTES) {
    const res = await send(limit.max);
    return res.statusCode === 413 ? null : `${name(limit)}: ${limit.max} astral characters (${limit.max * 4} bytes) -> ${res.statusCode}, expected the body cap's 413`;
  }
  const over = await send(limit.max + 1);
  if (over.statusCode !== 400 && over.statusCode !== 422) return `${name(limit)}: ${limit.max + 1} characters -> ${over.statusCode} ${over.body.slice(0, 200)}`;
  // Named by the field or the nearest field around it (`image` for `image.src`, `properties` for its values).
  if (!named.some((key) => over.body.includes(key))) return `${name(limit)}: ${limit.max + 1} characters refused without naming ${named.join('.')}: ${over.body.slice(0, 200)}`;
  const at = await send(limit.max);
  if (at.statusCode >= 300) return `${name(limit)}: ${limit.max} characters -> ${at.statusCode} ${at.body.slice(0, 300)}`;
  return null;
}

const skipReason = (l: Limit) => NOT_FREE_TEXT.find(([re]) => re.test(name(l)))?.[1];

describe('text limits count characters (code points), not UTF-16 units', () => {
  it('every maxLength of the route schemas: the limit in astral characters is taken, one more is refused', async () => {
    const swept = schemaLimits.filter((l) => !skipReason(l));
    expect(swept.length).toBeGreaterThan(150);
    const failures: string[] = [];
    for (const limit of swept) {
      const problem = await sweep(limit);
      if (problem) failures.push(problem);
    }
    expect(failures).toEqual([]);
    // Each field left out (ids, codes, closed sets: not free text) is still declared: the list does not rot.
    for (const [re, why] of NOT_FREE_TEXT) expect(schemaLimits.some((l) => re.test(name(l))), `${re} (${why})`).toBe(true);
  }, 120_000);

  it('every limit only a reader checks: the limit in astral characters is taken, one more is refused', async () => {
    // A payout to fail (C10.7) per request that reaches it.
    const dev = await developer(h);
    expect((await h.req('PUT', '/apps/developer/payout-method', { token: await dev.token(), body: { type: 'paypal', email: 'dev@example.com' } })).statusCode).toBe(200);
    const app = await paidApp(h, dev, { amount: '100.00' });
    await install(h, await merchant(h), app);
    await runBillingCharges(h.deps, { developerIds: [dev.userId] });
    const { payouts } = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.userId] });
    payoutIds = [payouts[0].id, payouts[0].id];

    const failures: string[] = [];
    for (const limit of HAND_CHECKED) {
      const problem = await sweep(limit);
      if (problem) failures.push(problem);
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('limits in bytes are the body cap only: 1 MiB of JSON, whatever it holds', async () => {
    // The one byte limit of a request (MAX_BODY_BYTES, Fastify's bodyLimit): a body of ASCII or of
    // emoji is refused by its UTF-8 size, before any field is read.
    const over = await h.req('POST', '/api/v1/customers.json', { token: known.accessToken, body: { customer: { email: 'big@example.com', note: '😀'.repeat(MAX_BODY_BYTES / 4 + 1) } } });
    expect(over.statusCode).toBe(413);
  });
});

describe('configuration texts count characters too', () => {
  /** The lines a refused configuration prints; [] when it is accepted. */
  const problems = (env: Record<string, string>): string[] => {
    try {
      loadConfig({ SVC_SECRET: 'x'.repeat(32), ...env }, { persistSecret: false });
      return [];
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return err.problems;
    }
  };

  it('"at least 8 characters" (the admin password, as accounts count it) and "at least 32" (the secret) count code points', () => {
    const admin = { SVC_ADMIN_EMAIL: 'ops@example.com' };
    // Four emoji are eight UTF-16 units: zod's .min(8) took them.
    expect(problems({ ...admin, SVC_ADMIN_PASSWORD: '😀'.repeat(7) })).toEqual(['SVC_ADMIN_PASSWORD=(hidden, 7 characters): must be at least 8 characters']);
    expect(problems({ ...admin, SVC_ADMIN_PASSWORD: '😀'.repeat(4) })).toEqual(['SVC_ADMIN_PASSWORD=(hidden, 4 characters): must be at least 8 characters']);
    expect(problems({ ...admin, SVC_ADMIN_PASSWORD: '😀'.repeat(8) })).toEqual([]);
    expect(problems({ SVC_SECRET: '😀'.repeat(31) })).toEqual(['SVC_SECRET=(hidden, 31 characters): must be at least 32 characters']);
    expect(problems({ SVC_SECRET: '😀'.repeat(32) })).toEqual([]);
  });
});

describe('the one rule (src/text.ts)', () => {
  it('longerThan, shorterThan and cutTo agree with counting every code point, over mixed BMP, astral and lone-surrogate text', () => {
    const parts = ['a', 'é', '日', '😀', '𠀀', '\ud800', '\udc00'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 2000; i++) {
      const text = Array.from({ length: next() % 24 }, () => parts[next() % parts.length]).join('');
      const limit = next() % 20;
      expect(longerThan(text, limit), JSON.stringify([text, limit])).toBe(codePoints(text) > limit);
      expect(shorterThan(text, limit), JSON.stringify([text, limit])).toBe(codePoints(text) < limit);
      const cut = cutTo(text, limit);
      expect(codePoints(cut)).toBe(Math.min(limit, codePoints(text)));
      expect(text.startsWith(cut)).toBe(true);
    }
  });
});
