// The first-run demo data set (C1.5), loaded as `npm start` loads it, seen through the App API with
// the access token the banner prints: every resource of the store-data and orders issues is there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { DEMO, loadDemo, type DemoHandles } from '../src/seed/seed.js';
import { demoBanner } from '../src/seed/banner.js';

let h: Harness;
let demo: DemoHandles;
beforeAll(async () => {
  h = await createHarness();
  demo = await loadDemo(h.deps);
});
afterAll(() => h?.close());

const get = async (url: string) => {
  const res = await h.req('GET', url, { token: demo.accessToken });
  expect(res.statusCode, url).toBe(200);
  return res.json();
};

describe('C1.5 demo store', () => {
  it('has products with and without variants, customers, orders in several states, a discount, a page, a menu and a shipping zone', async () => {
    const { products } = await get('/api/v1/products.json');
    expect(products.some((p: any) => p.variants.length > 0)).toBe(true);
    expect(products.some((p: any) => p.variants.length === 0)).toBe(true);
    expect((await get('/api/v1/customers.json')).customers.length).toBeGreaterThanOrEqual(2);
    const { orders } = await get('/api/v1/orders.json');
    expect(new Set(orders.map((o: any) => o.financial_status)).size).toBeGreaterThanOrEqual(2);
    expect((await get('/api/v1/discounts.json')).data.discounts.length).toBeGreaterThanOrEqual(1);
    expect((await get('/api/v1/menus.json')).data.menus.length).toBeGreaterThanOrEqual(1);
    expect((await get('/api/v1/shipping_zones.json')).data.shipping_zones.length).toBeGreaterThanOrEqual(1);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM pages WHERE store_id = $1', [demo.storeId]);
    expect(rows[0].n).toBeGreaterThanOrEqual(1);
  });

  it('the demo app has a sales channel with the tee already listed on it (C6.2)', async () => {
    const tee = (await get('/api/v1/products.json')).products.find((p: any) => p.handle === 'classic-tee');
    const res = await h.req('POST', '/api/v1/product_listings.json', { token: demo.accessToken, body: { product_id: tee.product_id } });
    expect(res.statusCode).toBe(200); // 200: already listed (201 would mean it was not)
    expect(res.json().product_listing).toMatchObject({ product_id: tee.product_id, status: 'active' });
  });
});

describe('C11 the demo functions', () => {
  it('the demo app declares a function of each target, active on the demo store, with runs recorded at a demo checkout', async () => {
    const { rows: active } = await h.db.query<any>(
      `SELECT f.target, f.handle FROM store_functions s JOIN app_functions f ON f.id = s.app_function_id WHERE s.store_id = $1 AND s.active ORDER BY s.activated_at, s.id`,
      [demo.storeId],
    );
    expect(active.map((f) => f.target).sort()).toEqual([
      'cart.delivery-options.transform.run', 'cart.lines.discounts.generate.run', 'cart.payment-methods.transform.run', 'cart.validations.generate.run',
    ]);
    // Recorded after the answers: wait for the four runs (create: three targets; the quote: delivery).
    let runs: any[] = [];
    for (let i = 0; i < 100 && runs.length < 4; i++) {
      runs = (await h.db.query<any>('SELECT function_handle, status, output FROM function_runs WHERE store_id = $1', [demo.storeId])).rows;
      if (runs.length < 4) await new Promise((r) => setTimeout(r, 20));
    }
    expect(runs.map((r) => r.function_handle).sort()).toEqual(['buy-three-save-ten', 'cod-limit', 'hide-dear-rates', 'max-per-line']);
    expect(runs.every((r) => r.status === 'success'), JSON.stringify(runs)).toBe(true);
    // 3 tees to the US: the discount applies; the 20.00 Europe rate is not offered there anyway, the
    // 12.00 heavy-parcel rate only to heavy carts; the delivery function hides what is over 15.00.
    expect(runs.find((r) => r.function_handle === 'buy-three-save-ten').output.operations).toHaveLength(1);
  });
});

describe('C1.5 the banner, on every development start while the demo exists (issue 10)', () => {
  const tokenIn = (banner: string) => banner.match(/App access token \(valid 24 h\): (svcat_\S+)/)![1];

  it('shows the URL, the logins, the client id and a new working token each time', async () => {
    const first = (await demoBanner(h.deps))!;
    const second = (await demoBanner(h.deps))!;
    for (const banner of [first, second]) {
      expect(banner).toContain(`URL:            ${h.config.baseUrl}   (API reference: ${h.config.baseUrl}/docs)`);
      expect(banner).toContain(`Merchant login: ${DEMO.merchant.email} / ${DEMO.merchant.password}   (store "Demo Store", ${demo.storeSlug})`);
      expect(banner).toContain(`Partner login:  ${DEMO.partner.email} / ${DEMO.partner.password}   (app "${DEMO.appName}", client id ${demo.clientId})`);
      expect(banner).toContain(`    curl -s -H "Authorization: Bearer ${tokenIn(banner)}" ${h.config.baseUrl}/api/v1/products.json`);
    }
    expect(tokenIn(first)).not.toBe(tokenIn(second));
    // Every token works, the one printed when the demo was loaded included.
    for (const token of [tokenIn(first), tokenIn(second), demo.accessToken]) {
      expect((await h.req('GET', '/api/v1/products.json', { token })).statusCode).toBe(200);
    }
  });

  it('processes starting together each get a working token (C4.6: a newer authorisation expires an earlier code, so each asks again)', async () => {
    // Three banners at once, as a deployment's api and all processes print them: their
    // authorisations interleave with the code exchanges, which expires all but the newest code.
    const banners = await Promise.all([demoBanner(h.deps), demoBanner(h.deps), demoBanner(h.deps)]);
    const tokens = banners.map((b) => tokenIn(b!));
    expect(new Set(tokens).size).toBe(3);
    for (const token of tokens) expect((await h.req('GET', '/api/v1/products.json', { token })).statusCode).toBe(200);
  });

  it('is never printed in production (no token in its logs)', async () => {
    expect(await demoBanner({ ...h.deps, config: { ...h.deps.config, production: true } })).toBeNull();
  });

  it('once the merchant uninstalled the demo app: no token, and the app is not reinstalled', async () => {
    const merchant = (await h.req('POST', '/auth/login', { body: { email: DEMO.merchant.email, password: DEMO.merchant.password } })).json().data.token;
    const installations = (await h.req('GET', '/apps/installations', { token: merchant })).json().data.installations;
    const installation = installations.find((i: any) => i.appId === demo.appId);
    expect((await h.req('DELETE', `/apps/installations/${installation.installationId}`, { token: merchant })).statusCode).toBe(200);

    const banner = (await demoBanner(h.deps))!;
    expect(banner).toContain(`client id ${demo.clientId}`);
    expect(banner).not.toMatch(/svcat_/);
    expect(banner).toContain('The demo app is not installed on the demo store');
    const after = (await h.req('GET', '/apps/installations', { token: merchant })).json().data.installations;
    expect(after.find((i: any) => i.appId === demo.appId).status).toBe('uninstalled');
  });
});
