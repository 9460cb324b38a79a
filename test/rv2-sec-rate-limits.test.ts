// Review (rv2-sec) of app-api.md Limits, "Request rate (app API /api/v1/ only)", through the HTTP
// surface: the rules the other rate-limit tests check on the limiter alone or on other routes.
// The limiter runs on a clock driven by hand (a fresh window per test, time frozen within it).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { createTestApp, installApp, signupMerchant, storeWithApp } from './helpers/actors.js';
import { MemoryRateLimiter } from '../src/ratelimit/memory.js';
import { WINDOW_MS } from '../src/ratelimit/limiter.js';

let h: Harness;
let limiterNow = Date.now();
const limiter = new MemoryRateLimiter({ now: () => limiterNow });

beforeAll(async () => {
  h = await createHarness({}, { limiter });
}, 60_000);
afterAll(() => h?.close());
beforeEach(() => {
  limiterNow = Math.max(limiterNow + WINDOW_MS, Date.now());
});

const rate = (res: any) => ({ limit: Number(res.headers['x-ratelimit-limit']), remaining: Number(res.headers['x-ratelimit-remaining']) });

describe('app-api.md Limits, Request rate (rv2-sec)', () => {
  it('C5.1: a 429 on an envelope endpoint (menus) is the rate-limit body, Retry-After 1, Remaining 0', async () => {
    const s = await storeWithApp(h, { scopes: ['read_content'] });
    for (let i = 0; i < 20; i++) expect((await h.req('GET', '/api/v1/menus.json', { token: s.accessToken })).statusCode).not.toBe(429);
    const res = await h.req('GET', '/api/v1/menus.json', { token: s.accessToken });
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({ error: expect.any(String), message: expect.stringContaining('1') });
    expect(res.headers['retry-after']).toBe('1');
    expect(rate(res)).toEqual({ limit: 20, remaining: 0 });
  });

  it('Limits 3: the bucket is the (app, store) pair, not the token: a refreshed token continues it', async () => {
    const s = await storeWithApp(h);
    for (let i = 0; i < 10; i++) await h.req('GET', '/api/v1/products.json', { token: s.accessToken });
    const r = await h.req('POST', '/apps/oauth/token', { body: { client_id: s.app.clientId, client_secret: s.app.clientSecret, grant_type: 'refresh_token', refresh_token: s.refreshToken } });
    expect(r.statusCode, r.body).toBe(200);
    const res = await h.req('GET', '/api/v1/products.json', { token: r.json().data.access_token });
    expect(rate(res)).toEqual({ limit: 20, remaining: 9 });
  });

  it('Limits 2: every method counts, HEAD and an unrouted OPTIONS (404) included', async () => {
    const s = await storeWithApp(h);
    const a = await h.req('HEAD', '/api/v1/products.json', { token: s.accessToken });
    const b = await h.req('OPTIONS', '/api/v1/products.json', { token: s.accessToken });
    const c = await h.req('GET', '/api/v1/products.json', { token: s.accessToken });
    expect([a.statusCode, b.statusCode, c.statusCode]).toEqual([200, 404, 200]);
    expect(rate(c)).toEqual({ limit: 20, remaining: 17 });
  });

  it('Limits 4: a tier change applies once 60 s of the service clock have passed (C12.1)', async () => {
    const s = await storeWithApp(h);
    expect(rate(await h.req('GET', '/api/v1/products.json', { token: s.accessToken })).limit).toBe(20);
    const p = await h.req('PATCH', `/apps/developer/apps/${s.app.appId}`, { token: s.partner.token, body: { tier: 'pro' } });
    expect(p.statusCode, p.body).toBe(200);
    await h.advance(60);
    expect(rate(await h.req('GET', '/api/v1/products.json', { token: s.accessToken })).limit).toBe(100);
  });

  it('Limits 3: one app on two stores, and two apps on one store, have separate buckets', async () => {
    const s = await storeWithApp(h);
    const m2 = await signupMerchant(h);
    const i2 = await installApp(h, m2, s.app);
    for (let i = 0; i < 20; i++) await h.req('GET', '/api/v1/products.json', { token: s.accessToken });
    expect((await h.req('GET', '/api/v1/products.json', { token: s.accessToken })).statusCode).toBe(429);
    expect(rate(await h.req('GET', '/api/v1/products.json', { token: i2.accessToken }))).toEqual({ limit: 20, remaining: 19 });
    const app2 = await createTestApp(h, s.partner.token);
    const j = await installApp(h, s.merchant, app2);
    expect(rate(await h.req('GET', '/api/v1/products.json', { token: j.accessToken }))).toEqual({ limit: 20, remaining: 19 });
  });
});
