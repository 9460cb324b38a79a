// The dashboard's Test page of an app (issue 15 over issue 14): "send a test webhook" and "test
// shipping rates" call the services of `POST /apps/developer/{appId}/webhooks/test` and
// `.../shipping-rates/test`, against a real HTTP receiver on loopback, and show the outcome on the
// page; a refusal (422, 429) is shown next to its field with what was typed kept; the form needs the
// session's CSRF token; another developer's app is "not found"; the app's reply is escaped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, type Answer, type Receiver } from './fixtures/webhook-receiver.js';
import { createTestApp, signupPartner } from './helpers/actors.js';
import { Browser, csrfOf, signedInBrowser } from './helpers/dashboard.js';
import { RATE_TESTS_PER_MINUTE } from '../src/checkout/rate-test.js';
import { TOPICS } from '../src/webhooks/topics.js';

let h: Harness;
let rx: Receiver;

const HOSTILE = '<script>alert("owned")</script>';
const json = (body: unknown): Answer => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const rate = (code: string, price: unknown, more: Record<string, unknown> = {}) => ({ service_name: `Service ${code}`, service_code: code, total_price: price, currency: 'USD', ...more });
const REPLIES: Record<string, Answer> = {
  '/hook': { status: 200, body: 'hook received' },
  '/hook-hostile': { status: 200, body: HOSTILE },
  '/hook-broken': { status: 500, body: 'receiver broke' },
  '/rates': json({ rates: [rate('std', 1250, { description: 'Two to four days' }), rate('eur', 900, { currency: 'EUR' }), rate('half', '12.5')] }),
  '/rates-hostile': json({ rates: [rate('std', 100, { service_name: HOSTILE }), rate('bad', 100, { currency: '<img src=x onerror=alert(1)>' })] }),
  '/rates-malformed': { status: 200, body: `rates: ${HOSTILE}` },
};

beforeAll(async () => {
  h = await createWebhookHarness();
  rx = await startReceiver((req) => REPLIES[req.path] ?? { status: 404, body: 'no such path' });
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

/** A developer signed in, with an app whose ratesUrl is on the receiver (or none). */
async function developerApp(ratesPath: string | null = '/rates') {
  const partner = await signupPartner(h);
  const extensions = ratesPath === null ? {} : { extensions: { shipping: { ratesUrl: `${rx.url}${ratesPath}` } } };
  const app = await createTestApp(h, partner.token, { scopes: ['write_shipping'], ...extensions });
  const browser = await signedInBrowser(h, partner.email);
  const pageUrl = `/dashboard/apps/${app.appId}/test`;
  return {
    app, browser, pageUrl,
    sendWebhook: (form: Record<string, string>) => browser.submit(pageUrl, `/dashboard/apps/${app.appId}/test/webhook`, form),
    testRates: (form: Record<string, string>) => browser.submit(pageUrl, `/dashboard/apps/${app.appId}/test/shipping-rates`, form),
  };
}

const receivedAt = (path: string) => rx.received.filter((r) => r.path === path).length;

describe('the Test page of an app', () => {
  it("is linked from the app's page, lists every topic the platform delivers and shows the manifest's ratesUrl as the default", async () => {
    const { app, browser, pageUrl } = await developerApp('/rates');
    expect((await browser.get(`/dashboard/apps/${app.appId}`)).html).toContain(`href="${pageUrl}"`);
    const page = await browser.get(pageUrl);
    expect(page.status).toBe(200);
    for (const topic of TOPICS) expect(page.html).toContain(`<option value="${topic}"`);
    expect(page.html).toContain(`the manifest's rates URL, <code>${rx.url}/rates</code>`);
    expect(page.html).toContain(`action="/dashboard/apps/${app.appId}/test/webhook"`);
    expect(page.html).toContain(`action="/dashboard/apps/${app.appId}/test/shipping-rates"`);
  });
});

describe('send a test webhook', () => {
  it("sends the topic's sample to the address and shows the outcome: status, response status, duration, the reply, a link to the log", async () => {
    const { app, sendWebhook } = await developerApp();
    const before = receivedAt('/hook');
    const res = await sendWebhook({ topic: 'orders/paid', address: `${rx.url}/hook` });
    expect(res.status, res.html).toBe(200);
    expect(receivedAt('/hook')).toBe(before + 1);
    expect(rx.received.filter((r) => r.path === '/hook').at(-1)!.headers['x-svc-topic']).toBe('orders/paid');
    const outcome = res.html.slice(res.html.indexOf('id="webhook-outcome"'));
    expect(outcome).toContain('<span class="status status-success">success</span>');
    expect(outcome).toMatch(/<dt>Response status<\/dt><dd>200<\/dd>/);
    expect(outcome).toMatch(/<dt>Duration<\/dt><dd>[0-9,.]+ ms<\/dd>/);
    expect(outcome).toContain('<dt>Error</dt><dd>none</dd>');
    expect(outcome).toContain('hook received');
    const { deliveries } = (await h.req('GET', `/apps/developer/${app.appId}/webhook-deliveries`, { token: app.developerToken })).json().data;
    expect(deliveries[0].source).toBe('test');
    expect(outcome).toContain(`href="/dashboard/apps/${app.appId}/deliveries/${deliveries[0].deliveryId}"`);
    // The form keeps the topic chosen.
    expect(res.html).toContain('<option value="orders/paid" selected>');
  });

  it("a receiver's failure is the outcome (failed, its status, the error), not an error page", async () => {
    const { sendWebhook } = await developerApp();
    const res = await sendWebhook({ topic: 'orders/create', address: `${rx.url}/hook-broken` });
    expect(res.status).toBe(200);
    const outcome = res.html.slice(res.html.indexOf('id="webhook-outcome"'));
    expect(outcome).toContain('<span class="status status-failed">failed</span>');
    expect(outcome).toMatch(/<dt>Response status<\/dt><dd>500<\/dd>/);
    expect(outcome).toContain('receiver broke');
  });

  it("escapes the receiver's reply", async () => {
    const { sendWebhook } = await developerApp();
    const res = await sendWebhook({ topic: 'orders/create', address: `${rx.url}/hook-hostile` });
    expect(res.status).toBe(200);
    expect(res.html).not.toContain(HOSTILE);
    expect(res.html).toContain('&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;');
  });

  it('a refused topic or address (422) is shown next to its field, what was typed kept, and nothing is sent', async () => {
    const { sendWebhook } = await developerApp();
    const before = rx.received.length;
    const badAddress = await sendWebhook({ topic: 'orders/create', address: 'ftp://example.com/x' });
    expect(badAddress.status).toBe(422);
    expect(badAddress.html).toMatch(/<p class="field-error" id="webhook-address-error">address [^<]+<\/p>/);
    expect(badAddress.html).toMatch(/id="webhook-address" name="address" type="url" value="ftp:\/\/example.com\/x" required aria-invalid="true" aria-describedby="webhook-address-hint webhook-address-error"/);
    const rateTopic = await sendWebhook({ topic: 'shipping/rates', address: `${rx.url}/hook` });
    expect(rateTopic.status).toBe(422);
    expect(rateTopic.html).toContain('id="webhook-topic-error">topic is the shipping rate request, sent by checkouts, not as a test delivery</p>');
    const unknown = await sendWebhook({ topic: 'orders/<b>', address: `${rx.url}/hook` });
    expect(unknown.status).toBe(422);
    expect(unknown.html).toContain('id="webhook-topic-error">topic is not a topic the platform delivers</p>');
    expect(rx.received.length).toBe(before);
  });
});

describe('test shipping rates', () => {
  it("sends the sample request to the manifest's ratesUrl and shows the offered rates, each dropped rate with its reason", async () => {
    const { testRates } = await developerApp('/rates');
    const before = receivedAt('/rates');
    const res = await testRates({ address: '', currency: '' });
    expect(res.status, res.html).toBe(200);
    expect(receivedAt('/rates')).toBe(before + 1);
    const outcome = res.html.slice(res.html.indexOf('id="rates-outcome"'));
    expect(outcome).toContain('1 rate offered');
    expect(outcome).toContain(`<dt>Sent to</dt><dd class="wrap">${rx.url}/rates</dd>`);
    expect(outcome).toContain('<dt>Currency</dt><dd>USD</dd>');
    expect(outcome).toMatch(/<dt>Response status<\/dt><dd>200<\/dd>/);
    expect(outcome).toMatch(/<dt>Duration<\/dt><dd>[0-9,.]+ ms<\/dd>/);
    expect(outcome).toMatch(/<tr><td>Service std<\/td><td><code>[^<]+-std<\/code><\/td><td>\$12\.50<\/td><td>Two to four days<\/td>/);
    expect(outcome).toContain('Dropped rates (2)');
    expect(outcome).toContain('rates[1]: currency &quot;EUR&quot; is not the checkout&#39;s USD');
    expect(outcome).toContain('<li>rates[2].total_price must be a whole number of minor units');
  });

  it('an address given and a currency are used; a reply that is no JSON is shown with why, escaped', async () => {
    const { testRates } = await developerApp(null);
    const res = await testRates({ address: `${rx.url}/rates-malformed`, currency: 'eur' });
    expect(res.status).toBe(200);
    const outcome = res.html.slice(res.html.indexOf('id="rates-outcome"'));
    expect(outcome).toContain('<dt>Currency</dt><dd>EUR</dd>');
    expect(outcome).toContain('<dt>Error</dt><dd>malformed_reply</dd>');
    expect(outcome).toMatch(/id="rates-malformed">The reply gives no rates: [^<]+<\/p>/);
    expect(res.html).not.toContain(HOSTILE);
    expect(outcome).toContain('rates: &lt;script&gt;');
  });

  it("escapes the app's rates and the reasons quoting its reply", async () => {
    const { testRates } = await developerApp('/rates-hostile');
    const res = await testRates({});
    expect(res.status).toBe(200);
    expect(res.html).not.toContain(HOSTILE);
    expect(res.html).not.toContain('<img src=x');
    expect(res.html).toContain('<tr><td>&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;</td>');
    expect(res.html).toContain('currency &quot;&lt;img src=x onerror=alert(1)&gt;&quot; is not the checkout&#39;s USD');
  });

  it('refusals (422) are shown next to their field: no ratesUrl and no address, a bad currency, a bad address', async () => {
    const { testRates } = await developerApp(null);
    const before = rx.received.length;
    const none = await testRates({ address: '  ', currency: '' });
    expect(none.status).toBe(422);
    expect(none.html).toContain('Required: the manifest declares no rates URL.');
    expect(none.html).toContain('id="rates-address-error">address is required when the app declares no ratesUrl</p>');
    const currency = await testRates({ address: `${rx.url}/rates`, currency: 'XXQ' });
    expect(currency.status).toBe(422);
    expect(currency.html).toContain('id="rates-currency-error">currency must be an ISO 4217 currency code</p>');
    expect(currency.html).toContain('value="XXQ"');
    const address = await testRates({ address: 'not a url' });
    expect(address.status).toBe(422);
    expect(address.html).toMatch(/id="rates-address-error">address [^<]+<\/p>/);
    expect(rx.received.length).toBe(before);
  });

  it('past the minute\'s tests (429) the page says so with Retry-After, keeping the form, and sends nothing', async () => {
    const { app, testRates } = await developerApp('/rates');
    for (let i = 0; i < RATE_TESTS_PER_MINUTE; i++) {
      await h.deps.attempts.take([{ key: `rate-test:${app.appId}`, limit: RATE_TESTS_PER_MINUTE, windowMs: 60_000 }], h.deps.clock.nowMs());
    }
    const before = receivedAt('/rates');
    const res = await testRates({ currency: 'CAD' });
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.html).toContain(`id="rates-errors"><p>At most ${RATE_TESTS_PER_MINUTE} shipping rate tests a minute per app</p>`);
    expect(res.html).toContain('value="CAD"');
    expect(receivedAt('/rates')).toBe(before);
  });
});

describe('the forms are the session\'s and the app is the developer\'s', () => {
  it('a form without the session\'s CSRF token is refused (403) and sends nothing', async () => {
    const { app, browser } = await developerApp('/rates');
    const before = rx.received.length;
    for (const [action, form] of [['webhook', { topic: 'orders/create', address: `${rx.url}/hook` }], ['shipping-rates', {}]] as const) {
      const missing = await browser.post(`/dashboard/apps/${app.appId}/test/${action}`, form);
      expect([action, missing.status]).toEqual([action, 403]);
      expect(missing.html).toContain('This form has expired');
      const wrong = await browser.post(`/dashboard/apps/${app.appId}/test/${action}`, { ...form, _csrf: 'x'.repeat(43) });
      expect([action, wrong.status]).toEqual([action, 403]);
    }
    expect(rx.received.length).toBe(before);
    // The same form with the session's token is taken.
    const withToken = await browser.submit(`/dashboard/apps/${app.appId}/test`, `/dashboard/apps/${app.appId}/test/webhook`, { topic: 'orders/create', address: `${rx.url}/hook` });
    expect(withToken.status).toBe(200);
    expect(rx.received.length).toBe(before + 1);
  });

  it('another developer\'s app is "not found" (404) on the page and both forms, and nothing is sent', async () => {
    const { app, browser: owner, pageUrl } = await developerApp('/rates');
    expect((await owner.get(pageUrl)).status).toBe(200);
    const stranger = await signupPartner(h);
    const browser: Browser = await signedInBrowser(h, stranger.email);
    const token = csrfOf((await browser.get('/dashboard/apps')).html);
    const before = rx.received.length;
    expect((await browser.get(`/dashboard/apps/${app.appId}/test`)).status).toBe(404);
    const hook = await browser.post(`/dashboard/apps/${app.appId}/test/webhook`, { _csrf: token, topic: 'orders/create', address: `${rx.url}/hook` });
    expect(hook.status).toBe(404);
    const rates = await browser.post(`/dashboard/apps/${app.appId}/test/shipping-rates`, { _csrf: token });
    expect(rates.status).toBe(404);
    expect(rates.html).not.toContain(`${rx.url}/rates`);
    expect(rx.received.length).toBe(before);
  });
});
