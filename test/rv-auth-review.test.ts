// Review of accounts, apps and OAuth (rv-auth): bugs found by an adversarial review, each shown by
// a failing request first. Contract clauses are cited in the test names.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { createTestApp, installApp, signupMerchant, signupPartner, storeWithApp } from './helpers/actors.js';
import { insertProduct } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const uniq = () => randomBytes(5).toString('hex');

function expectEnvelope400(res: { statusCode: number; json(): any }, message: string) {
  expect(res.statusCode).toBe(400);
  expect(res.json()).toMatchObject({ status: 400, state: 'error', message, data: null });
}

describe('C2.1, C2.4 account texts are bounded: an over-long email is a 400, never a 500', () => {
  // A random (incompressible) local part: past about 2,700 bytes the unique index on lower(email)
  // cannot hold the value, and the insert failed as a 500 on both databases.
  const longEmail = () => `${randomBytes(1500).toString('hex')}@example.com`;

  it('signup (MERCHANT and PARTNER) with a 3,000-character email -> 400 envelope; nothing is created', async () => {
    const email = longEmail();
    for (const body of [
      { email, password: 'correct-horse', name: 'M', storeName: `Shop ${uniq()}` },
      { email, password: 'correct-horse', name: 'P', role: 'PARTNER' },
    ]) {
      const res = await h.req('POST', '/auth/signup', { body });
      expectEnvelope400(res, 'email must be at most 254 characters');
    }
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM users WHERE email = $1', [email]);
    expect(rows[0].n).toBe(0);
  });

  it('POST /stores/staff with a 3,000-character email -> 400 envelope', async () => {
    const m = await signupMerchant(h);
    const res = await h.req('POST', '/stores/staff', { token: m.token, body: { email: longEmail(), password: 'staff-password', name: 'S', role: 'MANAGER' } });
    expectEnvelope400(res, 'email must be at most 254 characters');
  });

  it('an email of 254 characters is taken; 255 is refused', async () => {
    const at = (n: number) => `${'a'.repeat(n - '@example.com'.length - 10)}${uniq()}@example.com`;
    expect(at(254)).toHaveLength(254);
    const ok = await h.req('POST', '/auth/signup', { body: { email: at(254), password: 'correct-horse', name: 'P', role: 'PARTNER' } });
    expect(ok.statusCode).toBe(201);
    const refused = await h.req('POST', '/auth/signup', { body: { email: at(255), password: 'correct-horse', name: 'P', role: 'PARTNER' } });
    expectEnvelope400(refused, 'email must be at most 254 characters');
  });

  it('name and storeName: 255 characters are taken, 256 -> 400 (they were stored at any length)', async () => {
    const name = (n: number) => 'N'.repeat(n);
    const ok = await h.req('POST', '/auth/signup', { body: { email: `m-${uniq()}@example.com`, password: 'correct-horse', name: name(255), storeName: `S${uniq()}${'s'.repeat(244)}` } });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().data.store.business).toHaveLength(255);
    expectEnvelope400(
      await h.req('POST', '/auth/signup', { body: { email: `m-${uniq()}@example.com`, password: 'correct-horse', name: name(256), storeName: 'Shop' } }),
      'name must be at most 255 characters',
    );
    expectEnvelope400(
      await h.req('POST', '/auth/signup', { body: { email: `m-${uniq()}@example.com`, password: 'correct-horse', name: 'M', storeName: 'S'.repeat(100_000) } }),
      'storeName must be at most 255 characters',
    );
    const m = await signupMerchant(h);
    expectEnvelope400(
      await h.req('POST', '/stores/staff', { token: m.token, body: { email: `s-${uniq()}@example.com`, password: 'staff-password', name: name(256), role: 'MANAGER' } }),
      'name must be at most 255 characters',
    );
  });
});

describe('C10.1 an installation removed while still pending was never installed: its first exchange starts the trial', () => {
  const paid = { pricing: { type: 'recurring', amount: '9.99', currency: 'USD', interval: 'month', trialDays: 14 } };

  it('authorize, remove the pending installation, install: trialing with trialEndsAt = install + 14 days', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, paid);
    const auth = await h.req('GET', `/apps/oauth/authorize?client_id=${app.clientId}`, { token: merchant.token });
    const { installationId } = auth.json().data;
    const removed = await h.req('DELETE', `/apps/installations/${installationId}`, { token: merchant.token });
    expect(removed.statusCode).toBe(200);
    expect(removed.json().data).toMatchObject({ status: 'uninstalled', billingStatus: 'none', trialEndsAt: null });

    await installApp(h, merchant, app);
    const now = h.clock.now().getTime();
    const [row] = (await h.req('GET', '/apps/installations', { token: merchant.token })).json().data.installations;
    expect(row).toMatchObject({ installationId, status: 'active', billingStatus: 'trialing' });
    // Before the fix: billingStatus "active", trialEndsAt null, billed from now.
    expect(new Date(row.trialEndsAt).getTime()).toBeGreaterThan(now + 13 * 86_400_000);
    expect(row.billingStartDate).toBe(row.trialEndsAt);
  });

  it('a real reinstall after a full uninstall still gets no second trial (decisions "Billing")', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, paid);
    const first = await installApp(h, merchant, app);
    const firstRow = (await h.req('GET', '/apps/installations', { token: merchant.token })).json().data.installations[0];
    expect(firstRow.billingStatus).toBe('trialing');
    expect((await h.req('DELETE', `/apps/installations/${first.installationId}`, { token: merchant.token })).statusCode).toBe(200);
    await installApp(h, merchant, app);
    // Reinstalled at once, inside the first trial: that trial goes on to its end, no new one
    // (docs/decisions.md, "OAuth races and the grant's end": a reinstall inside the first trial).
    const row = (await h.req('GET', '/apps/installations', { token: merchant.token })).json().data.installations[0];
    expect(row).toMatchObject({ status: 'active', billingStatus: 'trialing', trialEndsAt: firstRow.trialEndsAt, billingStartDate: firstRow.trialEndsAt });
  });
});

describe('RFC 6749 5.1: answers that carry a credential are marked Cache-Control: no-store, Pragma: no-cache', () => {
  const expectNoStore = (res: { statusCode: number; headers: Record<string, unknown> }, what: string) => {
    expect(res.headers['cache-control'], what).toBe('no-store');
    expect(res.headers.pragma, what).toBe('no-cache');
  };

  it('token endpoint (200 and errors), authorize, session token, signup, login, app create/get/patch/rotate', async () => {
    const s = await storeWithApp(h);
    const token = (body: Record<string, unknown>) => h.req('POST', '/apps/oauth/token', { body: { client_id: s.app.clientId, client_secret: s.app.clientSecret, ...body } });
    expectNoStore(await token({ grant_type: 'refresh_token', refresh_token: s.refreshToken }), 'refresh 200');
    expectNoStore(await token({ grant_type: 'nope' }), 'token 400');
    expectNoStore(await h.req('POST', '/apps/oauth/token', { body: { client_id: s.app.clientId, client_secret: 'wrong' } }), 'token 401');
    expectNoStore(await h.req('GET', `/apps/oauth/authorize?client_id=${s.app.clientId}`, { token: s.merchant.token }), 'authorize');
    expectNoStore(await h.req('GET', `/apps/session-token?client_id=${s.app.clientId}`, { token: s.merchant.token }), 'session token');

    const email = `m-${uniq()}@example.com`;
    const signup = await h.req('POST', '/auth/signup', { body: { email, password: 'correct-horse', name: 'M', storeName: `Shop ${uniq()}` } });
    expect(signup.statusCode).toBe(201);
    expectNoStore(signup, 'signup');
    expectNoStore(await h.req('POST', '/auth/login', { body: { email, password: 'correct-horse' } }), 'login');

    const created = await h.req('POST', '/apps/developer/apps', { token: s.partner.token, body: { name: `A ${uniq()}`, appUrl: 'https://app.example.com', scopes: ['read_orders'] } });
    expect(created.statusCode).toBe(201);
    expectNoStore(created, 'app create');
    const appId = created.json().data.app.appId;
    expectNoStore(await h.req('GET', `/apps/developer/apps/${appId}`, { token: s.partner.token }), 'app get');
    expectNoStore(await h.req('PATCH', `/apps/developer/apps/${appId}`, { token: s.partner.token, body: { tier: 'pro' } }), 'app patch');
    expectNoStore(await h.req('POST', `/apps/developer/apps/${appId}/rotate-secret`, { token: s.partner.token }), 'rotate');
  });

  it('a webhook signing secret (API subscription create, store webhook create and list) and a checkout (its token, the buyer) are no-store too', async () => {
    const s = await storeWithApp(h, { scopes: ['read_shop', 'read_products'] });
    const sub = await h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { webhook: { topic: 'products/update', address: 'https://example.com/hooks/p' } } });
    expect(sub.statusCode, sub.body).toBe(201);
    expectNoStore(sub, 'subscription create');
    const hook = await h.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'products/update', address: 'https://example.com/hooks/s' } });
    expect(hook.statusCode, hook.body).toBe(201);
    expectNoStore(hook, 'store webhook create');
    expectNoStore(await h.req('GET', '/webhooks', { token: s.merchant.token }), 'store webhook list');

    const product = await insertProduct(h, s.merchant.storeId);
    const checkout = await h.req('POST', `/storefront/${s.merchant.slug}/checkouts`, { body: { line_items: [{ product_id: product.id, quantity: 1 }] } });
    expect(checkout.statusCode, checkout.body).toBe(201);
    expectNoStore(checkout, 'checkout create');
    expectNoStore(await h.req('GET', `/storefront/${s.merchant.slug}/checkouts/${checkout.json().data.checkout.token}`), 'checkout read');
    expectNoStore(await h.req('GET', `/storefront/${s.merchant.slug}/checkouts/nope`), 'checkout 404');
  });
});

describe('C2.5, C14.9 a name without Latin letters or digits still makes a store and an app', () => {
  it('signup with storeName "Магазин" or "日本の店" -> 201, business as sent, slug store-<6 hex>, distinct', async () => {
    const slugs: string[] = [];
    for (const storeName of ['Магазин', '日本の店', '日本の店']) {
      const res = await h.req('POST', '/auth/signup', { body: { email: `m-${uniq()}@example.com`, password: 'correct-horse', name: 'Иван', storeName } });
      // Before the fix: 400 "storeName must contain letters or digits".
      expect(res.statusCode, storeName).toBe(201);
      const { store } = res.json().data;
      expect(store.business).toBe(storeName);
      expect(store.storeURL).toMatch(/^store-[0-9a-f]{6}$/);
      slugs.push(store.storeURL);
    }
    expect(new Set(slugs).size).toBe(3);
  });

  it('an app named "配送アプリ" -> 201 with handle app-<6 hex>; a handle given is still checked', async () => {
    const partner = await signupPartner(h);
    const res = await h.req('POST', '/apps/developer/apps', { token: partner.token, body: { name: '配送アプリ', appUrl: 'https://app.example.com', scopes: [] } });
    // Before the fix: 400 "name must contain letters or digits".
    expect(res.statusCode).toBe(201);
    expect(res.json().data.app).toMatchObject({ name: '配送アプリ', handle: expect.stringMatching(/^app-[0-9a-f]{6}$/) });
    const bad = await h.req('POST', '/apps/developer/apps', { token: partner.token, body: { name: '配送アプリ', handle: '配送', appUrl: 'https://app.example.com', scopes: [] } });
    expectEnvelope400(bad, 'handle must be lowercase letters, digits and -');
  });
});
