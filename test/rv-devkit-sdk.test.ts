// The developer kit (packages/app-sdk, examples/shipping-app) reviewed as an app developer meets it,
// against the real platform over HTTP: each test is a bug found and fixed (docs/decisions.md, "App
// developer kit (issue 14)").
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, listenOnLoopback, type Harness } from './helpers/harness.js';
import { createTestApp, installApp, signupMerchant, signupPartner } from './helpers/actors.js';
import { handoffFor } from './helpers/sdk.js';
import { startFaultyProxy } from './helpers/faulty-proxy.js';
import { startReceiver } from './fixtures/webhook-receiver.js';
import { gdprDispatcher } from '../src/gdpr/gdpr.dispatch.js';
import {
  acknowledgeGdprRequest, CodeAlreadyExchangedError, completeGdprRequest, createAppClient, exchangeCode, MemoryTokenStore, refusalStatus, signBody, TokenKeeper,
  verifyHandoff, verifyRateRequest, type AppCredentials, type Tokens,
} from '../packages/app-sdk/src/index.js';

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await createHarness();
  base = await listenOnLoopback(h);
});
afterAll(async () => {
  await h?.close();
});

/** A store whose next `set` fails, as a full disk or a lost database connection would. */
class FlakyStore extends MemoryTokenStore {
  failNext = false;
  override async set(shop: string, tokens: Tokens) {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('disk full');
    }
    await super.set(shop, tokens);
  }
}

describe('TokenKeeper.install when saving the first tokens fails (C4.4)', () => {
  it('keeps them: the reload the README answers "still installed" is installed, and they are saved on the next use', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { scopes: ['read_products'] });
    const creds: AppCredentials = { baseUrl: base, clientId: app.clientId, clientSecret: app.clientSecret };
    const store = new FlakyStore();
    const keeper = new TokenKeeper(creds, store);
    const query = await handoffFor(h, merchant, app);

    // The app's /auth as the README writes it: the code is exchanged, saving its tokens fails.
    const auth = async () => {
      const handoff = verifyHandoff(query, app.clientSecret);
      if (!handoff.ok) throw new Error(handoff.reason);
      try {
        await keeper.install(handoff.shop, await exchangeCode(creds, handoff));
        return 'installed';
      } catch (err) {
        if (!(err instanceof CodeAlreadyExchangedError)) throw err;
        return 'still installed'; // a reload of the page
      }
    };
    store.failNext = true;
    await expect(auth()).rejects.toThrow('disk full');
    // The merchant reloads: the code is not sent again (it would revoke the tokens), the page says installed.
    expect(await auth()).toBe('still installed');

    // And it is: the tokens the platform gave once are served, and saved by that use.
    const token = await keeper.accessToken(merchant.slug);
    expect(token).toMatch(/^svcat_/);
    expect((await store.get(merchant.slug))?.accessToken).toBe(token);
    const served = await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${token}` } });
    expect(served.status).toBe(200);
  });
});

describe('acknowledging and completing a GDPR request (C9.2, C9.4)', () => {
  it('a 503 or a cut connection is sent again: repeating either is harmless, and the platform never delivers the webhook again (C9.4)', async () => {
    const receiver = await startReceiver();
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, {
      scopes: ['read_customers'],
      gdprUrls: { customerDataRequest: `${receiver.url}/gdpr`, customerRedact: `${receiver.url}/gdpr`, shopRedact: `${receiver.url}/gdpr` },
    });
    const { accessToken } = await installApp(h, merchant, app);
    const filed = await h.req('POST', '/apps/gdpr/data-request', { token: merchant.token, body: { customerEmail: 'grace@example.com' } });
    expect(filed.statusCode, filed.body).toBe(201);
    const { requestId } = filed.json().data;
    await gdprDispatcher(h.deps).settle();

    // The first acknowledge meets a 503 (a deploy, a database failover); the first complete loses its connection.
    const firsts = new Set<string>();
    const proxy = await startFaultyProxy(base, (req) => {
      const path = req.url!;
      const action = path.includes('/acknowledge/') ? 'fail' : path.includes('/complete/') ? 'drop' : 'pass';
      if (action === 'pass' || firsts.has(action)) return 'pass';
      firsts.add(action);
      return action;
    });
    try {
      const client = createAppClient({ baseUrl: proxy.url, accessToken, retry: { baseDelayMs: 10 } });
      const acked = await acknowledgeGdprRequest(client, requestId);
      expect(acked.appAcknowledgments).toEqual([expect.objectContaining({ appId: app.appId, status: 'acknowledged' })]);
      const done = await completeGdprRequest(client, requestId, { dataExportUrl: 'https://app.example.com/export/1' });
      expect(done).toMatchObject({ status: 'completed', dataExportUrl: 'https://app.example.com/export/1' });
      expect(proxy.seen.map((l) => `${l.method} ${l.path}`.replace(requestId, ':id'))).toEqual([
        'POST /apps/gdpr/acknowledge/:id', 'POST /apps/gdpr/acknowledge/:id', 'POST /apps/gdpr/complete/:id', 'POST /apps/gdpr/complete/:id',
      ]);
      // Other POSTs are still sent once: the platform has no idempotency key for them.
      const before = proxy.seen.length;
      firsts.clear();
      const fail = await startFaultyProxy(base, () => 'fail');
      try {
        const other = createAppClient({ baseUrl: fail.url, accessToken, retry: { baseDelayMs: 10 } });
        const res = await other.POST('/api/v1/customers.json', { body: { customer: { email: 'once@example.com' } } as never });
        expect(res.response.status).toBe(503);
        expect(fail.seen).toHaveLength(1);
      } finally {
        await fail.close();
      }
      expect(proxy.seen).toHaveLength(before);
    } finally {
      await proxy.close();
      await receiver.close();
    }
  });
});

describe('createAppClient: the rate-limit budget when answers come back out of order (app-api.md Limits; C5.5)', () => {
  it('an answer counted before others but arriving after them does not give back room the window no longer has: no 429', async () => {
    // A stand-in for the platform's limiter (app-api.md Limits 1): a sliding one-second window of 4,
    // a request recorded when it arrives, the headers of that moment on its answer, sent after `delay`.
    const LIMIT = 4;
    const window: number[] = [];
    let arrivals = 0;
    let refused = 0;
    const delays = [0, 300, 120, 0]; // by arrival: the second recorded answers last
    const server = createServer((req, res) => {
      const now = Date.now();
      while (window.length && window[0] <= now - 1000) window.shift();
      const n = arrivals++;
      const headers: Record<string, string> = { 'content-type': 'application/json', 'x-ratelimit-limit': String(LIMIT) };
      if (window.length >= LIMIT) {
        refused++;
        headers['x-ratelimit-remaining'] = '0';
        headers['x-ratelimit-reset'] = String(Math.ceil((window[0] + 1000) / 1000));
        headers['retry-after'] = '1';
        return void res.writeHead(429, headers).end('{"error":"Too Many Requests","message":"Rate limit exceeded, retry after 1 second"}');
      }
      window.push(now);
      headers['x-ratelimit-remaining'] = String(LIMIT - window.length);
      headers['x-ratelimit-reset'] = String(Math.ceil((window[0] + 1000) / 1000));
      setTimeout(() => res.writeHead(200, headers).end('{"products":[]}'), delays[n] ?? 0);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = createAppClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, accessToken: 't' });
      const get = () => client.GET('/api/v1/products.json');
      expect((await get()).response.status).toBe(200); // room unknown: one request alone
      // Three at once: recorded in the order sent, answered last to first.
      expect((await Promise.all([get(), get(), get()])).map((r) => r.response.status)).toEqual([200, 200, 200]);
      // The window is full (4 in well under a second): the next two wait for it instead of meeting a 429.
      expect((await Promise.all([get(), get()])).map((r) => r.response.status)).toEqual([200, 200]);
      expect(refused).toBe(0);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('verifyRateRequest takes rate requests only (C15.3)', () => {
  it('a signed delivery of another topic (an orders/create at the same address) is refused, not typed as a rate request', () => {
    const secret = 'rates-secret';
    const order = JSON.stringify({ id: 'o1', name: '#1001', shipping_lines: [] });
    const verdict = verifyRateRequest({ rawBody: order, headers: { 'X-SVC-Hmac-SHA256': signBody(order, secret), 'X-SVC-Topic': 'orders/create' }, secret });
    expect(verdict).toEqual({ ok: false, reason: 'not a rate request', topic: 'orders/create' });
    if (verdict.ok) throw new Error('narrowing');
    expect(refusalStatus(verdict)).toBe(400);

    const rate = JSON.stringify({ rate: { origin: {}, destination: {}, items: [], currency: 'USD', locale: 'en' } });
    const ok = verifyRateRequest({ rawBody: rate, headers: { 'x-svc-hmac-sha256': signBody(rate, secret), 'x-svc-topic': 'shipping/rates' }, secret });
    expect(ok).toMatchObject({ ok: true, topic: 'shipping/rates', payload: { rate: { currency: 'USD' } } });
  });
});
