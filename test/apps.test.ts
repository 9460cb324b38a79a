// Apps on the developer API (contract C3, C14.9): create, list, get, patch, rotate-secret, version
// roll-out to installations, and the role gates of /apps/developer/.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { createTestApp, installApp, operatorToken, signupMerchant, signupPartner, staffToken, storeWithApp } from './helpers/actors.js';
import { SecretBox } from '../src/crypto.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const uniq = () => randomBytes(5).toString('hex');
const APP_FIELDS = [
  'appId', 'name', 'handle', 'clientId', 'clientSecret', 'appUrl', 'redirectUrls', 'scopes', 'tier', 'gdprUrls', 'extensions',
  'pricing', 'version', 'rating', 'reviewCount', 'createdAt', 'updatedAt',
].sort();
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function create(token: string, body: Record<string, unknown>) {
  return h.req('POST', '/apps/developer/apps', { token, body });
}

const minimal = (extra: Record<string, unknown> = {}) => ({
  name: `Minimal ${uniq()}`,
  appUrl: 'https://minimal.example.com/app',
  scopes: ['read_products'],
  ...extra,
});

async function exchange(clientId: string, clientSecret: string, code: string | null, state: string | null) {
  return h.req('POST', '/apps/oauth/token', { body: { client_id: clientId, client_secret: clientSecret, grant_type: 'authorization_code', code, state } });
}

async function authorize(merchantToken: string, clientId: string) {
  const res = await h.req('GET', `/apps/oauth/authorize?client_id=${encodeURIComponent(clientId)}`, { token: merchantToken });
  expect(res.statusCode).toBe(200);
  const params = new URL(res.json().data.redirectUrl).searchParams;
  return { code: params.get('code'), state: params.get('state'), installationId: res.json().data.installationId as string };
}

describe('C3.1 create an app', () => {
  it('C3.1 201 envelope data.app with every field, as sent', async () => {
    const p = await signupPartner(h);
    const handle = `full-app-${uniq()}`;
    const body = {
      name: 'Full App',
      handle,
      appUrl: 'https://full.example.com/shipping',
      redirectUrls: ['https://full.example.com/callback', 'https://full.example.com/other'],
      scopes: ['read_products', 'write_orders', 'read_customers'],
      tier: 'pro',
      gdprUrls: {
        customerDataRequest: 'https://full.example.com/gdpr/data',
        customerRedact: 'https://full.example.com/gdpr/redact',
        shopRedact: 'https://full.example.com/gdpr/shop',
      },
      extensions: { webhooks: [{ topic: 'orders/create', uri: 'https://full.example.com/hooks/orders' }], salesChannel: true },
      pricing: { type: 'recurring', amount: '9.99', currency: 'USD', interval: 'month', trialDays: 14 },
      version: '2.3.4',
    };
    const res = await create(p.token, body);
    expect(res.statusCode).toBe(201);
    const envelope = res.json();
    expect(envelope).toMatchObject({ status: 201, state: 'success', message: null, count: null, pagination: null });
    expect(Object.keys(envelope).sort()).toEqual(['count', 'data', 'message', 'pagination', 'state', 'status']);
    expect(Object.keys(envelope.data)).toEqual(['app']);
    const app = envelope.data.app;
    expect(Object.keys(app).sort()).toEqual(APP_FIELDS);
    expect(app).toEqual({
      appId: expect.stringMatching(UUID),
      name: 'Full App',
      handle,
      clientId: expect.any(String),
      clientSecret: expect.any(String),
      appUrl: body.appUrl,
      redirectUrls: body.redirectUrls,
      scopes: body.scopes,
      tier: 'pro',
      gdprUrls: body.gdprUrls,
      extensions: body.extensions,
      pricing: body.pricing,
      version: '2.3.4',
      rating: 0,
      reviewCount: 0,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    expect(app.clientSecret.length).toBeGreaterThanOrEqual(32);
    expect(app.clientId).not.toBe(app.clientSecret);
    expect(app.createdAt).toBe(app.updatedAt);
  });

  it('C3.1 defaults: tier free, pricing {type: free}, version 1.0.0, rating 0, reviewCount 0, redirectUrls [], gdprUrls null', async () => {
    const p = await signupPartner(h);
    const res = await create(p.token, minimal());
    expect(res.statusCode).toBe(201);
    const { app } = res.json().data;
    expect(app).toMatchObject({ tier: 'free', pricing: { type: 'free' }, version: '1.0.0', rating: 0, reviewCount: 0, redirectUrls: [], gdprUrls: null, extensions: {} });
    expect(app.pricing).toEqual({ type: 'free' });
  });

  it('C14.9 the default handle is the lowercase slug of the name', async () => {
    const p = await signupPartner(h);
    const res = await create(p.token, minimal({ name: 'Acc Shipping Helper x1' }));
    expect(res.statusCode).toBe(201);
    expect(res.json().data.app.handle).toBe('acc-shipping-helper-x1');
    expect(res.json().data.app.name).toBe('Acc Shipping Helper x1');
  });

  it('C14.9 a default handle that is taken gets the first free numbered suffix', async () => {
    const p = await signupPartner(h);
    const name = `Twin Name ${uniq()}`;
    const first = await create(p.token, minimal({ name }));
    const second = await create(p.token, minimal({ name }));
    expect(second.statusCode).toBe(201);
    expect(second.json().data.app.handle).toBe(`${first.json().data.app.handle}-2`);
  });

  it('C3.1 a MERCHANT token also creates apps (developer JWT)', async () => {
    const m = await signupMerchant(h);
    const res = await create(m.token, minimal());
    expect(res.statusCode).toBe(201);
  });

  it('C3.1 409 when a given handle is taken (by anyone), nothing stored', async () => {
    const a = await signupPartner(h);
    const b = await signupPartner(h);
    const handle = `taken-${uniq()}`;
    expect((await create(a.token, minimal({ handle }))).statusCode).toBe(201);
    expectEnvelopeError(await create(a.token, minimal({ handle })), 409);
    expectEnvelopeError(await create(b.token, minimal({ handle })), 409);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM apps WHERE handle = $1', [handle]);
    expect(rows[0].n).toBe(1);
  });

  it.each([
    ['missing name', { name: undefined }],
    ['blank name', { name: '  ' }],
    ['missing appUrl', { appUrl: undefined }],
    ['appUrl not a URL', { appUrl: 'not a url' }],
    ['relative appUrl', { appUrl: '/auth' }],
    ['ftp appUrl', { appUrl: 'ftp://files.example.com' }],
    ['appUrl with credentials', { appUrl: 'https://user:pw@example.com' }],
    ['missing scopes', { scopes: undefined }],
    ['scopes not an array', { scopes: 'read_products' }],
    ['unknown scope', { scopes: ['read_products', 'read_everything'] }],
    ['unknown tier', { tier: 'platinum' }],
    ['tier toString (not an own key)', { tier: 'toString' }],
    ['tier as a number', { tier: 5 }],
    ['pricing of unknown type', { pricing: { type: 'one_time', amount: '5.00' } }],
    ['recurring pricing without amount', { pricing: { type: 'recurring', currency: 'USD', interval: 'month' } }],
    ['recurring pricing with a non-decimal amount', { pricing: { type: 'recurring', amount: 'ten', currency: 'USD', interval: 'month' } }],
    ['recurring pricing with amount 0', { pricing: { type: 'recurring', amount: '0.00', currency: 'USD', interval: 'month' } }],
    ['recurring pricing with three decimals', { pricing: { type: 'recurring', amount: '9.999', currency: 'USD', interval: 'month' } }],
    ['recurring pricing with a bad interval', { pricing: { type: 'recurring', amount: '9.99', currency: 'USD', interval: 'week' } }],
    ['recurring pricing with a bad currency', { pricing: { type: 'recurring', amount: '9.99', currency: 'DOLLARS', interval: 'month' } }],
    ['recurring pricing with fractional trialDays', { pricing: { type: 'recurring', amount: '9.99', currency: 'USD', interval: 'month', trialDays: 1.5 } }],
    ['version not semver', { version: '1.0' }],
    ['handle with capitals and spaces', { handle: 'My Handle' }],
    ['gdprUrls with a relative URL', { gdprUrls: { customerDataRequest: '/gdpr' } }],
    ['redirectUrls with a bad URL', { redirectUrls: ['nope'] }],
    ['extensions webhook with an unknown topic', { extensions: { webhooks: [{ topic: 'orders/exploded', uri: 'https://x.example.com/h' }] } }],
    ['extensions.salesChannel not boolean', { extensions: { salesChannel: 'yes' } }],
  ])('C3.1 400 envelope for %s', async (_label, override: Record<string, unknown>) => {
    const p = await signupPartner(h);
    const body: Record<string, unknown> = { ...minimal(), ...override };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    expectEnvelopeError(await create(p.token, body), 400);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM apps WHERE developer_id = $1', [decodeSub(p.token)]);
    expect(rows[0].n).toBe(0);
  });

  it('C3.1 a price with a third decimal is refused with a message that says why, whatever the currency (KWD has 3 minor digits)', async () => {
    const p = await signupPartner(h);
    for (const [amount, currency] of [['9.999', 'USD'], ['10.125', 'KWD'], [9.999, 'KWD']] as const) {
      const res = await create(p.token, { ...minimal(), pricing: { type: 'recurring', amount, currency, interval: 'month' } });
      expectEnvelopeError(res, 400, /at most two decimals/);
    }
  });

  it('C3.1 the client secret is encrypted at rest and only the service key opens it', async () => {
    const p = await signupPartner(h);
    const res = await create(p.token, minimal());
    const { app } = res.json().data;
    const { rows } = await h.db.query<Record<string, unknown>>('SELECT * FROM apps WHERE id = $1', [app.appId]);
    const row = rows[0];
    const everyColumn = JSON.stringify(row);
    expect(everyColumn).not.toContain(app.clientSecret);
    expect(String(row.client_secret_enc)).not.toContain(app.clientSecret);
    // Not a plain encoding of it either.
    expect(String(row.client_secret_enc)).not.toContain(Buffer.from(app.clientSecret).toString('base64url'));
    expect(h.deps.secrets.open(String(row.client_secret_enc))).toBe(app.clientSecret);
    expect(() => new SecretBox('another-service-secret-0123456789abcdef').open(String(row.client_secret_enc))).toThrow();
    // Two apps never share a secret or a ciphertext.
    const other = (await create(p.token, minimal())).json().data.app;
    expect(other.clientSecret).not.toBe(app.clientSecret);
    expect(other.clientId).not.toBe(app.clientId);
  });
});

function decodeSub(token: string): string {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sub;
}

describe('C3.2 list, get, patch, rotate-secret', () => {
  it('C3.2 GET /apps/developer/apps lists only the caller\'s apps under data.apps, newest first, without clientSecret, with count and pagination', async () => {
    const p = await signupPartner(h);
    const other = await signupPartner(h);
    const a1 = await createTestApp(h, p.token);
    const a2 = await createTestApp(h, p.token);
    const a3 = await createTestApp(h, p.token);
    await createTestApp(h, other.token);
    const res = await h.req('GET', '/apps/developer/apps', { token: p.token });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      status: 200,
      state: 'success',
      message: null,
      data: { apps: expect.any(Array) },
      count: 3,
      pagination: { page: 1, limit: 50, totalPages: 1, resultCount: 3, totalResult: 3 },
    });
    expect(body.data.apps.map((a: any) => a.appId)).toEqual([a3.appId, a2.appId, a1.appId]);
    for (const app of body.data.apps) {
      expect(app).not.toHaveProperty('clientSecret');
      expect(Object.keys(app).sort()).toEqual(APP_FIELDS.filter((f) => f !== 'clientSecret'));
    }
    expect(res.body).not.toContain(a1.clientSecret);

    const paged = await h.req('GET', '/apps/developer/apps?page=2&limit=2', { token: p.token });
    expect(paged.json().count).toBe(3);
    expect(paged.json().pagination).toEqual({ page: 2, limit: 2, totalPages: 2, resultCount: 1, totalResult: 3 });
    expect(paged.json().data.apps.map((a: any) => a.appId)).toEqual([a1.appId]);

    const clamped = await h.req('GET', '/apps/developer/apps?limit=1000', { token: p.token });
    expect(clamped.json().pagination.limit).toBe(250);
  });

  it('C3.2 a developer with no apps gets an empty list', async () => {
    const p = await signupPartner(h);
    const res = await h.req('GET', '/apps/developer/apps', { token: p.token });
    expect(res.json()).toEqual({
      status: 200, state: 'success', message: null, data: { apps: [] }, count: 0,
      pagination: { page: 1, limit: 50, totalPages: 0, resultCount: 0, totalResult: 0 },
    });
  });

  it('C3.2 GET one app includes the clientSecret', async () => {
    const p = await signupPartner(h);
    const created = (await create(p.token, minimal())).json().data.app;
    const res = await h.req('GET', `/apps/developer/apps/${created.appId}`, { token: p.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 200, state: 'success', message: null, data: { app: created }, count: null, pagination: null });
  });

  it('C3.2 another developer\'s app -> 403 on get, patch and rotate-secret; nothing changes', async () => {
    const owner = await signupPartner(h);
    const stranger = await signupMerchant(h);
    const app = await createTestApp(h, owner.token);
    expectEnvelopeError(await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: stranger.token }), 403);
    expectEnvelopeError(await h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: stranger.token, body: { name: 'Hijacked' } }), 403);
    expectEnvelopeError(await h.req('POST', `/apps/developer/apps/${app.appId}/rotate-secret`, { token: stranger.token }), 403);
    const res = await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: owner.token });
    expect(res.json().data.app.name).not.toBe('Hijacked');
    expect(res.json().data.app.clientSecret).toBe(app.clientSecret);
  });

  it('C3.2 an unknown app -> 404 (UUID or not)', async () => {
    const p = await signupPartner(h);
    for (const id of ['0190a000-0000-7000-8000-000000000000', 'no-such-app']) {
      expectEnvelopeError(await h.req('GET', `/apps/developer/apps/${id}`, { token: p.token }), 404);
      expectEnvelopeError(await h.req('PATCH', `/apps/developer/apps/${id}`, { token: p.token, body: { name: 'X' } }), 404);
      expectEnvelopeError(await h.req('POST', `/apps/developer/apps/${id}/rotate-secret`, { token: p.token }), 404);
    }
  });

  it('C3.2 PATCH changes any C3.1 field and keeps the others; GET shows the result', async () => {
    const p = await signupPartner(h);
    const created = (await create(p.token, minimal())).json().data.app;
    const newHandle = `patched-${uniq()}`;
    const patch = {
      name: 'Patched Name',
      handle: newHandle,
      appUrl: 'https://patched.example.com/app',
      redirectUrls: ['https://patched.example.com/cb'],
      scopes: ['read_orders', 'write_orders'],
      tier: 'enterprise',
      gdprUrls: { customerDataRequest: 'https://patched.example.com/a', customerRedact: 'https://patched.example.com/b', shopRedact: 'https://patched.example.com/c' },
      extensions: { webhooks: [{ topic: 'products/update', uri: 'https://patched.example.com/hook' }], salesChannel: false },
      pricing: { type: 'recurring', amount: '19.00', currency: 'EUR', interval: 'year', trialDays: 0 },
      version: '1.1.0',
    };
    await h.advance(2);
    const res = await h.req('PATCH', `/apps/developer/apps/${created.appId}`, { token: p.token, body: patch });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ status: 200, state: 'success', message: null, count: null, pagination: null });
    const expected = { ...created, ...patch, updatedAt: expect.stringMatching(ISO) };
    expect(body.data.app).toEqual(expected);
    expect(Date.parse(body.data.app.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
    expect(body.data.app.createdAt).toBe(created.createdAt);
    const again = await h.req('GET', `/apps/developer/apps/${created.appId}`, { token: p.token });
    expect(again.json().data.app).toEqual(body.data.app);

    // One field at a time leaves the rest alone.
    const single = await h.req('PATCH', `/apps/developer/apps/${created.appId}`, { token: p.token, body: { tier: 'basic' } });
    expect(single.json().data.app).toEqual({ ...body.data.app, tier: 'basic', updatedAt: expect.stringMatching(ISO) });
    // Back to free pricing.
    const free = await h.req('PATCH', `/apps/developer/apps/${created.appId}`, { token: p.token, body: { pricing: { type: 'free' } } });
    expect(free.json().data.app.pricing).toEqual({ type: 'free' });
  });

  it('C3.2 PATCH validates like create (400) and a taken handle is 409', async () => {
    const p = await signupPartner(h);
    const a = await createTestApp(h, p.token);
    const b = await createTestApp(h, p.token);
    for (const bad of [{ scopes: ['write_everything'] }, { tier: 'gold' }, { appUrl: 'nope' }, { pricing: { type: 'recurring', amount: 'x', currency: 'USD', interval: 'month' } }, { version: 'v2' }, { name: '' }]) {
      expectEnvelopeError(await h.req('PATCH', `/apps/developer/apps/${a.appId}`, { token: p.token, body: bad }), 400);
    }
    expectEnvelopeError(await h.req('PATCH', `/apps/developer/apps/${a.appId}`, { token: p.token, body: { handle: b.handle } }), 409);
    const still = (await h.req('GET', `/apps/developer/apps/${a.appId}`, { token: p.token })).json().data.app;
    expect(still.handle).toBe(a.handle);
    expect(still.scopes).toEqual(['read_products', 'write_products', 'read_orders']);
    expect(still.tier).toBe('free');
  });

  it('C3.2 rotate-secret returns a new secret; the old one stops working at once on /apps/oauth/token (401), the new one works', async () => {
    const m = await signupMerchant(h);
    const p = await signupPartner(h);
    const app = await createTestApp(h, p.token);
    const first = await authorize(m.token, app.clientId);

    const rot = await h.req('POST', `/apps/developer/apps/${app.appId}/rotate-secret`, { token: p.token });
    expect(rot.statusCode).toBe(200);
    const rotated = rot.json();
    expect(rotated).toMatchObject({ status: 200, state: 'success', message: null, count: null, pagination: null });
    const newSecret: string = rotated.data.clientSecret;
    expect(typeof newSecret).toBe('string');
    expect(newSecret).not.toBe(app.clientSecret);
    expect(rotated.data.app.clientSecret).toBe(newSecret);
    expect(rotated.data.app.clientId).toBe(app.clientId);
    expect((await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: p.token })).json().data.app.clientSecret).toBe(newSecret);

    // The old secret: 401, and the code it tried is not spent.
    expectEnvelopeError(await exchange(app.clientId, app.clientSecret, first.code, first.state), 401);
    const ok = await exchange(app.clientId, newSecret, first.code, first.state);
    expect(ok.statusCode).toBe(200);
    const { refresh_token: refreshToken, access_token: accessToken } = ok.json().data;
    expect((await h.req('GET', '/api/v1/products.json', { token: accessToken })).statusCode).toBe(200);

    // Rotate again: the refresh grant also refuses the previous secret.
    const second = (await h.req('POST', `/apps/developer/apps/${app.appId}/rotate-secret`, { token: p.token })).json().data.clientSecret;
    const refreshBody = (secret: string) => ({ client_id: app.clientId, client_secret: secret, grant_type: 'refresh_token', refresh_token: refreshToken });
    expectEnvelopeError(await h.req('POST', '/apps/oauth/token', { body: refreshBody(newSecret) }), 401);
    expectEnvelopeError(await h.req('POST', '/apps/oauth/token', { body: refreshBody(app.clientSecret) }), 401);
    expect((await h.req('POST', '/apps/oauth/token', { body: refreshBody(second) })).statusCode).toBe(200);
  });
});

describe('C3.3 version roll-out', () => {
  it('C3.3 PATCH version moves installations with autoUpdate and no pinnedVersion, and only those', async () => {
    const p = await signupPartner(h);
    const app = await createTestApp(h, p.token, { version: '1.0.0' });
    const follow = await signupMerchant(h);
    const pinned = await signupMerchant(h);
    const manual = await signupMerchant(h);
    const iFollow = await installApp(h, follow, app);
    const iPinned = await installApp(h, pinned, app);
    const iManual = await installApp(h, manual, app);
    await h.db.query(`UPDATE installations SET pinned_version = '1.0.0' WHERE id = $1`, [iPinned.installationId]);
    await h.db.query(`UPDATE installations SET auto_update = false WHERE id = $1`, [iManual.installationId]);

    const installationOf = async (token: string, id: string) => {
      const res = await h.req('GET', '/apps/installations', { token });
      expect(res.statusCode).toBe(200);
      return res.json().data.installations.find((i: any) => i.installationId === id);
    };
    expect((await installationOf(follow.token, iFollow.installationId)).installedVersion).toBe('1.0.0');

    const res = await h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: p.token, body: { version: '1.2.0' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.app.version).toBe('1.2.0');

    expect(await installationOf(follow.token, iFollow.installationId)).toMatchObject({ installedVersion: '1.2.0', autoUpdate: true, pinnedVersion: null });
    expect(await installationOf(pinned.token, iPinned.installationId)).toMatchObject({ installedVersion: '1.0.0', pinnedVersion: '1.0.0' });
    expect(await installationOf(manual.token, iManual.installationId)).toMatchObject({ installedVersion: '1.0.0', autoUpdate: false });

    // A PATCH without version moves nothing; a new install gets the current version.
    await h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: p.token, body: { name: 'Renamed' } });
    expect((await installationOf(manual.token, iManual.installationId)).installedVersion).toBe('1.0.0');
    const late = await signupMerchant(h);
    const iLate = await installApp(h, late, app);
    expect((await installationOf(late.token, iLate.installationId)).installedVersion).toBe('1.2.0');
  });
});

describe('C3 role gates on /apps/developer/', () => {
  it('C3 store staff (STAFF_ADMIN, MANAGER) and the operator get 403 on every developer route; no token 401', async () => {
    const s = await storeWithApp(h);
    const staffAdmin = await staffToken(h, s.merchant.token, 'STAFF_ADMIN');
    const manager = await staffToken(h, s.merchant.token, 'MANAGER');
    const operator = await operatorToken(h);
    const routes: [string, string, unknown?][] = [
      ['POST', '/apps/developer/apps', minimal()],
      ['GET', '/apps/developer/apps'],
      ['GET', `/apps/developer/apps/${s.app.appId}`],
      ['PATCH', `/apps/developer/apps/${s.app.appId}`, { name: 'Staff rename' }],
      ['POST', `/apps/developer/apps/${s.app.appId}/rotate-secret`],
    ];
    for (const [method, url, body] of routes) {
      for (const token of [staffAdmin, manager, operator]) expectEnvelopeError(await h.req(method, url, { token, body }), 403);
      expectEnvelopeError(await h.req(method, url, { body }), 401);
      expectEnvelopeError(await h.req(method, url, { token: 'garbage', body }), 401);
    }
    const still = await h.req('GET', `/apps/developer/apps/${s.app.appId}`, { token: s.partner.token });
    expect(still.json().data.app.clientSecret).toBe(s.app.clientSecret);
    expect(still.json().data.app.name).not.toBe('Staff rename');
  });
});
