// Review of the developer API's app manifest (C3.1, C3.2) and of the dashboard's pages that take
// the same input (issue 15): the page must take exactly what the API takes, and refuse what it
// refuses, in the API's words. Each test names the rule it holds the service to.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { createTestApp, signupMerchant, signupPartner, unique } from './helpers/actors.js';
import { Browser, signedInBrowser } from './helpers/dashboard.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const PASSWORD = 'correct-horse';

async function developer() {
  const partner = await signupPartner(h);
  return { partner, browser: await signedInBrowser(h, partner.email, PASSWORD) };
}

async function merchantBrowser() {
  const merchant = await signupMerchant(h);
  return { merchant, browser: await signedInBrowser(h, merchant.email, PASSWORD) };
}

const appCount = async (token: string) => (await h.req('GET', '/apps/developer/apps', { token })).json().count as number;

/** A valid create form; tests change one field. */
const baseForm = () => ({ name: `Review ${unique()}`, appUrl: 'https://app.example.com', scopes: ['read_products'], tier: 'free', version: '1.0.0', pricingType: 'free' });
const recurringForm = (trialDays: string) => ({ ...baseForm(), pricingType: 'recurring', amount: '9.99', currency: 'USD', interval: 'month', trialDays });
const recurringBody = (trialDays: unknown) => ({
  name: `Review ${unique()}`, appUrl: 'https://app.example.com', scopes: ['read_products'],
  pricing: { type: 'recurring', amount: '9.99', currency: 'USD', interval: 'month', trialDays },
});

describe('dashboard app form: trial days as the API takes them (C3.1 pricing.trialDays, a whole number)', () => {
  // The API's trialDays is a JSON integer from 0 to 365. Its text in a form is decimal digits;
  // Number() read "0x10" as 16, and " 7 " and "1e1" as 7 and 10, so the page created apps the API
  // would have refused to describe that way (the API refuses every one of these as text).
  it.each(['0x10', ' 7 ', '1e1', '7.5', '-1', '+7', '7 days', '366'])('trial days %j: 400 next to the field in the API\'s words, nothing created', async (typed) => {
    const { partner, browser } = await developer();
    const api = await h.req('POST', '/apps/developer/apps', { token: partner.token, body: recurringBody(/^[0-9]+$/.test(typed) ? Number(typed) : typed) });
    expect(api.statusCode).toBe(400);
    const res = await browser.submit('/dashboard/apps/new', '/dashboard/apps', recurringForm(typed));
    expect(res.status, res.html.slice(0, 300)).toBe(400);
    expect(res.html).toMatch(/id="trialDays-error">pricing\.trialDays must be a whole number/);
    expect(await appCount(partner.token)).toBe(0);
  });

  it('digits are taken as the API takes the number; an empty field is no trial, as an absent trialDays', async () => {
    const { partner, browser } = await developer();
    for (const [typed, days] of [['7', 7], ['0', 0], ['365', 365], ['', 0]] as const) {
      const res = await browser.submit('/dashboard/apps/new', '/dashboard/apps', recurringForm(typed));
      expect(res.status, res.html.slice(0, 300)).toBe(303);
      const appId = /\/dashboard\/apps\/([0-9a-f-]+)\?created=1$/.exec(res.location!)![1];
      const app = (await h.req('GET', `/apps/developer/apps/${appId}`, { token: partner.token })).json().data.app;
      expect([typed, app.pricing.trialDays]).toEqual([typed, days]);
    }
  });

  it('the edit form is held to the same rule', async () => {
    const { partner, browser } = await developer();
    const app = await createTestApp(h, partner.token);
    const res = await browser.submit(`/dashboard/apps/${app.appId}/edit`, `/dashboard/apps/${app.appId}`, { ...recurringForm('0x10'), handle: app.handle });
    expect(res.status).toBe(400);
    const after = (await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: partner.token })).json().data.app;
    expect(after.pricing).toEqual({ type: 'free' });
  });
});

describe('dashboard app form: no field is quietly changed or dropped (C3.1, issue 15 "the same rules")', () => {
  it('a handle or version with spaces around it is refused as the API refuses it, not trimmed into one it would take', async () => {
    const { partner, browser } = await developer();
    for (const [field, typed] of [['handle', ' my-app '], ['handle', '   '], ['version', ' 1.0.0'], ['version', '2.0.0 ']] as const) {
      const api = await h.req('POST', '/apps/developer/apps', { token: partner.token, body: { ...baseForm(), [field]: typed } });
      expect([field, typed, api.statusCode]).toEqual([field, typed, 400]);
      const res = await browser.submit('/dashboard/apps/new', '/dashboard/apps', { ...baseForm(), [field]: typed });
      expect([field, typed, res.status]).toEqual([field, typed, 400]);
      expect(res.html).toContain(`id="${field}-error">${api.json().message}</p>`);
    }
    expect(await appCount(partner.token)).toBe(0);
  });

  it('a URL field of spaces is refused as the API refuses it, not taken as "no URL"', async () => {
    const { partner, browser } = await developer();
    const api = await h.req('POST', '/apps/developer/apps', { token: partner.token, body: { ...baseForm(), gdprUrls: { shopRedact: '  ' } } });
    expect(api.statusCode).toBe(400);
    const res = await browser.submit('/dashboard/apps/new', '/dashboard/apps', { ...baseForm(), shopRedact: '  ' });
    expect(res.status).toBe(400);
    expect(res.html).toContain(`id="shopRedact-error">${api.json().message}</p>`);
    const rates = await browser.submit('/dashboard/apps/new', '/dashboard/apps', { ...baseForm(), ratesUrl: ' ' });
    expect(rates.status).toBe(400);
    expect(rates.html).toContain('id="ratesUrl-error">extensions.shipping.ratesUrl must be an absolute URL</p>');
    expect(await appCount(partner.token)).toBe(0);
  });

  it('a pricing type the API does not know is refused, not taken as free', async () => {
    const { partner, browser } = await developer();
    const api = await h.req('POST', '/apps/developer/apps', { token: partner.token, body: { ...baseForm(), pricing: { type: 'usage' } } });
    expect(api.statusCode).toBe(400);
    const res = await browser.submit('/dashboard/apps/new', '/dashboard/apps', { ...baseForm(), pricingType: 'usage' });
    expect(res.status).toBe(400);
    expect(res.html).toContain('id="pricingType-error">pricing.type');
    expect(await appCount(partner.token)).toBe(0);
  });

  it('a webhook line of more than a topic and an address is refused, not cut to its first two words', async () => {
    const { partner, browser } = await developer();
    const res = await browser.submit('/dashboard/apps/new', '/dashboard/apps', {
      ...baseForm(), webhooks: 'orders/create https://hooks.example.com/a https://hooks.example.com/b',
    });
    expect(res.status).toBe(400);
    expect(res.html).toContain('id="webhooks-error">extensions.webhooks[0] must be a topic and an address');
    expect(await appCount(partner.token)).toBe(0);
    const ok = await browser.submit('/dashboard/apps/new', '/dashboard/apps', { ...baseForm(), webhooks: '  orders/create   https://hooks.example.com/a  \n\n' });
    expect(ok.status, ok.html.slice(0, 300)).toBe(303);
  });
});

describe('C3.1 version: a semantic version (SemVer 2.0.0)', () => {
  it('refuses leading zeros and empty parts, on create and update, in the API and the page; takes what SemVer takes', async () => {
    const { partner, browser } = await developer();
    const app = await createTestApp(h, partner.token);
    for (const version of ['01.0.0', '1.02.0', '1.0.00', '1.0.0-a..b', '1.0.0-01', '1.0.0+', '1.0.0-a.']) {
      const created = await h.req('POST', '/apps/developer/apps', { token: partner.token, body: { ...baseForm(), version } });
      expect([version, created.statusCode, created.json().message]).toEqual([version, 400, 'version must be a semantic version such as 1.2.0']);
      const patched = await h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: partner.token, body: { version } });
      expect([version, patched.statusCode]).toEqual([version, 400]);
      const page = await browser.submit('/dashboard/apps/new', '/dashboard/apps', { ...baseForm(), version });
      expect([version, page.status]).toEqual([version, 400]);
    }
    for (const version of ['0.0.0', '10.20.30', '1.0.0-0a', '1.0.0-alpha.1', '1.2.3-rc.1+build.01', '1.0.0-x-y.0']) {
      const patched = await h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: partner.token, body: { version } });
      expect([version, patched.statusCode, patched.json().data?.app.version]).toEqual([version, 200, version]);
    }
  });
});

describe('dashboard pager past the end', () => {
  // An old link, or a list that shrank: "previous" must lead to rows, not to another empty page.
  it('links "previous" to the last page that has rows', async () => {
    const { partner, browser } = await developer();
    for (let i = 0; i < 3; i++) await createTestApp(h, partner.token);
    const res = await browser.get('/dashboard/apps?limit=2&page=7');
    expect(res.status).toBe(200);
    expect(res.html).toContain('href="/dashboard/apps?limit=2&amp;page=2" rel="prev"');
    expect(res.html).not.toContain('page=6');
    expect(res.html).not.toContain('rel="next"');
    const last = await browser.get('/dashboard/apps?limit=2&page=2');
    expect(last.html).toContain('href="/dashboard/apps?limit=2&amp;page=1" rel="prev"');
  });

  it('with no rows at all there is no "previous" link', async () => {
    const { browser } = await developer();
    const res = await browser.get('/dashboard/apps?page=4');
    expect(res.status).toBe(200);
    expect(res.html).not.toContain('rel="prev"');
    const { browser: store } = await merchantBrowser();
    for (const url of ['/dashboard/store/gdpr?page=3', '/dashboard/store/notifications?page=3', '/dashboard/store/apps?page=3', '/dashboard/store/shipping-zones?page=3']) {
      const page = await store.get(url);
      expect([url, page.status, page.html.includes('rel="prev"')]).toEqual([url, 200, false]);
    }
  });
});

describe('dashboard store address: lengths counted as the API counts them (C15.4)', () => {
  it('a city of 250 characters and 10 spaces is refused by the page as by the API (255 at most, as sent)', async () => {
    const { merchant, browser } = await merchantBrowser();
    const city = `${'c'.repeat(250)}${' '.repeat(10)}`;
    const api = await h.req('PUT', '/stores/address', { token: merchant.token, body: { city, country: 'US' } });
    expect(api.statusCode).toBe(400);
    const res = await browser.submit('/dashboard/store/address', '/dashboard/store/address', { address1: '', address2: '', city, province: '', country: 'US', zip: '', phone: '' });
    expect(res.status).toBe(400);
    expect(res.html).toContain('is too long (maximum 255 characters)');
    const saved = (await h.req('GET', '/stores/address', { token: merchant.token })).json().data.address;
    expect(saved.city).toBeNull();
  });
});

describe('dashboard: markup typed by one account is text on every page that shows it (issue 15, escaping)', () => {
  // What a developer types (app name, function title) reaches merchants' pages, and what a merchant
  // types (store name, GDPR customer, zone name) reaches the developer's and its own pages.
  const RAW = '<img/src=x/onerror=alert(1)>'; // no space, so it also fits an email's local part
  const MARK = `${RAW}"'`;

  it('app name, function title, store name, GDPR customer and zone name never come back as markup', async () => {
    const storeName = `Shop ${MARK} ${unique()}`;
    const merchant = await signupMerchant(h, { storeName });
    const store = new Browser(h);
    expect((await store.signIn(merchant.email, PASSWORD)).status).toBe(303);
    const { partner, browser: dev } = await developer();
    const app = await createTestApp(h, partner.token, {
      name: `App ${MARK}`,
      extensions: { functions: [{ handle: 'v', title: `Check ${MARK}`, target: 'cart.validations.generate.run', expression: '{"operations": []}' }] },
    });
    const { installApp } = await import('./helpers/actors.js');
    await installApp(h, merchant, app);
    const functionId = (await h.req('GET', '/functions', { token: merchant.token })).json().data.functions[0].functionId;
    const filed = await store.submit('/dashboard/store/gdpr', '/dashboard/store/gdpr/data-request', { customerEmail: `${RAW}@example.com`, ordersRequested: 'on' });
    expect(filed.status, filed.html.slice(0, 300)).toBe(303);
    const zone = await store.submit('/dashboard/store/shipping-zones/new', '/dashboard/store/shipping-zones', { name: `Zone ${MARK}`, countries: 'US', description: MARK, price: '1.00', type: 'Simple', digitalProd: 'on' });
    expect(zone.status, zone.html.slice(0, 300)).toBe(303);
    const pages = [
      [dev, `/dashboard/apps/${app.appId}`], [dev, '/dashboard/apps'], [dev, `/dashboard/apps/${app.appId}/edit`],
      [store, '/dashboard/store/apps'], [store, '/dashboard/store/functions'], [store, `/dashboard/store/functions/${functionId}`],
      [store, '/dashboard/store/gdpr'], [store, filed.location!], [store, '/dashboard/store/shipping-zones'],
    ] as const;
    for (const [browser, url] of pages) {
      const page = await browser.get(url);
      expect([url, page.status]).toEqual([url, 200]);
      expect([url, page.html.includes(RAW)]).toEqual([url, false]);
      expect([url, page.html.includes('&lt;img/src=x/onerror=alert(1)&gt;')]).toEqual([url, true]);
    }
  });
});

describe('dashboard GDPR list filters as GET /apps/gdpr/requests takes them (app-api.md GDPR routes)', () => {
  it('an unknown status or requestType is a 400 in the API\'s words, not the whole list; blank is no filter', async () => {
    const { merchant, browser } = await merchantBrowser();
    for (const q of ['status=bogus', 'requestType=customer-redact']) {
      const api = await h.req('GET', `/apps/gdpr/requests?${q}`, { token: merchant.token });
      expect([q, api.statusCode]).toEqual([q, 400]);
      const res = await browser.get(`/dashboard/store/gdpr?${q}`);
      expect([q, res.status]).toEqual([q, 400]);
      expect(res.html).toContain(api.json().message);
    }
    for (const q of ['status=&requestType=', 'status=failed&requestType=shop_redact']) {
      expect([q, (await browser.get(`/dashboard/store/gdpr?${q}`)).status]).toEqual([q, 200]);
    }
  });
});
