// The dashboard (issue 15) through `inject`: sign-in on the API's login service and throttle (C2.2),
// the session cookie and CSRF, the developer's pages for apps (C3), webhook deliveries (C8.5, C8.6)
// and function runs (C11.6, C11.7) on the same services as the API, and a tenant check over every
// page: another developer's app is "not found", never shown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { emitEvent, runDeliveries, subscribe, webhookStore } from './fixtures/webhook-setup.js';
import { createTestApp, installApp, signupMerchant, signupPartner, staffToken, unique } from './helpers/actors.js';
import { Browser, csrfOf } from './helpers/dashboard.js';
import { insertRuns } from '../src/functions/function-runs.repo.js';
import { uuidv7 } from '../src/ids.js';
import { routeTable } from '../src/surfaces/surface.js';
import { sessionCookieOptions } from '../src/dashboard/session.js';
import { runBillingCharges } from '../src/billing/charges.js';
import { dispatchPayouts, runPayoutSweep } from '../src/payouts/payouts.js';

let h: Harness;
let rx: Receiver;
beforeAll(async () => {
  h = await createWebhookHarness();
  rx = await startReceiver((req) => ({ status: req.path === '/fail' ? 500 : 200, body: `answer for ${req.path}` }));
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

const PASSWORD = 'correct-horse';

async function developer() {
  const partner = await signupPartner(h);
  const browser = new Browser(h);
  const signedIn = await browser.signIn(partner.email, PASSWORD);
  expect(signedIn.status, signedIn.html).toBe(303);
  return { partner, browser };
}

/** A developer's app with one function, installed on a store, and one recorded run of it. */
async function appWithRun(token: string) {
  const merchant = await signupMerchant(h);
  const app = await createTestApp(h, token, {
    extensions: { functions: [{ handle: 'v', title: 'Validate', target: 'cart.validations.generate.run', expression: '{"operations": []}' }] },
  });
  await installApp(h, merchant, app);
  const functionId = (await h.req('GET', '/functions', { token: merchant.token })).json().data.functions[0].functionId;
  const runId = uuidv7();
  await insertRuns(h.deps.db, [{
    id: runId, appId: app.appId, storeId: merchant.storeId, functionId, functionHandle: 'v', target: 'cart.validations.generate.run', status: 'success',
    errorType: null, errorMessage: null, input: { n: 2 }, inputBytes: 7, output: { operations: [] }, outputBytes: 17, durationMs: 3, checkoutId: null,
    checkoutTokenSealed: null, createdAt: new Date(h.clock.nowMs()),
  }]);
  return { app, runId };
}

describe('the dashboard is its own surface, hidden from the API reference', () => {
  it('every /dashboard route is in the dashboard surface and hidden; no other route is', async () => {
    const routes = routeTable(h.app);
    const pages = routes.filter((r) => r.url.startsWith('/dashboard'));
    expect(pages.length).toBeGreaterThan(10);
    expect(pages.filter((r) => r.surface !== 'dashboard' || !r.hidden || r.security !== null)).toEqual([]);
    expect(routes.filter((r) => r.surface === 'dashboard' && !r.url.startsWith('/dashboard'))).toEqual([]);
    const doc = (await h.req('GET', '/openapi.json')).json();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/dashboard'))).toEqual([]);
  });

  it('every page but the login page and the assets sends a visitor without a session to sign in', async () => {
    const visitor = new Browser(h);
    const open = ['/dashboard/login', '/dashboard/assets/'];
    const id = '0190a0a0-0000-7000-8000-000000000000';
    for (const r of routeTable(h.app).filter((x) => x.surface === 'dashboard' && x.method !== 'HEAD')) {
      if (open.some((p) => r.url.startsWith(p))) continue;
      const url = r.url.replace(/:\w+/g, id);
      const res = r.method === 'GET' ? await visitor.get(url) : await visitor.post(url, {});
      expect([r.method, r.url, res.status, res.location?.split('?')[0]]).toEqual([r.method, r.url, 303, '/dashboard/login']);
    }
    // Only the session cookie opens a page: a platform JWT in Authorization (the API's credential) does not.
    const partner = await signupPartner(h);
    const withBearer = await h.app.inject({ method: 'GET', url: '/dashboard/apps', headers: { authorization: `Bearer ${partner.token}` } });
    expect(withBearer.statusCode).toBe(303);
  });

  it('every form post: a field holding a NUL is a 400 page naming it, never a 500 (the input guard, as for JSON bodies)', async () => {
    const { browser: developerBrowser } = await developer();
    const { browser: merchant } = await merchantBrowser();
    const id = '0190a0a0-0000-7000-8000-000000000000';
    const token = csrfOf((await developerBrowser.get('/dashboard/apps')).html);
    const merchantToken = csrfOf((await merchant.get('/dashboard/store/functions')).html);
    const posts = routeTable(h.app).filter((x) => x.surface === 'dashboard' && x.method === 'POST');
    expect(posts.length).toBeGreaterThan(5);
    for (const r of posts) {
      const url = r.url.replace(/:\w+/g, id);
      // (An unpaired surrogate cannot arrive in a form: URL-encoded as UTF-8 it is decoded as U+FFFD.)
      for (const [form, text] of Object.entries({ nul: 'a\u0000b' })) {
        const asDeveloper = await developerBrowser.post(url, { _csrf: token, note: text });
        const asMerchant = await merchant.post(url, { _csrf: merchantToken, note: text });
        const statuses = [asDeveloper.status, asMerchant.status];
        // Each page refuses the other role before reading its form; the role it is for gets the 400.
        expect([r.url, form, statuses.includes(400), statuses.every((st) => st < 500)]).toEqual([r.url, form, true, true]);
        const refused = asDeveloper.status === 400 ? asDeveloper : asMerchant;
        expect(refused.html).toContain('note must not contain NUL characters or unpaired UTF-16 surrogates');
      }
    }
  });

  it('JSON inside a form field (an app\'s functions, a function\'s configuration) is held to the same rule: 400 next to the field', async () => {
    const { browser } = await developer();
    const base = { name: `Guarded ${unique()}`, appUrl: 'https://app.example.com', scopes: ['read_products'], tier: 'basic', version: '1.0.0', pricingType: 'free' };
    const functions = JSON.stringify([{ handle: 'f', target: 'cart.validations.generate.run', expression: '{"operations": []}', configuration: { limit: 'a\u0000' } }]);
    const res = await browser.submit('/dashboard/apps/new', '/dashboard/apps', { ...base, functions });
    expect(res.status).toBe(400);
    expect(res.html).toContain('id="functions-error">extensions.functions[0].configuration.limit must not contain NUL characters or unpaired UTF-16 surrogates');
    expect((await browser.get('/dashboard/apps')).html).not.toContain(base.name);
  });

  it('pages carry a strict content security policy and the usual headers; the JSON API does not change', async () => {
    const page = await new Browser(h).get('/dashboard/login');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(page.html).toContain('<script src="/dashboard/assets/htmx.min.js" defer></script>');
    const htmx = await new Browser(h).get('/dashboard/assets/htmx.min.js');
    expect(htmx.status).toBe(200);
    expect(htmx.headers['content-type']).toMatch(/javascript/);
    const api = await h.req('GET', '/healthz');
    expect(api.headers['content-security-policy']).toBeUndefined();
    expect(api.headers['x-frame-options']).toBeUndefined();
  });
});

describe('sign-in (C2.2) and sign-out', () => {
  it('signs in with the same accounts as POST /auth/login; the cookie carries that login and no more', async () => {
    const partner = await signupPartner(h);
    const browser = new Browser(h);
    const wrong = await browser.signIn(partner.email, 'wrong-password');
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain('Invalid email or password');
    expect(wrong.html).toContain(`value="${partner.email}"`);

    const res = await browser.signIn(partner.email, PASSWORD);
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard');
    const cookie = ([] as string[]).concat(res.headers['set-cookie'] as string[]).find((c) => c.startsWith('svc_session='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\/dashboard/);
    expect(cookie).toMatch(/; Max-Age=43200/); // C2.3: the JWT's 12 hours
    expect(cookie).not.toMatch(/; Secure/); // development config: plain HTTP
    expect(sessionCookieOptions(true, 60)).toMatchObject({ secure: true, httpOnly: true, sameSite: 'lax', path: '/dashboard' });
    // The cookie's value is the platform JWT of that login: the API takes it for what it is.
    const jwt = browser.cookies.get('svc_session')!;
    expect((await h.req('GET', '/apps/developer/apps', { token: jwt })).statusCode).toBe(200);
    const apps = await browser.get('/dashboard');
    expect(apps.location).toBe('/dashboard/apps');
  });

  it('a page asked for before signing in is where sign-in leads; never to another site', async () => {
    const partner = await signupPartner(h);
    const browser = new Browser(h);
    const first = await browser.get('/dashboard/apps/new');
    expect(first.location).toBe('/dashboard/login?next=%2Fdashboard%2Fapps%2Fnew');
    const login = await browser.get(first.location!);
    expect(login.html).toContain('name="next" value="/dashboard/apps/new"');
    const res = await browser.post('/dashboard/login', { _csrf: csrfOf(login.html), email: partner.email, password: PASSWORD, next: '/dashboard/apps/new' });
    expect(res.location).toBe('/dashboard/apps/new');
    const other = new Browser(h);
    const evil = await other.post('/dashboard/login', { _csrf: csrfOf((await other.get('/dashboard/login')).html), email: partner.email, password: PASSWORD, next: '//evil.example.com/x' });
    expect(evil.location).toBe('/dashboard');
  });

  it('failed logins are throttled with the API\'s own counter (5 per account), answering 429 with Retry-After', async () => {
    const partner = await signupPartner(h);
    for (let i = 0; i < 3; i++) expect((await h.req('POST', '/auth/login', { body: { email: partner.email, password: 'nope-nope' } })).statusCode).toBe(401);
    const browser = new Browser(h);
    expect((await browser.signIn(partner.email, 'nope-nope')).status).toBe(401);
    expect((await browser.signIn(partner.email, 'nope-nope')).status).toBe(401);
    const locked = await browser.signIn(partner.email, PASSWORD);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect(locked.html).toContain('Too many failed login attempts');
    expect((await h.req('POST', '/auth/login', { body: { email: partner.email, password: PASSWORD } })).statusCode).toBe(429);
  });

  it('CSRF: a form without the token, or with another session\'s, is refused and changes nothing', async () => {
    const partner = await signupPartner(h);
    const noToken = new Browser(h);
    await noToken.get('/dashboard/login');
    const refusedLogin = await noToken.post('/dashboard/login', { email: partner.email, password: PASSWORD });
    expect(refusedLogin.status).toBe(403);
    expect(noToken.cookies.has('svc_session')).toBe(false);

    const { browser } = await developer();
    const { browser: other } = await developer();
    const otherToken = csrfOf((await other.get('/dashboard/apps/new')).html);
    const form = { name: `Forged ${unique()}`, appUrl: 'https://app.example.com', scopes: 'read_products' };
    expect((await browser.post('/dashboard/apps', form)).status).toBe(403);
    const forged = await browser.post('/dashboard/apps', { ...form, _csrf: otherToken });
    expect(forged.status).toBe(403);
    expect(forged.html).toContain('This form has expired');
    expect((await browser.post('/dashboard/logout', {})).status).toBe(403);
    const list = await browser.get('/dashboard/apps');
    expect(list.html).not.toContain(form.name);
    expect(list.html).toContain('No apps yet');
  });

  it('sign-out clears the session cookie; the pages then ask to sign in again', async () => {
    const { browser } = await developer();
    const out = await browser.submit('/dashboard/apps', '/dashboard/logout', {});
    expect(out.status).toBe(303);
    expect(out.location).toBe('/dashboard/login?signed_out=1');
    expect(String(out.headers['set-cookie'])).toMatch(/svc_session=;/);
    expect(browser.cookies.has('svc_session')).toBe(false);
    expect((await browser.get('/dashboard/apps')).status).toBe(303);
    expect((await browser.get('/dashboard/login?signed_out=1')).html).toContain('You are signed out.');
  });

  it('an expired session (the JWT\'s 12 hours) is no session', async () => {
    const { browser } = await developer();
    expect((await browser.get('/dashboard/apps')).status).toBe(200);
    h.clock.advance(12 * 3600 + 60); // this process only: other test files share the database
    expect((await browser.get('/dashboard/apps')).status).toBe(303);
  });

  it('developer pages are for MERCHANT and PARTNER: store staff are refused (403)', async () => {
    const merchant = await signupMerchant(h);
    await staffToken(h, merchant, 'STAFF_ADMIN');
    const { rows } = await h.db.query<{ email: string }>(`SELECT email FROM users WHERE store_id = $1 AND role = 'STAFF_ADMIN'`, [merchant.storeId]);
    const staff = new Browser(h);
    expect((await staff.signIn(rows[0].email, 'staff-password')).status).toBe(303);
    expect((await staff.get('/dashboard')).location).toBe('/dashboard/store/apps'); // their store's pages
    expect((await staff.get('/dashboard/store/apps')).status).toBe(200);
    const refused = await staff.get('/dashboard/apps');
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('This page is for merchant or partner accounts.');
    // A merchant is a developer too (C2).
    const owner = new Browser(h);
    await owner.signIn(merchant.email, PASSWORD);
    expect((await owner.get('/dashboard/apps')).status).toBe(200);
  });
});

describe('apps (C3)', () => {
  it('creates an app through the form, validated as the API validates, errors next to their field', async () => {
    const { partner, browser } = await developer();
    const empty = await browser.get('/dashboard/apps');
    expect(empty.html).toContain('No apps yet');
    expect(empty.html).toContain('href="/dashboard/apps/new"');

    const name = `Form App ${unique()}`;
    const base = { name, appUrl: 'http://', scopes: ['read_products', 'read_orders'], tier: 'basic', version: '1.0.0', pricingType: 'free' };
    const badUrl = await browser.submit('/dashboard/apps/new', '/dashboard/apps', base);
    expect(badUrl.status).toBe(400);
    // The API's own words for the same body.
    const api = await h.req('POST', '/apps/developer/apps', { token: partner.token, body: { name, appUrl: 'http://', scopes: ['read_products'] } });
    expect(api.statusCode).toBe(400);
    const words = api.json().message as string;
    expect(badUrl.html).toContain(`<p class="field-error" id="appUrl-error">${words}</p>`);
    expect(badUrl.html).toMatch(/id="appUrl"[^>]*aria-invalid="true" aria-describedby="appUrl-hint appUrl-error"/);
    expect(badUrl.html).toContain(`value="${name}"`); // what was typed is kept

    const badFunction = await browser.submit('/dashboard/apps/new', '/dashboard/apps', {
      ...base, appUrl: 'https://app.example.com', functions: JSON.stringify([{ handle: 'f', target: 'cart.validations.generate.run', expression: '{"a": ' }]),
    });
    expect(badFunction.status).toBe(400);
    expect(badFunction.html).toMatch(/id="functions-error">extensions\.functions\[0\] \(f\): [^<]*parse/);
    const badJson = await browser.submit('/dashboard/apps/new', '/dashboard/apps', { ...base, appUrl: 'https://app.example.com', functions: '[{' });
    expect(badJson.html).toContain('id="functions-error">extensions.functions is not valid JSON');
    const badPrice = await browser.submit('/dashboard/apps/new', '/dashboard/apps', { ...base, appUrl: 'https://app.example.com', pricingType: 'recurring', amount: '9.999', currency: 'USD', interval: 'month' });
    expect(badPrice.html).toContain('id="amount-error">pricing.amount');

    const created = await browser.submit('/dashboard/apps/new', '/dashboard/apps', {
      ...base, appUrl: 'https://app.example.com', pricingType: 'recurring', amount: '9.99', currency: 'usd', interval: 'month', trialDays: '14',
      webhooks: 'orders/create https://hooks.example.com/orders', ratesUrl: 'https://rates.example.com/quote',
      functions: JSON.stringify([{ handle: 'hide-slow', target: 'cart.delivery-options.transform.run', expression: '{"operations": []}' }]),
    });
    expect(created.status, created.html).toBe(303);
    const appId = /\/dashboard\/apps\/([0-9a-f-]+)\?created=1$/.exec(created.location!)![1];
    const fromApi = (await h.req('GET', `/apps/developer/apps/${appId}`, { token: partner.token })).json().data.app;
    expect(fromApi).toMatchObject({
      name, tier: 'basic', scopes: ['read_products', 'read_orders'],
      pricing: { type: 'recurring', amount: '9.99', currency: 'USD', interval: 'month', trialDays: 14 },
      extensions: { webhooks: [{ topic: 'orders/create', uri: 'https://hooks.example.com/orders' }], shipping: { ratesUrl: 'https://rates.example.com/quote' }, functions: [{ handle: 'hide-slow' }] },
    });
    const page = await browser.get(created.location!);
    expect(page.html).toContain('App created.');
    // Client id and secret as the API shows them on the app's own read.
    expect(page.html).toContain(`<code id="client-id">${fromApi.clientId}</code>`);
    expect(page.html).toContain(`<code id="client-secret">${fromApi.clientSecret}</code>`);
    expect(page.html).toContain('$9.99'); // money with its currency
    const list = await browser.get('/dashboard/apps');
    expect(list.html).toContain(name);
    expect(list.html).not.toContain(fromApi.clientSecret); // never in a list, as the API's list
  });

  it('edits an app: the form shows the manifest; a taken handle (409) or an unknown scope is shown next to its field', async () => {
    const { partner, browser } = await developer();
    const taken = await createTestApp(h, partner.token);
    const app = await createTestApp(h, partner.token, { extensions: { webhooks: [{ topic: 'products/create', uri: 'https://hooks.example.com/p' }] } });
    const edit = await browser.get(`/dashboard/apps/${app.appId}/edit`);
    expect(edit.status).toBe(200);
    expect(edit.html).toContain('products/create https://hooks.example.com/p</textarea>');
    expect(edit.html).toMatch(/id="scope-read_products" name="scopes" value="read_products" checked/);

    const form = { name: 'Renamed app', appUrl: 'https://app.example.com', scopes: ['read_products'], tier: 'pro', version: '2.0.0', pricingType: 'free', webhooks: '' };
    const clash = await browser.submit(`/dashboard/apps/${app.appId}/edit`, `/dashboard/apps/${app.appId}`, { ...form, handle: taken.handle });
    expect(clash.status).toBe(409);
    expect(clash.html).toContain(`id="handle-error">handle &quot;${taken.handle}&quot; is already taken`);
    const unknownScope = await browser.submit(`/dashboard/apps/${app.appId}/edit`, `/dashboard/apps/${app.appId}`, { ...form, scopes: ['read_products', 'read_everything'] });
    expect(unknownScope.status).toBe(400);
    expect(unknownScope.html).toContain('id="scopes-error">unknown scope: read_everything');

    const saved = await browser.submit(`/dashboard/apps/${app.appId}/edit`, `/dashboard/apps/${app.appId}`, { ...form, handle: app.handle });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/dashboard/apps/${app.appId}?saved=1`);
    const after = (await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: partner.token })).json().data.app;
    expect(after).toMatchObject({ name: 'Renamed app', handle: app.handle, tier: 'pro', version: '2.0.0', scopes: ['read_products'] });
    // The cleared webhooks field removes the app's webhooks (sent as null: the API merges extensions by key).
    expect(after.extensions).toEqual({});
  });

  it('rotates the secret after a confirmation page; the old secret stops working', async () => {
    const { partner, browser } = await developer();
    const app = await createTestApp(h, partner.token);
    const confirm = await browser.get(`/dashboard/apps/${app.appId}/rotate-secret`);
    expect(confirm.html).toContain('the old one stops working at once');
    const rotated = await browser.post(`/dashboard/apps/${app.appId}/rotate-secret`, { _csrf: csrfOf(confirm.html) });
    expect(rotated.location).toBe(`/dashboard/apps/${app.appId}?rotated=1`);
    const secret = (await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: partner.token })).json().data.app.clientSecret;
    expect(secret).not.toBe(app.clientSecret);
    const page = await browser.get(rotated.location!);
    expect(page.html).toContain(`<code id="client-secret">${secret}</code>`);
    expect(page.html).toContain('the old secret no longer works');
  });

  it('pages the list of apps', async () => {
    const { partner, browser } = await developer();
    for (let i = 0; i < 3; i++) await createTestApp(h, partner.token);
    const first = await browser.get('/dashboard/apps?limit=2');
    expect(first.html).toContain('3 in all · page 1 of 2');
    // The link keeps the page size it was opened with (test/dashboard-edge-cases.test.ts).
    expect(first.html).toContain('href="/dashboard/apps?limit=2&amp;page=2" rel="next"');
    expect((first.html.match(/<tr>/g) ?? []).length).toBe(3); // header row and two apps
  });
});

describe('webhook deliveries (C8.5, C8.6)', () => {
  it('shows the last 7 days\' stats, the log filtered and paged, a delivery with bodies and attempts, and redelivers it', async () => {
    const s = await webhookStore(h);
    const browser = new Browser(h);
    expect((await browser.signIn(s.partner.email, PASSWORD)).status).toBe(303);
    const base = `/dashboard/apps/${s.app.appId}/deliveries`;
    const none = await browser.get(base);
    expect(none.html).toContain('No deliveries yet.');

    await subscribe(h, s.accessToken, 'orders/create', `${rx.url}/ok`);
    await subscribe(h, s.accessToken, 'orders/paid', `${rx.url}/fail`);
    await emitEvent(h, s.merchant.storeId, 'orders/create', { id: 1, name: '#1001' });
    await emitEvent(h, s.merchant.storeId, 'orders/paid', { id: 1 });
    await runDeliveries(h);

    const page = await browser.get(base);
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/<dt>Total<\/dt><dd>2<\/dd>/);
    expect(page.html).toMatch(/<dt>Succeeded<\/dt><dd>1<\/dd>/);
    expect(page.html).toMatch(/<dt>Retrying<\/dt><dd>1<\/dd>/);
    expect(page.html).toMatch(/<dt>p90 response time<\/dt><dd>\d+ ms<\/dd>/);
    expect(page.html).toContain('orders/paid');
    expect(page.html).toContain('orders/create');

    const retrying = await browser.get(`${base}?status=retrying`);
    expect(retrying.html).toContain('orders/paid');
    expect(retrying.html).not.toContain('>orders/create</a>');
    const byTopic = await browser.get(`${base}?topic=orders/create`);
    expect(byTopic.html).toContain('>orders/create</a>');
    expect(byTopic.html).not.toContain('>orders/paid</a>');
    const nothing = await browser.get(`${base}?status=failed`);
    expect(nothing.html).toContain('No delivery matches these filters.');
    expect((await browser.get(`${base}?status=bogus`)).status).toBe(400);
    const paged = await browser.get(`${base}?limit=1&page=2`);
    expect(paged.html).toContain('2 in all · page 2 of 2');
    expect(paged.html).toContain('>orders/create</a>');

    const { deliveries } = (await h.req('GET', `/apps/developer/${s.app.appId}/webhook-deliveries?topic=orders/paid`, { token: s.partner.token })).json().data;
    const failed = deliveries[0];
    const one = await browser.get(`${base}/${failed.deliveryId}`);
    expect(one.html).toContain('answer for /fail');
    expect(one.html).toContain('&quot;id&quot;: 1'); // the request body, pretty JSON
    expect(one.html).toContain(`X-SVC-Webhook-Id: ${failed.webhookId}`);
    expect(one.html).toMatch(/<td>1<\/td><td><time datetime="[^"]+">[^<]+<\/time><\/td><td>\d+ ms<\/td><td>500<\/td>/);

    const again = await browser.post(`${base}/${failed.deliveryId}/redeliver`, { _csrf: csrfOf(one.html) });
    expect(again.status).toBe(303);
    expect(again.location).toBe(`${base}/${failed.deliveryId}?redelivered=1`);
    await runDeliveries(h);
    const after = await browser.get(again.location!);
    expect(after.html).toContain('Redelivery queued');
    expect((await h.req('GET', `/apps/developer/${s.app.appId}/webhook-deliveries/${failed.deliveryId}`, { token: s.partner.token })).json().data.delivery.attemptCount).toBe(2);
    expect(after.html).toMatch(/<td>2<\/td><td><time/);
  });
});

describe('function runs (C11.6, C11.7)', () => {
  it('lists runs filtered by function and status, shows a run, and replays it with an edited expression', async () => {
    const { partner, browser } = await developer();
    const { app, runId } = await appWithRun(partner.token);
    const base = `/dashboard/apps/${app.appId}/runs`;
    const list = await browser.get(base);
    expect(list.status).toBe(200);
    expect(list.html).toContain(`href="${base}/v/${runId}"`);
    expect(list.html).toContain('<option value="v">Validate (cart.validations.generate.run)</option>');
    expect((await browser.get(`${base}?function=v&status=success`)).html).toContain(runId);
    expect((await browser.get(`${base}?status=failure`)).html).toContain('No run matches these filters.');
    expect((await browser.get(`${base}?function=nope`)).status).toBe(404);
    expect((await browser.get(`${base}?status=bogus`)).status).toBe(400);

    const run = await browser.get(`${base}/v/${runId}`);
    expect(run.html).toContain('&quot;n&quot;: 2');
    expect(run.html).toContain('{&quot;operations&quot;: []}</textarea>');
    expect(run.html).toContain('3 ms');

    const expression = '{"operations": [{"validationAdd": {"errors": [{"message": "n is " + string(int(input.n)), "target": "cart"}]}}]}';
    const replayed = await browser.post(`${base}/v/${runId}/replay`, { _csrf: csrfOf(run.html), expression });
    expect(replayed.status).toBe(200);
    expect(replayed.html).toContain('Outcome: <span class="status status-success">success</span>');
    expect(replayed.html).toContain('n is 2');
    const broken = await browser.post(`${base}/v/${runId}/replay`, { _csrf: csrfOf(run.html), expression: '(' });
    expect(broken.status).toBe(400);
    expect(broken.html).toMatch(/id="expression-error">[^<]*does not parse/);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM function_runs WHERE app_id = $1', [app.appId]);
    expect(rows[0].n).toBe(1); // replays are not recorded

    const empty = await createTestApp(h, partner.token);
    expect((await browser.get(`/dashboard/apps/${empty.appId}/runs`)).html).toContain('This app declares no functions.');
  });
});

describe('tenants: no page shows another developer\'s app, deliveries or runs', () => {
  it('every app page of another developer is "not found" (404), as an unknown one; nothing changes', async () => {
    const owner = await webhookStore(h);
    await subscribe(h, owner.accessToken, 'orders/create', `${rx.url}/ok`);
    await emitEvent(h, owner.merchant.storeId, 'orders/create', { id: 9 });
    await runDeliveries(h);
    const { deliveries } = (await h.req('GET', `/apps/developer/${owner.app.appId}/webhook-deliveries`, { token: owner.partner.token })).json().data;
    const { app: fnApp, runId } = await appWithRun(owner.partner.token);
    const secret = (await h.req('GET', `/apps/developer/apps/${owner.app.appId}`, { token: owner.partner.token })).json().data.app.clientSecret;

    const { browser: stranger } = await developer();
    const token = csrfOf((await stranger.get('/dashboard/apps')).html);
    const a = owner.app.appId;
    const d = deliveries[0].deliveryId;
    const unknown = '0190a0a0-0000-7000-8000-000000000000';
    const gets = [
      `/dashboard/apps/${a}`, `/dashboard/apps/${a}/edit`, `/dashboard/apps/${a}/rotate-secret`,
      `/dashboard/apps/${a}/deliveries`, `/dashboard/apps/${a}/deliveries/${d}`,
      `/dashboard/apps/${fnApp.appId}/runs`, `/dashboard/apps/${fnApp.appId}/runs/v/${runId}`,
      `/dashboard/apps/${unknown}`, `/dashboard/apps/${a}/deliveries/${unknown}`, `/dashboard/apps/not-a-uuid/runs`,
    ];
    for (const url of gets) {
      const res = await stranger.get(url);
      expect([url, res.status]).toEqual([url, 404]);
      expect(res.html).not.toContain(secret);
    }
    const posts: [string, Record<string, string>][] = [
      [`/dashboard/apps/${a}`, { name: 'Hijacked', appUrl: 'https://evil.example.com', scopes: 'read_orders' }],
      [`/dashboard/apps/${a}/rotate-secret`, {}],
      [`/dashboard/apps/${a}/deliveries/${d}/redeliver`, {}],
      [`/dashboard/apps/${fnApp.appId}/runs/v/${runId}/replay`, { expression: '1' }],
    ];
    for (const [url, form] of posts) {
      const res = await stranger.post(url, { _csrf: token, ...form });
      expect([url, res.status]).toEqual([url, 404]);
    }
    const after = (await h.req('GET', `/apps/developer/apps/${a}`, { token: owner.partner.token })).json().data.app;
    expect(after.name).not.toBe('Hijacked');
    expect(after.clientSecret).toBe(secret);
    expect((await h.req('GET', `/apps/developer/${a}/webhook-deliveries/${d}`, { token: owner.partner.token })).json().data.delivery.attemptCount).toBe(1);
    // And their own list shows none of it.
    expect((await stranger.get('/dashboard/apps')).html).not.toContain(a);
  });
});

/** A merchant signed in to the dashboard, with the API-side actor. */
async function merchantBrowser() {
  const merchant = await signupMerchant(h);
  const browser = new Browser(h);
  expect((await browser.signIn(merchant.email, PASSWORD)).status).toBe(303);
  return { merchant, browser };
}

const unescapeHtml = (s: string) => s.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'");

describe('merchant pages: installed apps (C4.1, C4.7)', () => {
  it('starts an install (the page says where the merchant goes next), lists the installation, and uninstalls it after a confirmation', async () => {
    const { merchant, browser } = await merchantBrowser();
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { name: `Installable ${unique()}` });

    const empty = await browser.get('/dashboard/store/apps');
    expect(empty.status).toBe(200);
    expect(empty.html).toContain('No apps installed');
    const unknown = await browser.submit('/dashboard/store/apps', '/dashboard/store/apps/install', { clientId: 'svcapp_nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.html).toContain('id="clientId-error">Unknown client_id');

    const next = await browser.submit('/dashboard/store/apps', '/dashboard/store/apps/install', { clientId: app.clientId });
    expect(next.status).toBe(200);
    const href = unescapeHtml(/id="continue" href="([^"]+)"/.exec(next.html)![1]);
    const handoff = new URL(href);
    expect(handoff.origin).toBe('https://app.example.com'); // the app's own site, with the signed handoff (C4.2)
    expect(handoff.searchParams.get('hmac')).toBeTruthy();
    expect(handoff.searchParams.get('shop')).toBe(merchant.slug);
    // The app finishes the install as it would from that handoff (C4.4).
    const token = await h.req('POST', '/apps/oauth/token', {
      body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'authorization_code', code: handoff.searchParams.get('code'), state: handoff.searchParams.get('state') },
    });
    expect(token.statusCode, token.body).toBe(200);

    const list = await browser.get('/dashboard/store/apps');
    expect(list.html).toContain('Installable');
    expect(list.html).toContain('<span class="status status-active">active</span>');
    const installationId = /\/dashboard\/store\/apps\/([0-9a-f-]+)\/uninstall/.exec(list.html)![1];
    const confirm = await browser.get(`/dashboard/store/apps/${installationId}/uninstall`);
    expect(confirm.html).toContain('Its access tokens stop working at once');
    // Another store's merchant is told "not found" (the API's route says 403, C7.1), and nothing changes.
    const { browser: stranger } = await merchantBrowser();
    const strangerPage = await stranger.get('/dashboard/store/apps');
    expect((await stranger.post(`/dashboard/store/apps/${installationId}/uninstall`, { _csrf: csrfOf(strangerPage.html) })).status).toBe(404);
    const done = await browser.post(`/dashboard/store/apps/${installationId}/uninstall`, { _csrf: csrfOf(confirm.html) });
    expect(done.location).toBe('/dashboard/store/apps?uninstalled=1');
    const after = await browser.get(done.location!);
    expect(after.html).toContain('App uninstalled');
    expect(after.html).toContain('<span class="status status-uninstalled">uninstalled</span>');
    const api = (await h.req('GET', '/apps/installations', { token: merchant.token })).json().data.installations;
    expect(api.map((i: { status: string }) => i.status)).toEqual(['uninstalled']);
    expect((await h.req('GET', '/api/v1/products.json', { token: token.json().data.access_token })).statusCode).toBe(401);
    expect((await browser.get(`/dashboard/store/apps/${installationId}/uninstall`)).status).toBe(404);
  });
});

describe('merchant pages: functions (C11.2)', () => {
  it('activates, deactivates and configures a function, with the service\'s errors next to the field', async () => {
    const { merchant, browser } = await merchantBrowser();
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, {
      extensions: { functions: [{ handle: 'hider', title: 'Hide slow', target: 'cart.delivery-options.transform.run', expression: '{"operations": []}', configuration: { hide: 'x' } }] },
    });
    expect((await browser.get('/dashboard/store/functions')).html).toContain('No functions yet.');
    await installApp(h, merchant, app);
    const apiFunctions = async () => (await h.req('GET', '/functions', { token: merchant.token })).json().data.functions;
    const [fn] = await apiFunctions();

    const list = await browser.get('/dashboard/store/functions');
    expect(list.html).toContain('Hide slow');
    const wasActive = fn.active as boolean;
    const toggle = await browser.post(`/dashboard/store/functions/${fn.functionId}/active`, { _csrf: csrfOf(list.html), active: String(!wasActive) });
    expect(toggle.location).toBe('/dashboard/store/functions');
    expect((await apiFunctions())[0].active).toBe(!wasActive);
    await browser.post(`/dashboard/store/functions/${fn.functionId}/active`, { _csrf: csrfOf(list.html), active: String(wasActive) });
    expect((await apiFunctions())[0].active).toBe(wasActive);

    const edit = await browser.get(`/dashboard/store/functions/${fn.functionId}`);
    expect(edit.html).toContain('&quot;hide&quot;: &quot;x&quot;');
    const notJson = await browser.post(`/dashboard/store/functions/${fn.functionId}/configuration`, { _csrf: csrfOf(edit.html), configuration: '{oops' });
    expect(notJson.status).toBe(400);
    expect(notJson.html).toContain('id="configuration-error">configuration is not valid JSON');
    const notObject = await browser.post(`/dashboard/store/functions/${fn.functionId}/configuration`, { _csrf: csrfOf(edit.html), configuration: '[1]' });
    expect(notObject.status).toBe(400);
    // The API's own words for the same configuration.
    const apiWords = (await h.req('PATCH', `/functions/${fn.functionId}`, { token: merchant.token, body: { configuration: [1] } })).json().message;
    expect(notObject.html).toContain(`id="configuration-error">${apiWords}`);
    // JSON text inside the field is held to the input guard, as the API's JSON body is.
    const unstorable = await browser.post(`/dashboard/store/functions/${fn.functionId}/configuration`, { _csrf: csrfOf(edit.html), configuration: '{"hide": "a\\u0000"}' });
    expect(unstorable.status).toBe(400);
    expect(unstorable.html).toContain('id="configuration-error">configuration.hide must not contain NUL characters or unpaired UTF-16 surrogates');
    const saved = await browser.post(`/dashboard/store/functions/${fn.functionId}/configuration`, { _csrf: csrfOf(edit.html), configuration: '{"hide": "y"}' });
    expect(saved.location).toBe(`/dashboard/store/functions/${fn.functionId}?saved=1`);
    expect((await apiFunctions())[0].configuration).toEqual({ hide: 'y' });
    await browser.post(`/dashboard/store/functions/${fn.functionId}/configuration`, { _csrf: csrfOf(edit.html), reset: '1', configuration: '' });
    expect((await apiFunctions())[0].configuration).toEqual({ hide: 'x' });
  });
});

describe('merchant pages: GDPR requests (C9.1)', () => {
  it('files the three kinds, lists them with filters, and shows a request with each app\'s state and the deadlines', async () => {
    const { merchant, browser } = await merchantBrowser();
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { name: `GDPR App ${unique()}` });
    await installApp(h, merchant, app);
    expect((await browser.get('/dashboard/store/gdpr')).html).toContain('No GDPR requests yet.');

    const nothing = await browser.submit('/dashboard/store/gdpr', '/dashboard/store/gdpr/data-request', {});
    expect(nothing.status).toBe(400);
    const apiWords = (await h.req('POST', '/apps/gdpr/data-request', { token: merchant.token, body: {} })).json().message;
    expect(nothing.html).toContain(`id="data-request-error">${apiWords}`);
    // The refused form comes back as sent: the orders box unticked as it was, ticked when it was.
    expect(nothing.html).toMatch(/<input id="dr-orders" name="ordersRequested" type="checkbox">/);
    const ticked = await browser.submit('/dashboard/store/gdpr', '/dashboard/store/gdpr/data-request', { ordersRequested: 'on' });
    expect(ticked.status).toBe(400);
    expect(ticked.html).toMatch(/<input id="dr-orders" name="ordersRequested" type="checkbox" checked>/);
    expect((await browser.get('/dashboard/store/gdpr')).html).toMatch(/<input id="dr-orders" name="ordersRequested" type="checkbox" checked>/);
    const noConfirm = await browser.submit('/dashboard/store/gdpr', '/dashboard/store/gdpr/shop-redact', {});
    expect(noConfirm.status).toBe(400);
    expect(noConfirm.html).toContain('id="shop-redact-error">confirm');

    const filed = await browser.submit('/dashboard/store/gdpr', '/dashboard/store/gdpr/data-request', { customerEmail: 'buyer@example.com', ordersRequested: 'on' });
    expect(filed.status).toBe(303);
    const requestId = /\/dashboard\/store\/gdpr\/([0-9a-f-]+)\?created=1$/.exec(filed.location!)![1];
    const one = await browser.get(filed.location!);
    expect(one.html).toContain('Request filed');
    expect(one.html).toContain('buyer@example.com');
    expect(one.html).toContain('GDPR App');
    expect(one.html).toMatch(/<dt>Complete by<\/dt><dd><time datetime="[^"]+">/);
    const redact = await browser.submit('/dashboard/store/gdpr', '/dashboard/store/gdpr/customer-redact', { customerEmail: 'gone@example.com' });
    expect(redact.status).toBe(303);

    const all = await browser.get('/dashboard/store/gdpr');
    expect(all.html).toContain('>data_request</a>');
    expect(all.html).toContain('>customer_redact</a>');
    const onlyData = await browser.get('/dashboard/store/gdpr?requestType=data_request');
    expect(onlyData.html).toContain(`href="/dashboard/store/gdpr/${requestId}"`);
    expect(onlyData.html).not.toContain('>customer_redact</a>');
    expect((await browser.get('/dashboard/store/gdpr?status=failed')).html).toContain('No request matches these filters.');
    const api = (await h.req('GET', '/apps/gdpr/requests', { token: merchant.token })).json().data.requests;
    expect(api.map((r: { requestType: string }) => r.requestType).sort()).toEqual(['customer_redact', 'data_request']);
  });
});

describe('tenants: no merchant page shows another store\'s installations, functions or requests', () => {
  it('another store\'s installation, function and GDPR request are "not found" (404) on every page and form; a partner has no store pages (403)', async () => {
    const owner = await merchantBrowser();
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { extensions: { functions: [{ handle: 'v', target: 'cart.validations.generate.run', expression: '{"operations": []}' }] } });
    const { installationId } = await installApp(h, owner.merchant, app);
    const [fn] = (await h.req('GET', '/functions', { token: owner.merchant.token })).json().data.functions;
    const filed = await owner.browser.submit('/dashboard/store/gdpr', '/dashboard/store/gdpr/data-request', { customerEmail: 'secret-buyer@example.com' });
    const requestId = /gdpr\/([0-9a-f-]+)\?/.exec(filed.location!)![1];

    const { browser: stranger } = await merchantBrowser();
    const token = csrfOf((await stranger.get('/dashboard/store/apps')).html);
    for (const url of [`/dashboard/store/apps/${installationId}/uninstall`, `/dashboard/store/functions/${fn.functionId}`, `/dashboard/store/gdpr/${requestId}`]) {
      const res = await stranger.get(url);
      expect([url, res.status]).toEqual([url, 404]);
      expect(res.html).not.toContain('secret-buyer');
    }
    for (const [url, form] of [
      [`/dashboard/store/apps/${installationId}/uninstall`, {}],
      [`/dashboard/store/functions/${fn.functionId}/active`, { active: 'false' }],
      [`/dashboard/store/functions/${fn.functionId}/configuration`, { configuration: '{"a": 1}' }],
    ] as const) {
      const res = await stranger.post(url, { _csrf: token, ...form });
      expect([url, res.status]).toEqual([url, 404]);
    }
    for (const url of ['/dashboard/store/apps', '/dashboard/store/functions', '/dashboard/store/gdpr']) {
      expect((await stranger.get(url)).html).not.toMatch(new RegExp(`${installationId}|${fn.functionId}|${requestId}`));
    }
    expect((await h.req('GET', '/apps/installations', { token: owner.merchant.token })).json().data.installations[0].status).toBe('active');
    const [after] = (await h.req('GET', '/functions', { token: owner.merchant.token })).json().data.functions;
    expect(after).toMatchObject({ active: fn.active, configuration: fn.configuration });

    const { browser: developerOnly } = await developer();
    for (const url of ['/dashboard/store/apps', '/dashboard/store/functions', '/dashboard/store/gdpr']) expect((await developerOnly.get(url)).status).toBe(403);
  });
});

describe('developer pages: app overview and earnings (C10.4, C14.12)', () => {
  it("the app's page shows its installs, uninstalls and subscribers", async () => {
    const { partner, browser } = await developer();
    const app = await createTestApp(h, partner.token);
    expect((await browser.get(`/dashboard/apps/${app.appId}`)).html).toContain('Not installed on any store yet.');
    const m1 = await signupMerchant(h);
    const m2 = await signupMerchant(h);
    await installApp(h, m1, app);
    const second = await installApp(h, m2, app);
    expect((await h.req('DELETE', `/apps/installations/${second.installationId}`, { token: m2.token })).statusCode).toBe(200);
    const page = await browser.get(`/dashboard/apps/${app.appId}`);
    expect(page.html).toMatch(/<dt>Active installs<\/dt><dd>1<\/dd>/);
    expect(page.html).toMatch(/<dt>Uninstalled or ending<\/dt><dd>1<\/dd>/);
    expect(page.html).toContain(`<code>${m1.slug}</code>`);
    expect(page.html).toMatch(/<dt>Earnings \(your share, paid\)<\/dt><dd>\$0\.00 \(0 charges\)<\/dd>/);
  });

  it('shows the balance, in flight, next payout and payouts with their transactions; sets the payout method with errors next to the field', async () => {
    const { partner, browser } = await developer();
    const empty = await browser.get('/dashboard/earnings');
    expect(empty.status).toBe(200);
    expect(empty.html).toContain('No payout method yet');
    expect(empty.html).toContain('No payouts yet.');

    const form = await browser.get('/dashboard/earnings/payout-method');
    const bad = await browser.post('/dashboard/earnings/payout-method', { _csrf: csrfOf(form.html), type: 'bank', accountHolder: 'Pat Partner', accountNumber: '12', routingNumber: '123456' });
    expect(bad.status).toBe(400);
    const apiWords = (await h.req('PUT', '/apps/developer/payout-method', { token: partner.token, body: { type: 'bank', accountHolder: 'Pat Partner', accountNumber: '12', routingNumber: '123456' } })).json().message;
    expect(bad.html).toContain(`id="accountNumber-error">${apiWords}`);
    expect(bad.html).toContain('value="Pat Partner"');
    const saved = await browser.post('/dashboard/earnings/payout-method', { _csrf: csrfOf(form.html), type: 'bank', accountHolder: 'Pat Partner', accountNumber: 'DE89370400440532013000', routingNumber: '37040044' });
    expect(saved.location).toBe('/dashboard/earnings?saved=1');
    const withMethod = await browser.get(saved.location!);
    expect(withMethod.html).toContain('Payout method saved.');
    expect(withMethod.html).toContain('*3000'); // masked, as the API shows it
    expect(withMethod.html).not.toContain('DE89370400440532013000');

    // A paid app charged once, swept and dispatched: one payout in transit.
    const app = await createTestApp(h, partner.token, { pricing: { type: 'recurring', amount: '40.00', currency: 'USD', interval: 'month' } });
    await installApp(h, await signupMerchant(h), app);
    await runBillingCharges(h.deps, { developerIds: [partner.userId] });
    const before = await browser.get('/dashboard/earnings');
    expect(before.html).toMatch(/<dt>Available<\/dt><dd>\$32\.00<\/dd>/);
    await runPayoutSweep(h.deps, { force: true, developerIds: [partner.userId] });
    await dispatchPayouts(h.deps, { developerIds: [partner.userId] });
    const after = await browser.get('/dashboard/earnings');
    expect(after.html).toMatch(/<dt>In flight<\/dt><dd>\$32\.00<\/dd>/);
    // The app's own page: its earnings for this developer (the share of its paid charges).
    expect((await browser.get(`/dashboard/apps/${app.appId}`)).html).toMatch(/<dt>Earnings \(your share, paid\)<\/dt><dd>\$32\.00 \(1 charge\)<\/dd>/);
    expect(after.html).toMatch(/<dt>Available<\/dt><dd>\$0\.00<\/dd>/);
    const payoutId = /\/dashboard\/earnings\/payouts\/([0-9a-f-]+)/.exec(after.html)![1];
    expect(after.html).toContain('<span class="status status-in_transit">in_transit</span>');
    expect((await browser.get('/dashboard/earnings?status=paid')).html).toContain('No payout matches this filter.');
    expect((await browser.get('/dashboard/earnings?status=bogus')).status).toBe(400);
    const detail = await browser.get(`/dashboard/earnings/payouts/${payoutId}`);
    expect(detail.html).toContain('Payout of $32.00');
    expect(detail.html).toMatch(/<td>\$40\.00<\/td><td>\$32\.00<\/td>/);

    // Another developer: the payout is not found, and their earnings show none of it.
    const { browser: stranger } = await developer();
    expect((await stranger.get(`/dashboard/earnings/payouts/${payoutId}`)).status).toBe(404);
    expect((await stranger.get('/dashboard/earnings')).html).not.toContain(payoutId);
  });
});
