// The app SDK (packages/app-sdk, issue 14) against the real platform over HTTP: the
// install handoff checked and its code exchanged; tokens kept fresh with single-flight refreshes
// (never tripping reuse detection); tokens kept in a file; session tokens verified; webhooks and
// rate requests verified over their raw bytes, and refused when anything is off.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, listenOnLoopback, type Harness } from './helpers/harness.js';
import { createTestApp, signupMerchant, signupPartner, type Merchant, type TestApp } from './helpers/actors.js';
import { tempDir } from './helpers/temp-dirs.js';
import { handoffFor as handoffFromPlatform, installedThroughSdk } from './helpers/sdk.js';
import { signBody as platformSign } from '../src/webhooks/deliveries.repo.js';
import {
  CodeAlreadyExchangedError, evaluateOnce, exchangeCode, FileTokenStore, MemoryTokenStore, PlatformError, rateReply, signBody, TokenKeeper, verifyHandoff, verifyMessage,
  verifySessionToken, type AppCredentials,
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

const handoffFor = (merchant: Merchant, app: TestApp) => handoffFromPlatform(h, merchant, app);
const installed = () => installedThroughSdk(h, base, ['read_products', 'read_orders', 'read_shop']);

describe('install: the handoff (C4.2) and the code (C4.4)', () => {
  it('accepts the platform handoff and exchanges its code; refuses a tampered, unsigned, stale or foreign one', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const query = await handoffFor(merchant, app);
    const ok = verifyHandoff(query, app.clientSecret);
    expect(ok).toMatchObject({ ok: true, shop: merchant.slug, code: query.get('code'), state: query.get('state') });

    const tampered = new URLSearchParams(query);
    tampered.set('shop', 'another-store');
    expect(verifyHandoff(tampered, app.clientSecret)).toEqual({ ok: false, reason: 'bad hmac' });
    const unsigned = new URLSearchParams(query);
    unsigned.delete('hmac');
    expect(verifyHandoff(unsigned, app.clientSecret)).toEqual({ ok: false, reason: 'missing hmac' });
    expect(verifyHandoff(query, 'not-the-secret')).toEqual({ ok: false, reason: 'bad hmac' });
    expect(verifyHandoff(query, app.clientSecret, { now: new Date(Date.now() + 11 * 60_000) })).toEqual({ ok: false, reason: 'stale timestamp' });
    expect(verifyHandoff(`${query.toString()}&shop=x`, app.clientSecret)).toEqual({ ok: false, reason: 'a parameter is repeated' });

    const creds = { baseUrl: base, clientId: app.clientId, clientSecret: app.clientSecret };
    const tokens = await exchangeCode(creds, ok as { code: string; state: string });
    expect(tokens.accessToken).toMatch(/^svcat_/);
    expect(tokens.accessExpiresAt).toBeGreaterThan(Date.now());
    const api = await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${tokens.accessToken}` } });
    expect(api.status).toBe(200);
    // A code is single use (C4.3), and one presented again revokes the tokens it gave (C4.4): the
    // SDK does not send it a second time (a reload of the app's /auth page), and the tokens live on.
    await expect(exchangeCode(creds, ok as { code: string; state: string })).rejects.toBeInstanceOf(CodeAlreadyExchangedError);
    expect((await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${tokens.accessToken}` } })).status).toBe(200);
    // A code the platform refuses (unknown) comes back as a PlatformError.
    await expect(exchangeCode(creds, { code: 'svccode_unknown', state: ok.ok ? ok.state : '' })).rejects.toBeInstanceOf(PlatformError);
  });
});

describe('a code is sent once (C4.4: a code presented twice revokes the tokens it gave)', () => {
  it('two exchanges of one code at once (a double click) share one request; a code the platform refused may be tried again', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const creds = { baseUrl: base, clientId: app.clientId, clientSecret: app.clientSecret };
    const first = verifyHandoff(await handoffFor(merchant, app), app.clientSecret);
    if (!first.ok) throw new Error(first.reason);
    const [a, b] = await Promise.all([exchangeCode(creds, first), exchangeCode(creds, first)]);
    expect(b.accessToken).toBe(a.accessToken);
    // Sent twice, the second would have revoked it.
    expect((await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${a.accessToken}` } })).status).toBe(200);
    await expect(exchangeCode(creds, first)).rejects.toBeInstanceOf(CodeAlreadyExchangedError);

    const second = verifyHandoff(await handoffFor(merchant, app), app.clientSecret);
    if (!second.ok) throw new Error(second.reason);
    await expect(exchangeCode(creds, { code: second.code, state: 'not-the-state' })).rejects.toBeInstanceOf(PlatformError);
    // Refused, it gave this app nothing to lose: sent again, the platform answers again.
    const again = await exchangeCode(creds, second).then(() => 'sent', (e: Error) => (e instanceof PlatformError ? 'sent' : e.name));
    expect(again).toBe('sent');
  });
});

describe('tokens kept fresh (C4.5)', () => {
  it('concurrent callers share one refresh: the rotated refresh token is never presented again', async () => {
    const { merchant, creds, tokens } = await installed();
    const store = new MemoryTokenStore();
    let clock = Date.now();
    const keeper = new TokenKeeper(creds, store, { now: () => clock });
    await keeper.install(merchant.slug, tokens);
    expect(await keeper.accessToken(merchant.slug)).toBe(tokens.accessToken);

    clock = tokens.accessExpiresAt; // due for a refresh
    const fresh = await Promise.all(Array.from({ length: 8 }, () => keeper.accessToken(merchant.slug)));
    expect(new Set(fresh).size).toBe(1);
    expect(fresh[0]).not.toBe(tokens.accessToken);
    // Reuse detection (C4.5) would have revoked everything: the new token works.
    const api = await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${fresh[0]}` } });
    expect(api.status).toBe(200);
    const { rows } = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM refresh_tokens r JOIN installations i ON i.id = r.installation_id JOIN apps a ON a.id = i.app_id WHERE a.client_id = $1`,
      [creds.clientId],
    );
    expect(rows[0].n).toBe(2); // the first, used once, and the one it was exchanged for
  });

  it('a file store keeps the tokens across restarts of the app, readable by no one else', async () => {
    const { merchant, tokens } = await installed();
    const path = join(tempDir('svc-sdk-tokens-'), 'tokens.json');
    await new FileTokenStore(path).set(merchant.slug, tokens);
    expect(await new FileTokenStore(path).get(merchant.slug)).toEqual(tokens);
    const { statSync } = await import('node:fs');
    expect(statSync(path).mode & 0o077).toBe(0);
    await new FileTokenStore(path).delete(merchant.slug);
    expect(await new FileTokenStore(path).get(merchant.slug)).toBeNull();
  });
});

describe('session tokens (C4.8)', () => {
  it("verifies the platform's session token; refuses another app's, a wrong issuer and an expired one", async () => {
    const { merchant, app } = await installed();
    const res = await h.req('GET', `/apps/session-token?client_id=${app.clientId}`, { token: merchant.token });
    expect(res.statusCode, res.body).toBe(200);
    const token = res.json().data.sessionToken;
    const issuer = h.deps.config.siteUrl;
    const session = await verifySessionToken(token, { clientId: app.clientId, clientSecret: app.clientSecret, issuer });
    expect(session).toMatchObject({ shop: merchant.slug, storeId: merchant.storeId });
    // The platform's URL as an app keeps it (PLATFORM_URL), with a trailing slash or without: the same issuer.
    const slashed = issuer.endsWith('/') ? issuer.replace(/\/+$/, '') : `${issuer}/`;
    await expect(verifySessionToken(token, { clientId: app.clientId, clientSecret: app.clientSecret, issuer: slashed })).resolves.toMatchObject({ shop: merchant.slug });
    await expect(verifySessionToken(token, { clientId: 'svcapp_other', clientSecret: app.clientSecret, issuer })).rejects.toThrow();
    await expect(verifySessionToken(token, { clientId: app.clientId, clientSecret: 'wrong', issuer })).rejects.toThrow();
    await expect(verifySessionToken(token, { clientId: app.clientId, clientSecret: app.clientSecret, issuer: 'https://elsewhere.example' })).rejects.toThrow();
    await expect(verifySessionToken(token, { clientId: app.clientId, clientSecret: app.clientSecret, issuer }, { now: new Date(Date.now() + 120_000) })).rejects.toThrow();
  });
});

describe('webhooks and rate requests (C8.3, C15.3)', () => {
  it("verifies a platform-signed body over its raw bytes, with the app's secret; refuses it changed, unsigned or signed otherwise", async () => {
    const { app } = await installed();
    // A delivery body signed by the platform's own signing code (src/webhooks/deliveries.repo.ts).
    const text = JSON.stringify({ id: 1, note: 'caf\u00e9 \u{1F600}' });
    const body = Buffer.from(text);
    const headers = new Headers({ 'x-svc-hmac-sha256': platformSign(app.clientSecret, text), 'x-svc-topic': 'orders/create', 'x-svc-shop-domain': 'demo-store', 'x-svc-api-version': '2026-06' });
    expect(verifyMessage({ rawBody: body, headers, secret: app.clientSecret })).toEqual({ ok: true, topic: 'orders/create', shop: 'demo-store', apiVersion: '2026-06', payload: { id: 1, note: 'caf\u00e9 \u{1F600}' } });
    const nodeHeaders = { 'x-svc-hmac-sha256': signBody(body, app.clientSecret), 'x-svc-topic': 'orders/create' };
    expect(verifyMessage({ rawBody: body, headers: nodeHeaders, secret: app.clientSecret }).ok).toBe(true);

    const changed = Buffer.from(body);
    changed[5] ^= 1;
    expect(verifyMessage({ rawBody: changed, headers, secret: app.clientSecret })).toEqual({ ok: false, reason: 'bad signature' });
    expect(verifyMessage({ rawBody: body, headers: {}, secret: app.clientSecret })).toEqual({ ok: false, reason: 'missing signature' });
    expect(verifyMessage({ rawBody: body, headers: { 'x-svc-hmac-sha256': 'short' }, secret: app.clientSecret })).toEqual({ ok: false, reason: 'bad signature' });
    expect(verifyMessage({ rawBody: body, headers, secret: 'another-secret' })).toEqual({ ok: false, reason: 'bad signature' });
    // The SDK's own signing (for an app's tests) matches the platform's.
    expect(signBody(text, app.clientSecret)).toBe(platformSign(app.clientSecret, text));
  });

  it('answers a rate request in the shape the platform reads', () => {
    const reply = JSON.parse(rateReply([{ service_name: 'Ground', service_code: 'ground', total_price: 899, currency: 'USD', description: '3 to 5 days' }]));
    expect(reply).toEqual({ rates: [{ service_name: 'Ground', service_code: 'ground', total_price: 899, currency: 'USD', description: '3 to 5 days' }] });
  });
});

describe('functions (C11): the local run is the production run', () => {
  it('evaluateOnce gives what the platform gives', async () => {
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const request = { target: 'cart.validations.generate.run', expression: '{"operations": [{"validationAdd": {"errors": [{"message": "m" + string(int(input.n)), "target": "cart"}]}}]}', input: { n: 3 } };
    const remote = await h.req('POST', `/apps/developer/${app.appId}/functions/run`, { token: partner.token, body: request });
    const local = evaluateOnce(request);
    const { durationMs: _a, ...fromPlatform } = remote.json().data;
    expect(fromPlatform).toEqual({ status: local.status, errorType: local.errorType, errorMessage: local.errorMessage, output: local.output });
  });
});
