// The dashboard's store pages (issue 15) through `inject`, as a browser without script: the store's
// notifications (C9.5), its address (C15.4) and its shipping zones (C6.10), for MERCHANT,
// STAFF_ADMIN and MANAGER, on the same services as the API: the API's validation words next to
// the field, CSRF on every form, and another store's zone "not found" (404) with nothing changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { createStaff, signupMerchant, signupPartner, storeWithApp, unique, type Merchant } from './helpers/actors.js';
import { Browser, csrfOf } from './helpers/dashboard.js';
import { createNotification } from '../src/notifications/notifications.repo.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const PASSWORD = 'correct-horse';

async function signedIn(email: string, password = PASSWORD) {
  const browser = new Browser(h);
  const res = await browser.signIn(email, password);
  expect(res.status, res.html).toBe(303);
  return browser;
}

async function merchantBrowser(merchant?: Merchant) {
  const m = merchant ?? (await signupMerchant(h));
  return { merchant: m, browser: await signedIn(m.email) };
}

const zoneCount = async (storeId: string) => (await h.db.query('SELECT count(*)::int AS n FROM shipping_zones WHERE store_id = $1', [storeId])).rows[0].n;

const ZONE = { name: 'Standard', countries: 'us, CA', description: 'Five days', price: '4.99', type: 'Weight', digitalProd: 'on', minWeight: '0.5', maxWeight: '20', minPrice: '', maxPrice: '' };

describe('store navigation and roles', () => {
  it('the three pages are in the store navigation for MERCHANT, STAFF_ADMIN and MANAGER; a partner is refused (403)', async () => {
    const merchant = await signupMerchant(h);
    for (const role of [null, 'STAFF_ADMIN', 'MANAGER'] as const) {
      const browser = role ? await signedIn((await createStaff(h, merchant, role)).email, 'staff-password') : await signedIn(merchant.email);
      for (const url of ['/dashboard/store/notifications', '/dashboard/store/address', '/dashboard/store/shipping-zones', '/dashboard/store/shipping-zones/new']) {
        const res = await browser.get(url);
        expect([role, url, res.status]).toEqual([role, url, 200]);
        expect(res.html).toContain(`href="${url.replace('/new', '')}" aria-current="page"`);
      }
    }
    const partner = await signupPartner(h);
    const developer = await signedIn(partner.email);
    for (const url of ['/dashboard/store/notifications', '/dashboard/store/address', '/dashboard/store/shipping-zones']) expect((await developer.get(url)).status).toBe(403);
    expect((await developer.get('/dashboard/apps')).html).not.toContain('/dashboard/store/shipping-zones');
  });
});

describe('notifications (C9.5)', () => {
  it('an empty store says what comes here; notifications are listed newest first and paged, as GET /notifications', async () => {
    const { merchant, browser } = await merchantBrowser();
    expect((await browser.get('/dashboard/store/notifications')).html).toContain('No notifications');
    for (let i = 0; i < 27; i++) {
      await createNotification(h.db, { storeId: merchant.storeId, type: 'gdpr_app_failed', title: `Title ${i}`, message: `Message <b>${i}</b>` }, new Date(Date.UTC(2026, 0, 1, 0, i)));
    }
    const other = await signupMerchant(h);
    await createNotification(h.db, { storeId: other.storeId, type: 'gdpr_app_failed', title: 'Secret other store', message: 'no' }, new Date());

    const first = await browser.get('/dashboard/store/notifications');
    expect(first.html).toContain('Title 26');
    expect(first.html).toContain('Message &lt;b&gt;26&lt;/b&gt;');
    expect(first.html.indexOf('Title 26')).toBeLessThan(first.html.indexOf('Title 25'));
    expect(first.html).not.toContain('Title 1<');
    expect(first.html).not.toContain('Secret other store');
    expect(first.html).toContain('27 in all');
    expect(first.html).toContain('href="/dashboard/store/notifications?page=2"');
    const second = await browser.get('/dashboard/store/notifications?page=2');
    expect(second.html).toContain('Title 1<');
    expect(second.html).toContain('Title 0<');
    const api = (await h.req('GET', '/notifications?limit=1', { token: merchant.token })).json().data.notifications;
    expect(api[0].title).toBe('Title 26');
  });
});

describe('store address (C15.4)', () => {
  it('shows the saved address, saves the form with a success message, the service\'s errors next to the field, and refuses a form without CSRF', async () => {
    const { merchant, browser } = await merchantBrowser();
    const empty = await browser.get('/dashboard/store/address');
    expect(empty.html).toMatch(/<label for="address1">/);
    expect(empty.html).toContain('id="country" name="country" type="text" value=""');

    const form = { address1: '1 Main St', address2: '', city: 'Ottawa', province: 'ON', country: 'zz', zip: 'K1A 0B1', phone: '+1 613 555 0100' };
    const bad = await browser.submit('/dashboard/store/address', '/dashboard/store/address', form);
    expect(bad.status).toBe(400);
    const apiWords = (await h.req('PUT', '/stores/address', { token: merchant.token, body: form })).json().message;
    expect(apiWords).toBe('country must be an ISO 3166-1 alpha-2 country code');
    expect(bad.html).toMatch(/id="country"[^>]*aria-invalid="true" aria-describedby="country-hint country-error"/);
    expect(bad.html).toContain('<p class="field-error" id="country-error">must be an ISO 3166-1 alpha-2 country code</p>');
    expect(bad.html).toContain('value="1 Main St"'); // what was typed stays
    const tooLong = await browser.submit('/dashboard/store/address', '/dashboard/store/address', { ...form, country: 'CA', city: 'x'.repeat(256) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.html).toContain('id="city-error">is too long (maximum 255 characters)');
    expect((await h.req('GET', '/stores/address', { token: merchant.token })).json().data.address.city).toBeNull();

    const noCsrf = await browser.post('/dashboard/store/address', { ...form, country: 'ca' });
    expect(noCsrf.status).toBe(403);
    expect((await h.req('GET', '/stores/address', { token: merchant.token })).json().data.address.city).toBeNull();

    const saved = await browser.submit('/dashboard/store/address', '/dashboard/store/address', { ...form, country: 'ca' });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe('/dashboard/store/address?saved=1');
    const after = await browser.get(saved.location!);
    expect(after.html).toContain('Address saved.');
    expect(after.html).toContain('id="country" name="country" type="text" value="CA"');
    expect((await h.req('GET', '/stores/address', { token: merchant.token })).json().data.address)
      .toEqual({ address1: '1 Main St', address2: null, city: 'Ottawa', province: 'ON', country: 'CA', zip: 'K1A 0B1', phone: '+1 613 555 0100' });

    // Another store's address is its own.
    const { browser: other } = await merchantBrowser();
    expect((await other.get('/dashboard/store/address')).html).not.toContain('1 Main St');
  });
});

describe('shipping zones (C6.10)', () => {
  it('creates, lists, edits and deletes (after a confirmation) a zone, with the App API\'s validation words next to the field', async () => {
    const s = await storeWithApp(h, { scopes: ['read_shipping', 'write_shipping'], tier: 'enterprise' });
    const { merchant } = s;
    const { browser } = await merchantBrowser(merchant);
    const list0 = await browser.get('/dashboard/store/shipping-zones');
    expect(list0.html).toContain('No shipping zones');
    expect(list0.html).toContain('href="/dashboard/store/shipping-zones/new"');

    const apiMessage = async (body: Record<string, unknown>) => (await h.req('POST', '/api/v1/shipping_zones.json', { token: s.accessToken, body })).json().message;
    const cases: [Record<string, string>, string, string][] = [
      [{ name: '  ' }, 'name', "can't be blank"],
      [{ countries: 'US, XX' }, 'countries', 'has codes that are not ISO 3166-1 alpha-2 country codes: "XX"'],
      [{ price: '4.999' }, 'price', ''],
      [{ price: 'abc' }, 'price', 'must be a number'],
      [{ minWeight: '30' }, 'minWeight', 'must not be greater than maxWeight'],
      [{ minPrice: '10', maxPrice: '5' }, 'minPrice', 'must not be greater than maxPrice'],
      [{ type: 'Express' }, 'type', 'must be Simple, Weight or Price'],
    ];
    for (const [change, field, words] of cases) {
      const form = { ...ZONE, ...change };
      const res = await browser.submit('/dashboard/store/shipping-zones/new', '/dashboard/store/shipping-zones', form);
      expect([field, res.status]).toEqual([field, 400]);
      const m = new RegExp(`<p class="field-error" id="${field}-error">([^<]*)</p>`).exec(res.html);
      expect(m, `${field} error shown next to it`).not.toBeNull();
      const shown = m![1].replaceAll('&quot;', '"').replaceAll('&#39;', "'");
      if (words) expect(shown).toBe(words);
      // The same words as the App API's, for the same body.
      const body = { name: form.name, countries: form.countries.split(/[\s,]+/).filter(Boolean), price: form.price, type: form.type, minWeight: form.minWeight || null, maxWeight: form.maxWeight || null, minPrice: form.minPrice || null, maxPrice: form.maxPrice || null };
      expect(await apiMessage(body)).toBe(`${field} ${shown}`);
      expect(res.html).toMatch(new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
    }
    expect(await zoneCount(merchant.storeId)).toBe(0);

    const created = await browser.submit('/dashboard/store/shipping-zones/new', '/dashboard/store/shipping-zones', ZONE);
    expect(created.status).toBe(303);
    const list = await browser.get(created.location!);
    expect(list.html).toContain('Shipping zone saved.');
    const zoneId = /href="\/dashboard\/store\/shipping-zones\/([0-9a-f-]{36})"/.exec(list.html)![1];
    expect(list.html).toContain('US, CA');
    const [apiZone] = (await h.req('GET', '/api/v1/shipping_zones.json', { token: s.accessToken })).json().data.shipping_zones;
    expect(apiZone).toMatchObject({ shippingZoneId: zoneId, shippingName: 'Standard', zone: ['US', 'CA'], description: 'Five days', price: '4.99', type: 'Weight', digitalProd: true, minWeight: 0.5, maxWeight: 20, minPrice: null, maxPrice: null });

    const edit = await browser.get(`/dashboard/store/shipping-zones/${zoneId}`);
    expect(edit.html).toContain('value="Standard"');
    expect(edit.html).toContain('value="US, CA"');
    expect(edit.html).toContain('<option value="Weight" selected>');
    const badEdit = await browser.post(`/dashboard/store/shipping-zones/${zoneId}`, { _csrf: csrfOf(edit.html), ...ZONE, maxWeight: '0.1' });
    expect(badEdit.status).toBe(400);
    expect(badEdit.html).toContain('id="minWeight-error">must not be greater than maxWeight');
    const saved = await browser.post(`/dashboard/store/shipping-zones/${zoneId}`, { _csrf: csrfOf(edit.html), ...ZONE, name: 'Express', type: 'Price', countries: 'DE', digitalProd: '' as string, minWeight: '', maxWeight: '', minPrice: '50', maxPrice: '' });
    expect(saved.status).toBe(303);
    expect((await h.req('GET', `/api/v1/shipping_zones/${zoneId}.json`, { token: s.accessToken })).json().data.shipping_zone)
      .toMatchObject({ shippingName: 'Express', zone: ['DE'], type: 'Price', digitalProd: false, minWeight: null, maxWeight: null, minPrice: 50, maxPrice: null });

    const confirm = await browser.get(`/dashboard/store/shipping-zones/${zoneId}/delete`);
    expect(confirm.html).toContain('<h1>Delete Express?</h1>');
    expect((await browser.post(`/dashboard/store/shipping-zones/${zoneId}/delete`, {})).status).toBe(403); // no CSRF token
    expect(await zoneCount(merchant.storeId)).toBe(1);
    const deleted = await browser.post(`/dashboard/store/shipping-zones/${zoneId}/delete`, { _csrf: csrfOf(confirm.html) });
    expect(deleted.location).toBe('/dashboard/store/shipping-zones?deleted=1');
    expect((await browser.get(deleted.location!)).html).toContain('Shipping zone deleted.');
    expect(await zoneCount(merchant.storeId)).toBe(0);
    expect((await browser.get(`/dashboard/store/shipping-zones/${zoneId}`)).status).toBe(404);
  });

  it('CSRF: a create without the token, or with another session\'s, is refused and creates nothing', async () => {
    const { merchant, browser } = await merchantBrowser();
    const { browser: other } = await merchantBrowser();
    const otherToken = csrfOf((await other.get('/dashboard/store/shipping-zones/new')).html);
    expect((await browser.post('/dashboard/store/shipping-zones', ZONE)).status).toBe(403);
    expect((await browser.post('/dashboard/store/shipping-zones', { ...ZONE, _csrf: otherToken })).status).toBe(403);
    expect(await zoneCount(merchant.storeId)).toBe(0);
  });

  it('tenants: another store\'s zone is "not found" (404) on its edit and delete pages and forms; nothing changes', async () => {
    const owner = await merchantBrowser();
    const name = `Secret ${unique()}`;
    await owner.browser.submit('/dashboard/store/shipping-zones/new', '/dashboard/store/shipping-zones', { ...ZONE, name });
    const zoneId = /href="\/dashboard\/store\/shipping-zones\/([0-9a-f-]{36})"/.exec((await owner.browser.get('/dashboard/store/shipping-zones')).html)![1];
    const before = (await h.db.query('SELECT * FROM shipping_zones WHERE id = $1', [zoneId])).rows[0];

    const { browser: stranger } = await merchantBrowser();
    const token = csrfOf((await stranger.get('/dashboard/store/shipping-zones/new')).html);
    for (const url of [`/dashboard/store/shipping-zones/${zoneId}`, `/dashboard/store/shipping-zones/${zoneId}/delete`, '/dashboard/store/shipping-zones/not-a-uuid']) {
      const res = await stranger.get(url);
      expect([url, res.status]).toEqual([url, 404]);
      expect(res.html).not.toContain(name);
    }
    for (const [url, form] of [[`/dashboard/store/shipping-zones/${zoneId}`, { ...ZONE, name: 'Hijacked' }], [`/dashboard/store/shipping-zones/${zoneId}/delete`, {}]] as const) {
      const res = await stranger.post(url, { _csrf: token, ...form });
      expect([url, res.status]).toEqual([url, 404]);
      expect(res.html).not.toContain(name);
    }
    // An invalid edit of another store's zone is also "not found", not a form showing it.
    expect((await stranger.post(`/dashboard/store/shipping-zones/${zoneId}`, { _csrf: token, ...ZONE, name: '' })).status).toBe(404);
    expect((await stranger.get('/dashboard/store/shipping-zones')).html).not.toContain(zoneId);
    expect((await h.db.query('SELECT * FROM shipping_zones WHERE id = $1', [zoneId])).rows[0]).toEqual(before);
  });
});
