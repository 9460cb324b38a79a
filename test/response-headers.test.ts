// The headers an app acts on are in the API reference (found in review: docs/openapi.json declared
// none, not even `Link`, the only paging of the bare-body lists, so a client generated from it read
// the first page alone). app-api.md Conventions 5: "Paging is carried in the `Link` response
// header"; Limits: "Headers on every `/api/v1/` response: `X-RateLimit-Limit`, `-Remaining`,
// `-Reset`", `Retry-After` on 429; C5.5 the version header. The fuzz (test/fuzz-openapi.test.ts)
// checks every answer it gets against the reference; here the answers it never meets: a list with
// pages on both sides, and a 429.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';
import { orderBody } from './helpers/orders.js';

let h: Harness;
let doc: any;
beforeAll(async () => {
  h = await createHarness();
  doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
}, 60_000);
afterAll(() => h?.close());

const declared = (path: string, method: string, status: number) =>
  Object.keys(doc.paths[path][method].responses[String(status)]?.headers ?? {}).map((k) => k.toLowerCase());

const MEANINGFUL = ['link', 'x-svc-api-version', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after'];
const sent = (headers: Record<string, unknown>) => MEANINGFUL.filter((name) => headers[name] !== undefined);

describe('response headers in the API reference (app-api.md Conventions 5, Limits; C5.5)', () => {
  it('each bare-body list sends Link on a middle page, and the reference declares it there; no other App API operation declares Link', async () => {
    const s = await storeWithApp(h, { scopes: ['read_shop', 'read_products', 'write_products', 'read_customers', 'write_customers', 'read_orders'] });
    for (let i = 0; i < 3; i++) {
      const hook = await h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { topic: ['products/create', 'customers/create', 'orders/create'][i], address: 'https://hooks.example.com/in' } });
      expect(hook.statusCode, hook.body).toBe(201);
      const product = (await h.req('POST', '/products', { token: s.merchant.token, body: { title: `Paged ${i}`, price: '10.00', inventory_quantity: 10 } })).json().data;
      await h.req('POST', '/api/v1/customers.json', { token: s.accessToken, body: { email: `paged-${i}-${Date.now()}@example.com` } });
      const order = await h.req('POST', '/orders', { token: s.merchant.token, body: orderBody({ id: product.product_id, numId: product.id, variants: [] }) });
      expect(order.statusCode, order.body).toBe(201);
    }
    const lists = ['/api/v1/products.json', '/api/v1/customers.json', '/api/v1/orders.json', '/api/v1/webhooks.json'];
    for (const path of lists) {
      const res = await h.req('GET', `${path}?limit=1&page=2`, { token: s.accessToken });
      expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
      expect(res.headers.link, path).toMatch(/rel="next".*rel="previous"/);
      const undeclared = sent(res.headers).filter((name) => !declared(path, 'get', 200).includes(name));
      expect(undeclared, path).toEqual([]);
    }
    const withLink = Object.entries<any>(doc.paths).filter(([, item]) => Object.values<any>(item).some((op) => op.responses?.['200']?.headers?.Link)).map(([p]) => p);
    expect(withLink.sort()).toEqual([...lists].sort());
  });

  it('a 429 carries Retry-After, the rate-limit and version headers, all declared; a 401 carries the version header alone', async () => {
    const s = await storeWithApp(h);
    const answers = await Promise.all(Array.from({ length: 45 }, () => h.req('GET', '/api/v1/products.json', { token: s.accessToken })));
    const limited = answers.find((r) => r.statusCode === 429);
    expect(limited, 'the free tier (20 a second) refuses some of 45 at once').toBeDefined();
    expect(sent(limited!.headers).sort()).toEqual(['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-svc-api-version']);
    expect(sent(limited!.headers).filter((name) => !declared('/api/v1/products.json', 'get', 429).includes(name))).toEqual([]);

    const stranger = await h.req('GET', '/api/v1/products.json', { token: 'not-a-token' });
    expect(stranger.statusCode).toBe(401);
    expect(sent(stranger.headers)).toEqual(['x-svc-api-version']);
    expect(declared('/api/v1/products.json', 'get', 401)).toEqual(['x-svc-api-version']);
  });
});
