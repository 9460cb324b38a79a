// Query parameters, swept over the API reference (docs/openapi.json) on every route:
// - a list filter sent blank is no filter (docs/decisions.md "A blank list filter is no filter"):
//   every query parameter the reference marks `x-blank-is-absent` (every filter of `pagedQuery`),
//   asked empty and as spaces with its surface's credential, is answered exactly as the list
//   without it. Before, the same `?status=` was a 422 on products, a 400 on payouts and the
//   delivery log, and no filter on orders and GDPR;
// - a parameter that takes one value, sent twice, is refused as such (below).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { operatorToken, storeWithApp } from './helpers/actors.js';

interface Parameter { in: string; name: string; schema?: Record<string, unknown> }
const doc = JSON.parse(readFileSync(new URL('../docs/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, { parameters?: Parameter[] }>>;
};

const filters = Object.entries(doc.paths).flatMap(([path, operations]) =>
  (operations.get?.parameters ?? [])
    .filter((p) => p.in === 'query' && p.schema?.['x-blank-is-absent'] === true)
    .map((p) => ({ path, name: p.name })));

let h: Harness;
let credentials: { app: string; merchant: string; developer: string; operator: string };
let appId: string;
beforeAll(async () => {
  h = await createHarness();
  const s = await storeWithApp(h, { scopes: ['read_shop', 'read_products', 'read_orders', 'read_metafields', 'read_discounts', 'read_shipping', 'read_customers', 'read_analytics'], tier: 'enterprise' });
  credentials = { app: s.accessToken, merchant: s.merchant.token, developer: s.partner.token, operator: await operatorToken(h) };
  appId = s.app.appId;
});
afterAll(() => h?.close());

function credentialFor(path: string): string {
  if (path.startsWith('/api/v1/')) return credentials.app;
  if (path.startsWith('/apps/developer/')) return credentials.developer;
  if (path.startsWith('/apps/admin/')) return credentials.operator;
  return credentials.merchant;
}

const urlOf = (path: string) => path.replace('{appId}', appId).replace('{handle}', 'all');

describe('a blank list filter is no filter, on every list', () => {
  it('finds the lists by the reference: App API, developer, merchant and operator lists among them', () => {
    const paths = new Set(filters.map((f) => f.path));
    for (const path of ['/api/v1/products.json', '/api/v1/orders.json', '/api/v1/discounts.json', '/apps/developer/payouts',
      '/apps/developer/{appId}/webhook-deliveries', '/apps/developer/{appId}/functions/{handle}/runs', '/apps/gdpr/requests', '/apps/admin/emails']) {
      expect(paths).toContain(path);
    }
  });

  it.each(filters)('$path ?$name= and ?$name=%20%20 answer as the list without it', async ({ path, name }) => {
    const token = credentialFor(path);
    const without = await h.req('GET', urlOf(path), { token });
    expect(without.statusCode, without.body).toBe(200);
    for (const blank of ['', '%20%20']) {
      const res = await h.req('GET', `${urlOf(path)}?${encodeURIComponent(name)}=${blank}`, { token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual(without.json());
      expect(res.headers.link).toEqual(without.headers.link);
    }
  });
});

// A query parameter sent twice arrives as an array, and the refusal named the value's type ("must
// be a string", "must be a whole number or a string"), not what happened: swept over every GET
// operation's query parameters that take one value, each sent twice with made-up path ids.
const singleValued = Object.entries(doc.paths).flatMap(([path, operations]) =>
  (operations.get?.parameters ?? [])
    .filter((p) => p.in === 'query' && p.schema?.type !== 'array')
    .map((p) => ({ path, name: p.name })));

describe('a query parameter given twice is refused as such, on every route', () => {
  it('finds the parameters: paging and filters of every surface', () => {
    expect(singleValued.length).toBeGreaterThan(30);
    expect(singleValued).toEqual(expect.arrayContaining([{ path: '/api/v1/products.json', name: 'limit' }, { path: '/apps/developer/payouts', name: 'status' }]));
  });

  it.each(singleValued)('$path ?$name twice -> 400 "$name is given more than once"', async ({ path, name }) => {
    const url = path.replace(/\{[^}]+\}/g, '0190a9b2-7c3e-7000-8000-000000000001');
    const res = await h.req('GET', `${urlOf(url)}?${name}=a&${name}=b`, { token: credentialFor(path) });
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json();
    if (body.errors) expect(body.errors).toEqual({ [name]: ['is given more than once'] });
    else expect(body.message).toBe(`${name} is given more than once`);
  });
});
