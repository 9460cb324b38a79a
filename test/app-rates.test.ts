// Shipping apps' live rates (C15.3): the manifest's `extensions.shipping.ratesUrl`, the signed
// request body, parallel requests with a timeout, the reply's validation, the cache on the service
// clock, address safety at save and request time, and which apps are asked. Real HTTP receivers on
// 127.0.0.1 (allowed outside production, C1.2); a strict service refuses them.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { createTestApp, installApp, signupMerchant, signupPartner, type Merchant, type TestApp } from './helpers/actors.js';
import { startReceiver, verifySignature, type Answer, type Receiver, type Received } from './fixtures/webhook-receiver.js';
import { quoteAppRates, type RateQuote } from '../src/checkout/app-rates.js';
import { RateRequests } from '../src/checkout/rate-requests.js';
import type { RateItem, ShippingAddress } from '../src/checkout/rate-request.js';
import { API_VERSION } from '../src/api-version.js';
import { createZone } from '../src/shipping/zones.js';
import { findZonesForCountry, zoneRates } from '../src/checkout/zone-rates.js';

/** `a-b-c-d.v4.rebind.test` answers a.b.c.d (test/helpers/rebind-dns.ts): a name that resolves to a private address now. */
vi.mock('node:dns', async (original) => (await import('./helpers/rebind-dns.js')).rebindDns(await original()));
vi.mock('node:dns/promises', async (original) => (await import('./helpers/rebind-dns.js')).rebindDnsPromises(await original()));

let h: Harness;
let rx: Receiver;
/** How the receiver answers, by request path; each test uses paths of its own. */
const answers = new Map<string, (r: Received, n: number) => Answer>();
beforeAll(async () => {
  h = await createHarness();
  rx = await startReceiver((req) => {
    const path = req.path;
    const n = rx.received.filter((r) => r.path === path).length;
    return answers.get(path)?.(req, n) ?? { status: 404, body: 'no such path' };
  });
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

const json = (body: unknown, status = 200): Answer => ({ status, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
const rate = (code: string, over: Record<string, unknown> = {}) => ({ service_name: `Service ${code}`, service_code: code, total_price: 1250, currency: 'USD', ...over });
const receivedAt = (path: string) => rx.received.filter((r) => r.path === path);

let paths = 0;
/** A receiver path answering with `answer`. */
function endpoint(answer: (r: Received, n: number) => Answer): { path: string; url: string } {
  const path = `/rates-${++paths}`;
  answers.set(path, answer);
  return { path, url: `${rx.url}${path}` };
}

const DESTINATION: ShippingAddress = {
  first_name: 'Ada', last_name: 'Lovelace', company: null, address1: '1 Rue de Rivoli', address2: '', city: 'Paris',
  province: 'Île-de-France', province_code: null, country: 'France', country_code: 'fr', zip: '75001', phone: '+33 1 23 45 67 89',
};
const ITEMS: RateItem[] = [
  { name: 'Mug - Blue', sku: 'MUG-1', quantity: 2, grams: 454, priceMinor: 1999, requiresShipping: true, productId: 1001, variantId: 2001 },
  { name: 'E-book', sku: null, quantity: 1, grams: 0, priceMinor: 500, requiresShipping: false, productId: 1002, variantId: null },
];

interface ShippingStore {
  merchant: Merchant;
  apps: TestApp[];
  installs: { installationId: string }[];
  quote(over?: Partial<RateQuote>, timeoutMs?: number): ReturnType<typeof quoteAppRates>;
}

/** A store with one installed app per ratesUrl (write_shipping granted unless `scopes` says otherwise). */
/** `checkoutKey`: every quote is of that checkout, by this key (its token hash in the service; its last quote in this process may be reused: rate-memo.ts). */
async function shippingStoreOf(specs: { url?: string; scopes?: string[]; handle?: string }[], on: Harness = h, checkoutKey?: string): Promise<ShippingStore> {
  // A public literal: the strict service resolves names, and the test machine has no DNS.
  const appUrl = 'https://1.1.1.1';
  const merchant = await signupMerchant(on);
  const partner = await signupPartner(on);
  const apps: TestApp[] = [];
  const installs = [];
  for (const spec of specs) {
    const app = await createTestApp(on, partner.token, {
      appUrl, scopes: spec.scopes ?? ['read_shipping', 'write_shipping'],
      ...(spec.handle ? { handle: spec.handle } : {}),
      ...(spec.url ? { extensions: { shipping: { ratesUrl: spec.url } } } : {}),
    });
    apps.push(app);
    installs.push(await installApp(on, merchant, app));
  }
  return {
    merchant, apps, installs,
    quote: (over = {}, timeoutMs) =>
      quoteAppRates(on.deps, { storeId: merchant.storeId, checkoutKey, currency: 'USD', destination: DESTINATION, items: ITEMS, ...over }, timeoutMs ? { timeoutMs } : {}),
  };
}

const shippingStore = (specs: { url?: string; scopes?: string[]; handle?: string }[], on: Harness = h) => shippingStoreOf(specs, on);

describe('C3.1 extensions.shipping in the app manifest', () => {
  it('is saved and shown with the app; PATCH replaces it; a ratesUrl that is no URL, or a shipping that is no object, is refused', async () => {
    const partner = await signupPartner(h);
    const created = await createTestApp(h, partner.token, { extensions: { shipping: { ratesUrl: 'https://rates.example.com/quote' }, salesChannel: false } });
    const get = await h.req('GET', `/apps/developer/apps/${created.appId}`, { token: partner.token });
    expect(get.json().data.app.extensions).toEqual({ shipping: { ratesUrl: 'https://rates.example.com/quote' }, salesChannel: false });
    const patched = await h.req('PATCH', `/apps/developer/apps/${created.appId}`, { token: partner.token, body: { extensions: { shipping: null } } });
    expect(patched.statusCode).toBe(200);
    // C3.2: extensions are merged by key, so the sales channel the PATCH did not name stays.
    expect(patched.json().data.app.extensions).toEqual({ salesChannel: false });

    const envelope = (message: string) => ({ status: 400, state: 'error', message, data: null, count: null, pagination: null });
    const bad: [unknown, string][] = [
      [{ ratesUrl: 'not a url' }, 'extensions.shipping.ratesUrl must be an absolute URL'],
      [{}, 'extensions.shipping.ratesUrl must be an absolute URL'],
      [{ ratesUrl: 'ftp://rates.example.com/x' }, 'extensions.shipping.ratesUrl must be an http or https URL'],
      ['https://rates.example.com', 'extensions.shipping must be an object'],
      [['https://rates.example.com'], 'extensions.shipping must be an object'],
    ];
    for (const [shipping, message] of bad) {
      const res = await h.req('POST', '/apps/developer/apps', { token: partner.token, body: { name: 'Rates', appUrl: 'https://app.example.com', scopes: ['write_shipping'], extensions: { shipping } } });
      expect(res.statusCode, JSON.stringify(shipping)).toBe(400);
      expect(res.json()).toEqual(envelope(message));
    }
  });
});

describe('C15.3 the rate request', () => {
  it('POSTs the exact body, signed like a webhook, with X-SVC-Topic shipping/rates; the reply becomes rates', async () => {
    const e = endpoint(() => json({ rates: [
      rate('express', { service_name: 'Express', total_price: 2500, description: 'Next day', min_delivery_date: '2026-01-02', max_delivery_date: '2026-01-03' }),
      rate('ground', { service_name: 'Ground', total_price: '990' }),
    ] }));
    const s = await shippingStore([{ url: e.url, handle: `parcel-${paths}` }]);
    const put = await h.req('PUT', '/stores/address', { token: s.merchant.token, body: { address1: '1 Main St', city: 'Ottawa', province: 'ON', country: 'CA', zip: 'K1A 0B1' } });
    expect(put.statusCode).toBe(200);

    const rates = await s.quote();
    const handle = s.apps[0].handle;
    expect(rates).toEqual([
      { handle: `app-${handle}-express`, title: 'Express', price: '25.00', code: `${handle}-express`, source: handle, description: 'Next day', min_delivery_date: '2026-01-02', max_delivery_date: '2026-01-03' },
      { handle: `app-${handle}-ground`, title: 'Ground', price: '9.90', code: `${handle}-ground`, source: handle, description: null, min_delivery_date: null, max_delivery_date: null },
    ]);

    const [req] = receivedAt(e.path);
    const expected = JSON.stringify({
      rate: {
        origin: { country: 'CA', province: 'ON', city: 'Ottawa', zip: 'K1A 0B1', address1: '1 Main St', address2: null, phone: null },
        destination: { country: 'FR', province: 'Île-de-France', city: 'Paris', zip: '75001', address1: '1 Rue de Rivoli', address2: null, name: 'Ada Lovelace', company: null, phone: '+33 1 23 45 67 89' },
        items: [
          { name: 'Mug - Blue', sku: 'MUG-1', quantity: 2, grams: 454, price: 1999, requires_shipping: true, product_id: 1001, variant_id: 2001 },
          { name: 'E-book', sku: null, quantity: 1, grams: 0, price: 500, requires_shipping: false, product_id: 1002, variant_id: 1002 },
        ],
        currency: 'USD',
        locale: 'en',
      },
    });
    expect(req.raw.toString('utf8')).toBe(expected);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-svc-topic']).toBe('shipping/rates');
    expect(req.headers['x-svc-shop-domain']).toBe(s.merchant.slug);
    expect(req.headers['x-svc-api-version']).toBe(API_VERSION);
    expect(verifySignature(req.raw, req.headers['x-svc-hmac-sha256'], s.apps[0].clientSecret)).toBe(true);
    expect(verifySignature(req.raw, req.headers['x-svc-hmac-sha256'], 'another secret')).toBe(false);
  });

  it('origin fields are null while the store has no address; province falls back to the name; prices in the currency minor units', async () => {
    const e = endpoint(() => json({ rates: [rate('std', { currency: 'JPY', total_price: 800 })] }));
    const s = await shippingStore([{ url: e.url }]);
    const rates = await s.quote({ currency: 'JPY', destination: { ...DESTINATION, province_code: 'IDF', first_name: null, last_name: '' } });
    expect(rates.map((r) => r.price)).toEqual(['800.00']); // 800 yen
    const body = JSON.parse(receivedAt(e.path)[0].raw.toString('utf8'));
    expect(body.rate.origin).toEqual({ country: null, province: null, city: null, zip: null, address1: null, address2: null, phone: null });
    expect(body.rate.destination).toMatchObject({ province: 'IDF', name: null });
    expect(body.rate.currency).toBe('JPY');
    expect(body.rate.items.map((i: any) => i.price)).toEqual([20, 5]); // 19.99 and 5.00 hundredths as yen (rounded half up)
  });

  it('no request without a destination country or without an item that requires shipping', async () => {
    const e = endpoint(() => json({ rates: [rate('std')] }));
    const s = await shippingStore([{ url: e.url }]);
    expect(await s.quote({ destination: { ...DESTINATION, country_code: null } })).toEqual([]);
    expect(await s.quote({ items: ITEMS.filter((i) => !i.requiresShipping) })).toEqual([]);
    expect(receivedAt(e.path)).toHaveLength(0);
  });
});

describe('C15.3 which apps are asked', () => {
  it('only apps actively installed on the store with write_shipping and a ratesUrl', async () => {
    const asked = endpoint(() => json({ rates: [rate('a')] }));
    const noScope = endpoint(() => json({ rates: [rate('b')] }));
    const removed = endpoint(() => json({ rates: [rate('c')] }));
    const s = await shippingStore([{ url: asked.url }, { url: noScope.url, scopes: ['read_shipping'] }, { url: removed.url }, {}]);
    const del = await h.req('DELETE', `/apps/installations/${s.installs[2].installationId}`, { token: s.merchant.token });
    expect(del.statusCode).toBe(200);
    // Another store with the same app installed: its quote does not ask for this one's.
    const other = await signupMerchant(h);
    await installApp(h, other, s.apps[0]);

    const rates = await s.quote();
    expect(rates.map((r) => r.source)).toEqual([s.apps[0].handle]);
    expect(receivedAt(asked.path)).toHaveLength(1);
    expect(receivedAt(noScope.path)).toHaveLength(0);
    expect(receivedAt(removed.path)).toHaveLength(0);
    expect(JSON.parse(receivedAt(asked.path)[0].raw.toString()).rate.origin.country).toBeNull();
    expect(receivedAt(asked.path)[0].headers['x-svc-shop-domain']).toBe(s.merchant.slug);
  });

  it('apps are asked in parallel; rates come app by app in handle order', async () => {
    const DELAY = 700;
    const slow = [0, 1, 2].map((i) => endpoint(() => ({ ...(json({ rates: [rate(`r${i}`)] }) as object), delayMs: DELAY }) as Answer));
    const tag = paths;
    const s = await shippingStore([{ url: slow[2].url, handle: `c-ship-${tag}` }, { url: slow[0].url, handle: `a-ship-${tag}` }, { url: slow[1].url, handle: `b-ship-${tag}` }]);
    const started = performance.now();
    const rates = await s.quote();
    const took = performance.now() - started;
    expect(rates.map((r) => r.handle)).toEqual([`app-a-ship-${tag}-r0`, `app-b-ship-${tag}-r1`, `app-c-ship-${tag}-r2`]);
    expect(took).toBeGreaterThanOrEqual(DELAY - 50);
    expect(took).toBeLessThan(2 * DELAY); // one after the other would take 3 x DELAY
  });
});

describe('C15.3 an app that is slow, down or wrong gives no rates and never fails the quote', () => {
  it('a slow app costs at most the timeout; the others still answer', async () => {
    const hang = endpoint(() => 'hang');
    const late = endpoint(() => ({ ...(json({ rates: [rate('late')] }) as object), delayMs: 3000 }) as Answer);
    const good = endpoint(() => json({ rates: [rate('ok')] }));
    const s = await shippingStore([{ url: hang.url }, { url: late.url }, { url: good.url }]);
    const started = performance.now();
    const rates = await s.quote({}, 400);
    const took = performance.now() - started;
    expect(rates.map((r) => r.source)).toEqual([s.apps[2].handle]);
    expect(took).toBeGreaterThanOrEqual(390);
    expect(took).toBeLessThan(1500);
    expect(receivedAt(hang.path)).toHaveLength(1);
  });

  it.each([
    ['a 500', () => json({ rates: [rate('x')] }, 500)],
    ['a 302', () => ({ status: 302, headers: { location: '/elsewhere' } })],
    ['not JSON', () => ({ status: 200, body: '<html>rates</html>' })],
    ['an empty body', () => ({ status: 200, body: '' })],
    ['rates not an array', () => json({ rates: { a: rate('a') } })],
    ['no rates key', () => json({ shipping_rates: [rate('a')] })],
    ['a JSON array', () => json([rate('a')])],
    ['JSON null', () => json(null)],
    ['a body over 256 KiB', () => json({ rates: [rate('a', { description: 'x'.repeat(300 * 1024) })] })],
  ] as [string, () => Answer][])('%s: no rates from that app', async (_what, answer) => {
    const bad = endpoint(answer);
    const good = endpoint(() => json({ rates: [rate('fine')] }));
    const s = await shippingStore([{ url: bad.url }, { url: good.url }]);
    const rates = await s.quote();
    expect(rates.map((r) => r.source)).toEqual([s.apps[1].handle]);
    expect(receivedAt(bad.path)).toHaveLength(1);
  });

  it('an app that refuses connections gives no rates', async () => {
    const closed = await startReceiver();
    const url = `${closed.url}/rates`;
    await closed.close();
    const s = await shippingStore([{ url }]);
    expect(await s.quote()).toEqual([]);
  });
});

describe('C15.3 each rate is checked', () => {
  it('drops rates in another currency or malformed, and keeps the rest in order', async () => {
    const e = endpoint(() => json({ rates: [
      rate('keep-1'),
      rate('eur', { currency: 'EUR' }),
      rate('no-currency', { currency: undefined }),
      { service_name: 'No code', total_price: 100, currency: 'USD' },
      rate('', { service_name: 'Empty code' }),
      rate('no-name', { service_name: undefined }),
      rate('blank-name', { service_name: '  ' }),
      rate('number-code', { service_code: 42 }),
      rate('negative', { total_price: -1 }),
      rate('fraction', { total_price: 1.5 }),
      rate('fraction-text', { total_price: '1.5' }),
      rate('signed-text', { total_price: '+5' }),
      rate('word', { total_price: 'free' }),
      rate('empty-price', { total_price: '' }),
      rate('null-price', { total_price: null }),
      rate('no-price', { total_price: undefined }),
      rate('bool-price', { total_price: true }),
      rate('huge', { total_price: '100000000000000000000' }),
      'not an object',
      null,
      rate('keep-2', { currency: 'usd', total_price: '0', description: 42, min_delivery_date: 7 }),
      rate('keep-1', { service_name: 'Duplicate code' }),
      rate('keep-3', { total_price: '0012' }),
    ] }));
    const s = await shippingStore([{ url: e.url }]);
    const rates = await s.quote();
    expect(rates.map((r) => [r.code.slice(s.apps[0].handle.length + 1), r.title, r.price, r.description, r.min_delivery_date])).toEqual([
      ['keep-1', 'Service keep-1', '12.50', null, null],
      ['keep-2', 'Service keep-2', '0.00', null, null],
      ['keep-3', 'Service keep-3', '0.12', null, null],
    ]);
  });

  it('text the database cannot store (storable-text.ts): a rate so named is dropped, a description keeps U+FFFD, a date is left out; the answer is cached', async () => {
    const e = endpoint(() => json({ rates: [
      rate('nul-name', { service_name: 'Ground\u0000' }),
      rate('lone-surrogate-code\ud800'),
      rate('keep', { description: 'by van\u0000', min_delivery_date: '2026-12-01\u0000', max_delivery_date: '2026-12-03' }),
    ] }));
    const s = await shippingStore([{ url: e.url }]);
    const rates = await s.quote();
    expect(rates.map((r) => [r.title, r.description, r.min_delivery_date, r.max_delivery_date])).toEqual([['Service keep', 'by van\ufffd', null, '2026-12-03']]);
    await h.deps.rateCacheWriter.flush();
    const { rows } = await h.db.query<{ ok: boolean; rates: { service_code: string }[] }>('SELECT ok, rates FROM shipping_rate_cache WHERE app_id = $1', [s.apps[0].appId]);
    expect(rows.map((r) => [r.ok, r.rates.map((x) => x.service_code)])).toEqual([[true, ['keep']]]);
  });

  it('a service name or code of at most 255 characters counts code points, as every text limit does: 255 emoji are kept, 256 drop the rate', async () => {
    const emoji = (n: number) => '😀'.repeat(n);
    const e = endpoint(() => json({ rates: [
      rate(`k${emoji(254)}`, { service_name: emoji(255) }),
      rate(`c${emoji(255)}`),
      rate('name', { service_name: emoji(256) }),
    ] }));
    const s = await shippingStore([{ url: e.url }]);
    const rates = await s.quote();
    expect(rates.map((r) => [r.code.slice(s.apps[0].handle.length + 1), r.title])).toEqual([[`k${emoji(254)}`, emoji(255)]]);
  });

  it('keeps the first 20 rates of an app', async () => {
    const e = endpoint(() => json({ rates: Array.from({ length: 25 }, (_, i) => rate(`r${i}`, { total_price: i })) }));
    const s = await shippingStore([{ url: e.url }]);
    const rates = await s.quote();
    expect(rates).toHaveLength(20);
    expect(rates.map((r) => r.price)).toEqual(Array.from({ length: 20 }, (_, i) => `0.${String(i).padStart(2, '0')}`));
  });
});

// The same rules whether a quote is of a checkout (whose last quote this process may reuse) or not.
describe.each([
  { quotes: 'any quote', checkout: false },
  { quotes: "a checkout's quotes", checkout: true },
])('C15.3 the cache (service clock): $quotes', ({ checkout }) => {
  const shippingStore = (specs: { url?: string }[]) => shippingStoreOf(specs, h, checkout ? randomUUID() : undefined);

  it('the same body to the same app is answered from the cache for 15 minutes after a 2xx', async () => {
    let price = 100;
    const e = endpoint(() => json({ rates: [rate('std', { total_price: price })] }));
    const s = await shippingStore([{ url: e.url }]);
    expect((await s.quote()).map((r) => r.price)).toEqual(['1.00']);
    price = 200;
    await h.advance(14 * 60 + 50);
    expect((await s.quote()).map((r) => r.price)).toEqual(['1.00']);
    expect(receivedAt(e.path)).toHaveLength(1);
    // Another body (another destination) is another request.
    expect((await s.quote({ destination: { ...DESTINATION, zip: '75002' } })).map((r) => r.price)).toEqual(['2.00']);
    expect(receivedAt(e.path)).toHaveLength(2);
    await h.advance(20);
    expect((await s.quote()).map((r) => r.price)).toEqual(['2.00']);
    expect(receivedAt(e.path)).toHaveLength(3);
  });

  it('a failure is remembered for 30 seconds, and a malformed 2xx for 15 minutes', async () => {
    let failing = true;
    const e = endpoint(() => (failing ? json({ error: 'down' }, 503) : json({ rates: [rate('std')] })));
    const s = await shippingStore([{ url: e.url }]);
    expect(await s.quote()).toEqual([]);
    failing = false;
    await h.advance(25);
    expect(await s.quote()).toEqual([]);
    expect(receivedAt(e.path)).toHaveLength(1);
    await h.advance(6);
    expect(await s.quote()).toHaveLength(1);
    expect(receivedAt(e.path)).toHaveLength(2);

    let malformed = true;
    const m = endpoint(() => (malformed ? { status: 200, body: 'oops' } : json({ rates: [rate('std')] })));
    const t = await shippingStore([{ url: m.url }]);
    expect(await t.quote()).toEqual([]);
    malformed = false;
    await h.advance(60);
    expect(await t.quote()).toEqual([]);
    expect(receivedAt(m.path)).toHaveLength(1);
    await h.advance(15 * 60);
    expect(await t.quote()).toHaveLength(1);
  });

  it('an app that moves its ratesUrl is asked at the new one; a timeout is cached as a failure', async () => {
    const first = endpoint(() => json({ rates: [rate('old')] }));
    const second = endpoint(() => json({ rates: [rate('new')] }));
    const s = await shippingStore([{ url: first.url }]);
    expect((await s.quote()).map((r) => r.title)).toEqual(['Service old']);
    const patch = await h.req('PATCH', `/apps/developer/apps/${s.apps[0].appId}`, { token: s.apps[0].developerToken, body: { extensions: { shipping: { ratesUrl: second.url } } } });
    expect(patch.statusCode).toBe(200);
    expect((await s.quote()).map((r) => r.title)).toEqual(['Service new']);

    const hang = endpoint(() => 'hang');
    const t = await shippingStore([{ url: hang.url }]);
    expect(await t.quote({}, 200)).toEqual([]);
    expect(await t.quote({}, 200)).toEqual([]);
    expect(receivedAt(hang.path)).toHaveLength(1); // the second quote was answered from the cache
  });

  it.runIf(checkout)("the checkout's last quote is reused while nothing changed: the same frozen rates; any part of the body changed asks anew", async () => {
    // `n` counts this path's requests, this one included.
    const e = endpoint((r, n) => json({ rates: [rate(`answer-${n}`, { currency: JSON.parse(r.raw.toString()).rate.currency })] }));
    const s = await shippingStore([{ url: e.url }]);
    const asked = await s.quote();
    expect(asked.map((r) => r.title)).toEqual(['Service answer-1']);
    // Answered from memory, and from then on kept for the checkout: the same rates, the same objects.
    const first = await s.quote();
    expect(first).toEqual(asked);
    expect(first).not.toBe(asked);
    expect(await s.quote()).toBe(first);
    expect(Object.isFrozen(first) && first.every((r) => Object.isFrozen(r))).toBe(true);
    expect(() => {
      (first[0] as { title: string }).title = 'changed';
    }).toThrow(TypeError);

    // Each part the body is made of, changed in turn: a body never seen, so the app is asked.
    const changes: Partial<RateQuote>[] = [
      { destination: { ...DESTINATION, zip: '75002' } },
      { destination: { ...DESTINATION, phone: null } },
      { items: [{ ...ITEMS[0], quantity: 3 }, ITEMS[1]] },
      { items: [{ ...ITEMS[0], grams: 455 }, ITEMS[1]] },
      { items: [ITEMS[0]] },
      { currency: 'EUR' },
    ];
    for (const [i, change] of changes.entries()) {
      expect((await s.quote(change)).map((r) => r.title), JSON.stringify(change)).toEqual([`Service answer-${i + 2}`]);
    }
    expect(receivedAt(e.path)).toHaveLength(1 + changes.length);
    // The first body again: this process remembers its answer, so it is not asked.
    expect(await s.quote()).toEqual(first);
    expect(receivedAt(e.path)).toHaveLength(1 + changes.length);

    // The store's address is the request's origin.
    const put = await h.req('PUT', '/stores/address', { token: s.merchant.token, body: { address1: '2 Main St', city: 'Lyon', country: 'FR', zip: '69001' } });
    expect(put.statusCode).toBe(200);
    await s.quote();
    expect(receivedAt(e.path)).toHaveLength(2 + changes.length);

    // The caller's own objects changed after a quote: what was quoted was copied, so the change is seen.
    const destination = { ...DESTINATION, zip: '13000' };
    await s.quote({ destination });
    await s.quote({ destination }); // from memory: kept for the checkout
    destination.zip = '13001';
    await s.quote({ destination });
    expect(receivedAt(e.path).slice(-2).map((r) => JSON.parse(r.raw.toString()).rate.destination.zip)).toEqual(['13000', '13001']);
  });

  it('the shipping-rate-cache job removes expired answers only', async () => {
    const e = endpoint(() => json({ rates: [rate('std')] }));
    const s = await shippingStore([{ url: e.url }]);
    await s.quote();
    await s.quote({ destination: { ...DESTINATION, zip: '1' } });
    await h.deps.rateCacheWriter.flush(); // the table gets the answers behind the quotes
    const count = async () => (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM shipping_rate_cache WHERE app_id = $1', [s.apps[0].appId])).rows[0].n;
    expect(await count()).toBe(2);
    await h.deps.jobs.run('shipping-rate-cache');
    expect(await count()).toBe(2);
    await h.advance(15 * 60 + 1);
    expect((await h.deps.jobs.run('shipping-rate-cache')).processed).toBeGreaterThanOrEqual(2);
    expect(await count()).toBe(0);
  });
});

describe('C15.3 with C8.9: rate URLs obey the address rules of webhooks', () => {
  let strict: Harness;
  beforeAll(async () => {
    strict = await createHarness({ SVC_ALLOW_PRIVATE_WEBHOOKS: '0' });
    // The checkouts' rate requests resolve names on a thread of their own, which vi.mock does not
    // reach: that thread answers the rebind names with the same helper, installed there first.
    await strict.deps.rateRequests.close();
    strict.deps.rateRequests = new RateRequests({ allowPrivate: false, preload: [new URL('./helpers/rebind-dns-thread.ts', import.meta.url).href] }, strict.deps.log);
  });
  afterAll(() => strict?.close());

  it('a private ratesUrl is refused when saved', async () => {
    const partner = await signupPartner(strict);
    for (const url of ['https://127.0.0.1/rates', 'https://localhost/rates', 'https://[::1]/rates', 'https://169.254.169.254/latest', 'https://10-0-0-1.v4.rebind.test/rates']) {
      const res = await strict.req('POST', '/apps/developer/apps', {
        token: partner.token, body: { name: 'Rates', appUrl: 'https://1.1.1.1', scopes: ['write_shipping'], extensions: { shipping: { ratesUrl: url } } },
      });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().message).toBe('extensions.shipping.ratesUrl points at a private address');
    }
    const http = await strict.req('POST', '/apps/developer/apps', {
      token: partner.token, body: { name: 'Rates', appUrl: 'https://1.1.1.1', scopes: ['write_shipping'], extensions: { shipping: { ratesUrl: 'http://1.1.1.1/x' } } },
    });
    expect(http.json().message).toBe('extensions.shipping.ratesUrl must be an https URL');
  });

  it('a ratesUrl that is, or now resolves to, a private address is not asked at request time', async () => {
    const s = await shippingStore([{ url: 'https://1.1.1.1/a' }, { url: 'https://1.1.1.1/b' }, { url: 'https://1.1.1.1/c' }], strict);
    // Saved while allowed, or while the name pointed elsewhere: written directly, as the API now refuses them.
    const urls = [`https://127.0.0.1:${rx.port}/rates-private`, `https://127-0-0-1.v4.rebind.test:${rx.port}/rates-private`, `http://127.0.0.1:${rx.port}/rates-private`];
    for (const [i, url] of urls.entries()) {
      await strict.db.query(`UPDATE apps SET extensions = $2::jsonb WHERE id = $1`, [s.apps[i].appId, JSON.stringify({ shipping: { ratesUrl: url } })]);
    }
    const warn = vi.spyOn(strict.deps.log, 'warn');
    const before = rx.received.length;
    expect(await s.quote()).toEqual([]);
    expect(rx.received.length).toBe(before);
    const errors = warn.mock.calls.map((c) => (c[0] as any).error);
    expect(errors).toEqual(['blocked_address', 'blocked_address', 'blocked_address']);
    warn.mockRestore();
    await strict.deps.rateCacheWriter.flush(); // the table gets the answers behind the quote
    const { rows } = await strict.db.query<{ ok: boolean }>('SELECT ok FROM shipping_rate_cache WHERE app_id IN ($1, $2, $3)', s.apps.map((a) => a.appId));
    expect(rows.map((r) => r.ok)).toEqual([false, false, false]);
  });
});

describe('C15.2 zones as stored', () => {
  it('findZonesForCountry reads the store zones holding the country; zoneRates prices them from the rows as stored', async () => {
    const m = await signupMerchant(h);
    const other = await signupMerchant(h);
    const light = await createZone(h.deps, m.storeId, { name: 'Light', countries: ['FR', 'DE'], price: '4.90', type: 'Weight', maxWeight: 1 });
    const heavy = await createZone(h.deps, m.storeId, { name: 'Heavy', countries: ['FR'], price: '14.90', type: 'Weight', minWeight: '1.0001' });
    await createZone(h.deps, m.storeId, { name: 'US', countries: ['US'], price: '3' });
    await createZone(h.deps, other.storeId, { name: 'Elsewhere', countries: ['FR'], price: '1' });
    const zones = await findZonesForCountry(h.db, m.storeId, 'fr');
    expect(zones.map((z) => z.name).sort()).toEqual(['Heavy', 'Light']);
    expect(await findZonesForCountry(h.db, m.storeId, null)).toEqual([]);
    const quote = (lines: { weight: string; weightUnit: string }[]) =>
      zoneRates({ zones, lines: lines.map((l) => ({ ...l, quantity: 1, requiresShipping: true })), subtotalMinor: 1000, country: 'FR' }).map((r) => [r.handle, r.price]);
    expect(quote([{ weight: '1000', weightUnit: 'g' }])).toEqual([[`zone-${light.shippingZoneId}`, '4.90']]);
    expect(quote([{ weight: '1000.1', weightUnit: 'g' }])).toEqual([[`zone-${heavy.shippingZoneId}`, '14.90']]);
    expect(quote([{ weight: '1000.05', weightUnit: 'g' }])).toEqual([]);
  });
});

describe('minor units of the currency (C15.3 prices) and hundredths (C5.2)', async () => {
  const { toCurrencyMinor, fromCurrencyMinor } = await import('../src/checkout/currency-minor.js');
  it('convert exactly, or refuse what two decimals cannot hold', () => {
    expect([toCurrencyMinor(1999, 'USD'), toCurrencyMinor(1999, 'BHD'), toCurrencyMinor(80000, 'JPY'), toCurrencyMinor(150, 'JPY')]).toEqual([1999, 19990, 800, 2]);
    expect([fromCurrencyMinor(1999n, 'USD'), fromCurrencyMinor(800n, 'JPY'), fromCurrencyMinor(19990n, 'BHD'), fromCurrencyMinor(19991n, 'BHD')]).toEqual([1999, 80000, 1999, null]);
    expect(fromCurrencyMinor(10n ** 20n, 'USD')).toBeNull();
    expect(fromCurrencyMinor(0n, 'USD')).toBe(0);
  });
});
