// Shipping rate request tests (issue 14; C15.3): `POST /apps/developer/{appId}/shipping-rates/test`
// sends one sample rate request, signed and headed as a checkout's, to a real HTTP receiver on
// loopback (private addresses are allowed in the test config), and answers the rates a checkout
// would offer of the reply, each rate it drops with the reason, and why a whole reply gives none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { startReceiver, type Answer, type Receiver } from './fixtures/webhook-receiver.js';
import { createTestApp, signupPartner } from './helpers/actors.js';
import { verifyMessage } from '../packages/app-sdk/src/webhooks.js';
import { API_VERSION } from '../src/api-version.js';
import { SAMPLE_SHOP_DOMAIN } from '../src/webhooks/samples.js';
import { RATE_TESTS_PER_MINUTE } from '../src/checkout/rate-test.js';

let h: Harness;
let rx: Receiver;

const json = (body: unknown, status = 200): Answer => ({ status, headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
const rate = (code: string, price: unknown, more: Record<string, unknown> = {}) => ({ service_name: `Service ${code}`, service_code: code, total_price: price, currency: 'USD', ...more });

/** What the receiver answers at each path. */
const GOOD = JSON.stringify({ rates: [rate('std', 1250, { description: 'Two to four days', min_delivery_date: '2026-12-01', max_delivery_date: '2026-12-03' }), rate('exp', '2999')] });
const REPLIES: Record<string, Answer> = {
  '/good': json(GOOD),
  '/partly': json({
    rates: [
      rate('std', 1250),
      rate('eur', 900, { currency: 'EUR' }),
      rate('half', '12.5'),
      { service_name: 'No code', total_price: 100, currency: 'USD' },
      rate('std', 700),
      7,
      rate('neg', -1),
      rate('', 100),
      { ...rate('nocur', 100), currency: undefined },
    ],
  }),
  '/many': json({ rates: Array.from({ length: 23 }, (_, i) => rate(`r${i}`, 100 + i)) }),
  '/not-json': { status: 200, body: 'rates: none' },
  '/no-rates': json({ shipping: [] }),
  '/rates-object': json({ rates: { std: 1 } }),
  '/huge': json({ rates: [rate('std', 100, { description: 'x'.repeat(300 * 1024) })] }),
  '/down': { status: 503, body: 'maintenance' },
  // Far past the 5 s timeout, so a loaded machine firing the timer late still sees no answer.
  '/slow': { status: 200, body: '{"rates":[]}', delayMs: 12_000 },
};

beforeAll(async () => {
  h = await createHarness();
  rx = await startReceiver((req) => REPLIES[req.path] ?? json({ rates: [rate('std', 100)] }));
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

/** A new developer's shipping app, its ratesUrl on the receiver (or none). */
async function shippingApp(ratesPath: string | null = '/good') {
  const partner = await signupPartner(h);
  const extensions = ratesPath === null ? {} : { extensions: { shipping: { ratesUrl: `${rx.url}${ratesPath}` } } };
  return createTestApp(h, partner.token, { scopes: ['write_shipping'], ...extensions });
}

const test = (app: { appId: string; developerToken: string }, body: Record<string, unknown> = {}) =>
  h.req('POST', `/apps/developer/${app.appId}/shipping-rates/test`, { token: app.developerToken, body });

const envelopeError = (status: number, message: string) => ({ status, state: 'error', message, data: null, count: null, pagination: null });

describe('POST /apps/developer/{appId}/shipping-rates/test (issue 14)', () => {
  it("sends the sample request signed with the app's secret to its ratesUrl, and answers the rates as a checkout offers them", async () => {
    const app = await shippingApp('/good');
    const before = rx.received.length;
    const res = await test(app);
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data).toEqual({
      address: `${rx.url}/good`, currency: 'USD', requestBody: expect.any(String),
      outcome: { responseStatus: 200, durationMs: expect.any(Number), error: null },
      responseBody: GOOD,
      malformed: null,
      rates: [
        { handle: `app-${app.handle}-std`, title: 'Service std', price: '12.50', code: `${app.handle}-std`, source: app.handle, description: 'Two to four days', min_delivery_date: '2026-12-01', max_delivery_date: '2026-12-03' },
        { handle: `app-${app.handle}-exp`, title: 'Service exp', price: '29.99', code: `${app.handle}-exp`, source: app.handle, description: null, min_delivery_date: null, max_delivery_date: null },
      ],
      dropped: [],
      droppedCount: 0,
    });

    const received = rx.received.slice(before);
    expect(received).toHaveLength(1);
    const [req] = received;
    expect(req.path).toBe('/good');
    expect(req.raw.toString('utf8')).toBe(data.requestBody);
    const verified = verifyMessage<any>({ rawBody: req.raw, headers: req.headers, secret: app.clientSecret });
    expect(verified).toMatchObject({ ok: true, topic: 'shipping/rates', shop: SAMPLE_SHOP_DOMAIN, apiVersion: API_VERSION });
    expect(verifyMessage({ rawBody: req.raw, headers: req.headers, secret: 'another-secret' })).toEqual({ ok: false, reason: 'bad signature' });
    expect(req.headers).toMatchObject({ 'content-type': 'application/json', 'x-svc-topic': 'shipping/rates', 'x-svc-shop-domain': SAMPLE_SHOP_DOMAIN });
    // C15.3's body: a sample origin and destination, two items (one that does not ship), in minor units.
    expect(JSON.parse(data.requestBody)).toEqual({
      rate: {
        origin: { country: 'US', province: 'California', city: 'Exampleville', zip: '00000', address1: '1 Example Street', address2: null, phone: '+1 555 0100' },
        destination: { country: 'US', province: 'NY', city: 'Exampleville', zip: '00000', address1: '2 Example Avenue', address2: 'Apt 3', name: 'Sample Buyer', company: null, phone: '+1 555 0101' },
        items: [
          { name: 'Sample T-shirt - M', sku: 'SAMPLE-TSHIRT-M', quantity: 2, grams: 200, price: 2500, requires_shipping: true, product_id: 0, variant_id: 0 },
          { name: 'Sample gift card', sku: 'SAMPLE-GIFT-CARD', quantity: 1, grams: 0, price: 1000, requires_shipping: false, product_id: 0, variant_id: 0 },
        ],
        currency: 'USD',
        locale: 'en',
      },
    });
  });

  it('each rate a checkout drops is listed with its index and the reason, from the checkout reader', async () => {
    const app = await shippingApp('/partly');
    const data = (await test(app)).json().data;
    expect(data.outcome).toEqual({ responseStatus: 200, durationMs: expect.any(Number), error: null });
    expect(data.rates.map((r: { handle: string; price: string }) => [r.handle, r.price])).toEqual([[`app-${app.handle}-std`, '12.50']]);
    expect(data.dropped).toEqual([
      { index: 1, reason: 'rates[1]: currency "EUR" is not the checkout\'s USD' },
      { index: 2, reason: 'rates[2].total_price must be a whole number of minor units, as an integer or a string of digits' },
      { index: 3, reason: 'rates[3].service_code is missing' },
      { index: 4, reason: 'rates[4]: service_code "std" is already rates[0]\'s' },
      { index: 5, reason: 'rates[5] must be an object, not a number' },
      { index: 6, reason: 'rates[6].total_price must be a whole number of minor units, as an integer or a string of digits' },
      { index: 7, reason: 'rates[7].service_code is blank' },
      { index: 8, reason: 'rates[8].currency is missing' },
    ]);
    expect(data.droppedCount).toBe(8);
    expect(data.malformed).toBeNull();
  });

  it('a currency asked for: the request is in it (JPY has no minor digits), and USD rates are then dropped', async () => {
    const app = await shippingApp('/good');
    const data = (await test(app, { currency: 'jpy' })).json().data;
    expect(data.currency).toBe('JPY');
    expect(JSON.parse(data.requestBody).rate).toMatchObject({ currency: 'JPY', items: [{ price: 25 }, { price: 10 }] });
    expect(data.rates).toEqual([]);
    expect(data.dropped.map((d: { reason: string }) => d.reason)).toEqual(['rates[0]: currency "USD" is not the checkout\'s JPY', 'rates[1]: currency "USD" is not the checkout\'s JPY']);
  });

  it('only the first 20 well-formed rates are offered; the rest are listed as dropped', async () => {
    const data = (await test(await shippingApp('/many'))).json().data;
    expect(data.rates).toHaveLength(20);
    expect(data.dropped).toEqual([20, 21, 22].map((i) => ({ index: i, reason: `rates[${i}]: only the first 20 well-formed rates are kept` })));
  });

  it('a malformed reply: no rates, and why (not JSON, no rates array, over the size limit)', async () => {
    const app = await shippingApp(null);
    const cases: [string, string | RegExp][] = [
      ['/not-json', /^the reply is not JSON \(.+\)$/],
      ['/no-rates', 'the reply has no "rates" array'],
      ['/rates-object', 'the reply\'s "rates" must be an array, not an object'],
      ['/huge', /^the reply is over the 262144-byte limit and was cut there: the reply is not JSON \(.+\)$/],
    ];
    for (const [path, why] of cases) {
      const data = (await test(app, { address: `${rx.url}${path}` })).json().data;
      expect(data.outcome, path).toEqual({ responseStatus: 200, durationMs: expect.any(Number), error: 'malformed_reply' });
      expect(data.malformed, path).toMatch(why);
      expect(data.rates, path).toEqual([]);
    }
  });

  it('a non-2xx answer and a slow app (the 5 s timeout): no rates, and the outcome says why', async () => {
    const app = await shippingApp('/down');
    const down = (await test(app)).json().data;
    expect(down).toMatchObject({ outcome: { responseStatus: 503, error: 'non_2xx' }, responseBody: 'maintenance', malformed: null, rates: [], dropped: [] });
    const started = Date.now();
    const slow = (await test(app, { address: `${rx.url}/slow` })).json().data;
    expect(slow).toMatchObject({ address: `${rx.url}/slow`, outcome: { responseStatus: null, error: 'timeout' }, responseBody: null, rates: [] });
    // At the timeout, not at the app's answer (12 s).
    expect(Date.now() - started).toBeGreaterThanOrEqual(4900);
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);

  it('nothing listening: a network error', async () => {
    const closed = await startReceiver();
    await closed.close();
    const data = (await test(await shippingApp(null), { address: `${closed.url}/gone` })).json().data;
    expect(data.outcome).toMatchObject({ responseStatus: null, error: expect.stringMatching(/^network_error: /) });
  });

  it(`at most ${RATE_TESTS_PER_MINUTE} a minute per app: then 429 with Retry-After, until the minute has passed`, async () => {
    const app = await shippingApp('/bound');
    for (let i = 0; i < RATE_TESTS_PER_MINUTE; i++) expect((await test(app)).statusCode).toBe(200);
    const before = rx.received.length;
    const refused = await test(app);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.json()).toEqual(envelopeError(429, `At most ${RATE_TESTS_PER_MINUTE} shipping rate tests a minute per app`));
    expect(rx.received.length).toBe(before);
    // Another app is not held back.
    expect((await test(await shippingApp('/bound'))).statusCode).toBe(200);
    await h.advance(61);
    expect((await test(app)).statusCode).toBe(200);
  }, 60_000);
});

describe('refusals', () => {
  it('no ratesUrl and no address, an address that is not an http(s) URL, a currency that is not ISO 4217: 422, nothing sent', async () => {
    const app = await shippingApp(null);
    const before = rx.received.length;
    const none = await test(app);
    expect(none.statusCode).toBe(422);
    expect(none.json()).toEqual(envelopeError(422, 'The app declares no extensions.shipping.ratesUrl: give an address to send the rate request to'));
    expect((await test(app, { address: 'not a url' })).json()).toEqual(envelopeError(422, 'address must be an absolute URL'));
    expect((await test(app, { address: 'ftp://example.com/rates' })).json()).toEqual(envelopeError(422, 'address must be an http or https URL'));
    expect((await test(app, { address: `${rx.url}/good`, currency: 'ZZZ' })).json()).toEqual(envelopeError(422, 'currency must be an ISO 4217 currency code'));
    expect((await test(app, { address: 7 })).statusCode).toBe(400);
    expect(rx.received.length).toBe(before);
  });

  it("another developer's app: 403; an unknown app: 404 (C3.2, as the webhook test)", async () => {
    const app = await shippingApp('/good');
    const intruder = await signupPartner(h);
    const before = rx.received.length;
    const theirs = await h.req('POST', `/apps/developer/${app.appId}/shipping-rates/test`, { token: intruder.token, body: {} });
    expect(theirs.json()).toEqual(envelopeError(403, 'You do not own this app'));
    for (const id of ['00000000-0000-0000-0000-0000000000aa', 'not-a-uuid']) {
      const res = await h.req('POST', `/apps/developer/${id}/shipping-rates/test`, { token: intruder.token, body: {} });
      expect(res.json(), id).toEqual(envelopeError(404, 'App not found'));
    }
    expect(rx.received.length).toBe(before);
  });
});
