// Review of the app manifest (C3.1, C3.2), OAuth installation (C4) and the App API gate (C5):
// bugs a developer or merchant would notice, each test naming the clause it holds the service to.
// The dashboard's app form goes through the same reader as the developer API, and must take
// exactly what the API takes (issue 15), so each manifest rule is checked on both.
import { createHmac } from 'node:crypto';
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { expectEnvelopeError, expectErrorsBody } from './helpers/expect.js';
import { createTestApp, installApp, signupMerchant, signupPartner, unique } from './helpers/actors.js';
import { signedInBrowser } from './helpers/dashboard.js';
import { verifyHandoff } from '../packages/app-sdk/src/index.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const createApp = (token: string, body: Record<string, unknown>) => h.req('POST', '/apps/developer/apps', { token, body });
const patchApp = (token: string, appId: string, body: Record<string, unknown>) => h.req('PATCH', `/apps/developer/apps/${appId}`, { token, body });
const appCount = async (token: string) => (await h.req('GET', '/apps/developer/apps', { token })).json().count as number;
const minimal = (extra: Record<string, unknown> = {}) => ({ name: `Review ${unique()}`, appUrl: 'https://app.example.com', scopes: ['read_orders'], ...extra });
const baseForm = () => ({ name: `Review ${unique()}`, appUrl: 'https://app.example.com', scopes: ['read_orders'], tier: 'free', version: '1.0.0', pricingType: 'free' });

async function developer() {
  const partner = await signupPartner(h);
  return { partner, browser: await signedInBrowser(h, partner.email) };
}

/** A valid SemVer version of exactly `length` characters. */
const versionOf = (length: number) => `1.0.0-${'a'.repeat(length - 6)}`;

describe('C3.1 name, handle and version have a length limit (docs/decisions.md "Accounts and apps")', () => {
  it('name: 255 characters (counted as JSON Schema counts, code points) are taken; 256 -> 400 in the envelope, on create and PATCH', async () => {
    const { partner } = await developer();
    const longest = `${'😀'.repeat(5)}${'N'.repeat(250)}`; // 255 code points, 260 UTF-16 units
    const created = await createApp(partner.token, minimal({ name: longest }));
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data.app.name).toBe(longest);
    const appId = created.json().data.app.appId;

    const tooLong = 'N'.repeat(256);
    expectEnvelopeError(await createApp(partner.token, minimal({ name: tooLong })), 400, 'name must be at most 255 characters');
    expectEnvelopeError(await createApp(partner.token, minimal({ name: 'N'.repeat(100_000) })), 400, 'name must be at most 255 characters');
    expectEnvelopeError(await patchApp(partner.token, appId, { name: tooLong }), 400, 'name must be at most 255 characters');
    expect(await appCount(partner.token)).toBe(1);
    expect((await h.req('GET', `/apps/developer/apps/${appId}`, { token: partner.token })).json().data.app.name).toBe(longest);
  });

  it('version: 128 characters are taken; 129 -> 400, on create and PATCH; the installations keep their version', async () => {
    const { partner } = await developer();
    const created = await createApp(partner.token, minimal({ version: versionOf(128) }));
    expect(created.statusCode, created.body).toBe(201);
    const appId = created.json().data.app.appId;
    expectEnvelopeError(await createApp(partner.token, minimal({ version: versionOf(129) })), 400, 'version must be at most 128 characters');
    expectEnvelopeError(await createApp(partner.token, minimal({ version: versionOf(50_000) })), 400, 'version must be at most 128 characters');
    expectEnvelopeError(await patchApp(partner.token, appId, { version: versionOf(129) }), 400, 'version must be at most 128 characters');
    expect((await h.req('GET', `/apps/developer/apps/${appId}`, { token: partner.token })).json().data.app.version).toBe(versionOf(128));
  });

  it('handle: 60 characters are taken; 61 -> 400 that says so (it said "lowercase letters, digits and -")', async () => {
    const { partner } = await developer();
    const handle = `h${unique()}-${'x'.repeat(60)}`.slice(0, 60);
    expect((await createApp(partner.token, minimal({ handle }))).statusCode).toBe(201);
    expectEnvelopeError(await createApp(partner.token, minimal({ handle: `${handle}x` })), 400, 'handle must be at most 60 characters');
  });

  it('the dashboard form refuses what the API refuses, next to the field, in the same words; nothing is created', async () => {
    const { partner, browser } = await developer();
    const cases = [
      ['name', 'N'.repeat(256), 'name must be at most 255 characters'],
      ['version', versionOf(129), 'version must be at most 128 characters'],
      ['handle', 'h'.repeat(61), 'handle must be at most 60 characters'],
    ] as const;
    for (const [field, typed, words] of cases) {
      const page = await browser.submit('/dashboard/apps/new', '/dashboard/apps', { ...baseForm(), [field]: typed });
      expect([field, page.status]).toEqual([field, 400]);
      expect(page.html).toContain(`id="${field}-error">${words}<`);
    }
    expect(await appCount(partner.token)).toBe(0);
    const longest = await browser.submit('/dashboard/apps/new', '/dashboard/apps', { ...baseForm(), name: 'N'.repeat(255), version: versionOf(128) });
    expect(longest.status, longest.html.slice(0, 300)).toBe(303);
  });
});

describe('C3.1, C14.9 a default handle with its number is a handle the API takes back', () => {
  // Two apps with one long name: the second's default handle was the 60-character slug plus "-2",
  // 62 characters, which no request could send back: a PATCH naming the app's own handle was a
  // 400, and so was every save of the dashboard's edit form (it sends the handle shown).
  it('the numbered handle has at most 60 characters; PATCH with it and the dashboard edit form save', async () => {
    const { partner, browser } = await developer();
    const name = `Long ${unique()} ${'application name '.repeat(6)}`;
    const first = (await createApp(partner.token, minimal({ name }))).json().data.app;
    const second = (await createApp(partner.token, minimal({ name }))).json().data.app;
    expect(first.handle).toHaveLength(60);
    expect(second.handle).not.toBe(first.handle);
    expect(second.handle).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*-2$/);
    expect(second.handle.length).toBeLessThanOrEqual(60);

    const patched = await patchApp(partner.token, second.appId, { handle: second.handle, tier: 'basic' });
    expect(patched.statusCode, patched.body).toBe(200);
    const edit = await browser.submit(`/dashboard/apps/${second.appId}/edit`, `/dashboard/apps/${second.appId}`, { ...baseForm(), name, handle: second.handle, tier: 'pro' });
    expect(edit.status, edit.html.slice(0, 400)).toBe(303);
    expect((await h.req('GET', `/apps/developer/apps/${second.appId}`, { token: partner.token })).json().data.app).toMatchObject({ handle: second.handle, tier: 'pro' });
  });
});

describe('C3.1, C8.2 a manifest webhook is declared once (docs/decisions.md "Accounts and apps")', () => {
  // Fan-out makes one delivery per manifest webhook (C8.2): the same topic and address twice
  // delivered every event twice to the app. Refused as a repeated function handle is (C11.1).
  const hook = (topic: string, uri: string) => ({ topic, uri });

  it('the same topic and address twice -> 400 naming both entries, on create and PATCH; nothing stored', async () => {
    const { partner } = await developer();
    const twice = [hook('orders/create', 'https://hooks.example.com/a'), hook('orders/paid', 'https://hooks.example.com/a'), hook('orders/create', 'https://hooks.example.com/a')];
    const created = await createApp(partner.token, minimal({ extensions: { webhooks: twice } }));
    expectEnvelopeError(created, 400, 'extensions.webhooks[2] repeats extensions.webhooks[0]: orders/create to https://hooks.example.com/a');
    expect(await appCount(partner.token)).toBe(0);

    const app = await createTestApp(h, partner.token, { extensions: { webhooks: [hook('orders/create', 'https://hooks.example.com/a')] } });
    expectEnvelopeError(await patchApp(partner.token, app.appId, { extensions: { webhooks: twice } }), 400, /^extensions\.webhooks\[2\] repeats extensions\.webhooks\[0\]/);
    const kept = (await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: partner.token })).json().data.app.extensions.webhooks;
    expect(kept).toEqual([hook('orders/create', 'https://hooks.example.com/a')]);
  });

  it('addresses are compared as stored: a different spelling of one address is the same webhook', async () => {
    const { partner } = await developer();
    const res = await createApp(partner.token, minimal({ extensions: { webhooks: [hook('orders/create', 'https://hooks.example.com/a'), hook('orders/create', 'HTTPS://Hooks.Example.COM:443/a')] } }));
    expectEnvelopeError(res, 400, 'extensions.webhooks[1] repeats extensions.webhooks[0]: orders/create to https://hooks.example.com/a');
  });

  it('one topic to two addresses, or two topics to one address, are two webhooks (201)', async () => {
    const { partner } = await developer();
    const webhooks = [hook('orders/create', 'https://hooks.example.com/a'), hook('orders/create', 'https://hooks.example.com/b'), hook('orders/paid', 'https://hooks.example.com/a')];
    const res = await createApp(partner.token, minimal({ extensions: { webhooks } }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.app.extensions.webhooks).toEqual(webhooks);
  });

  it('the dashboard form refuses a repeated line next to its webhooks field', async () => {
    const { partner, browser } = await developer();
    const page = await browser.submit('/dashboard/apps/new', '/dashboard/apps', { ...baseForm(), webhooks: 'orders/create https://hooks.example.com/a\norders/create https://hooks.example.com/a' });
    expect(page.status).toBe(400);
    expect(page.html).toContain('id="webhooks-error">extensions.webhooks[1] repeats extensions.webhooks[0]: orders/create to https://hooks.example.com/a<');
    expect(await appCount(partner.token)).toBe(0);
  });
});

describe('C4.1, C4.2 the handoff of an app whose URL has a query or a fragment', () => {
  // The handoff was `${appUrl}/auth?...` pasted as text: for `https://app.example.com/base?env=prod#frag`
  // the browser went to /base?env=prod with the code, state and hmac in a fragment it never sends.
  it('goes to {appUrl path}/auth with the app\'s own query kept and signed, the fragment dropped; the install completes', async () => {
    const merchant = await signupMerchant(h);
    const app = await createTestApp(h, (await signupPartner(h)).token, { appUrl: 'https://app.example.com/base/?env=test&code=mine&env=prod#section' });
    const auth = await h.req('GET', `/apps/oauth/authorize?client_id=${app.clientId}`, { token: merchant.token });
    expect(auth.statusCode, auth.body).toBe(200);
    const handoff = new URL(auth.json().data.redirectUrl);
    expect(`${handoff.origin}${handoff.pathname}`).toBe('https://app.example.com/base/auth');
    expect(handoff.hash).toBe('');
    expect([...handoff.searchParams.keys()]).toEqual(['env', 'code', 'hmac', 'shop', 'state', 'timestamp']);
    expect(handoff.searchParams.get('env')).toBe('prod');
    expect(handoff.searchParams.get('code')).toMatch(/^svccode_/); // the platform's, never the app URL's
    // C4.2 as an app checks it: every other query parameter, sorted, name=value, joined by &.
    const others = [...handoff.searchParams].filter(([k]) => k !== 'hmac').sort(([a], [b]) => (a < b ? -1 : 1));
    const expected = createHmac('sha256', app.clientSecret).update(others.map(([k, v]) => `${k}=${v}`).join('&')).digest('hex');
    expect(handoff.searchParams.get('hmac')).toBe(expected);
    // And as the app kit checks it (which refuses a repeated parameter).
    expect(verifyHandoff(handoff.searchParams, app.clientSecret, { now: h.clock.now() })).toMatchObject({ ok: true, shop: merchant.slug });

    const exchanged = await h.req('POST', '/apps/oauth/token', {
      body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'authorization_code', code: handoff.searchParams.get('code'), state: handoff.searchParams.get('state') },
    });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
  });

  it('an app URL without a query is handed off exactly as before: {appUrl}/auth?code&hmac&shop&state&timestamp', async () => {
    const merchant = await signupMerchant(h);
    const app = await createTestApp(h, (await signupPartner(h)).token, { appUrl: 'https://app.example.com/shop-app/' });
    const { redirectUrl } = (await h.req('GET', `/apps/oauth/authorize?client_id=${app.clientId}`, { token: merchant.token })).json().data;
    expect(redirectUrl).toMatch(/^https:\/\/app\.example\.com\/shop-app\/auth\?code=svccode_[\w-]+&hmac=[0-9a-f]{64}&shop=[a-z0-9-]+&state=[\w-]+&timestamp=\d+$/);
  });
});

// ---------------------------------------------------------------------------------------------
// C4.4 and C4.7 on PostgreSQL: a code exchange and an uninstall of one installation at once. PGlite
// runs one transaction at a time, which cannot interleave them.

describe.skipIf(!inject('testDatabaseUrl'))('C4.7 an uninstall racing a code exchange (PostgreSQL)', () => {
  /** Backends waiting, directly or through another waiter, on `pid`. */
  async function waitersOn(pid: number): Promise<number> {
    const { rows } = await h.db.query<{ pid: number; blockers: number[] }>(
      'SELECT pid, pg_blocking_pids(pid) AS blockers FROM pg_stat_activity WHERE datname = current_database()',
    );
    const waiting = new Set<number>([pid]);
    for (let grew = true; grew;) {
      grew = false;
      for (const r of rows) if (!waiting.has(r.pid) && r.blockers.some((b) => waiting.has(b))) waiting.add(r.pid), (grew = true);
    }
    return waiting.size - 1;
  }

  // The exchange had issued its tokens, not yet committed, when the uninstall revoked the
  // installation's tokens: it did not see them, and they were never revoked. The uninstalled
  // installation kept them refused, until a reinstall made it active again: then the tokens of
  // the earlier install worked again ("tokens revoked earlier stay revoked", C4.7).
  it('the exchange\'s tokens are revoked by the uninstall, or the exchange is refused; a reinstall does not revive them', async () => {
    const merchant = await signupMerchant(h);
    const app = await createTestApp(h, (await signupPartner(h)).token);
    const auth = await h.req('GET', `/apps/oauth/authorize?client_id=${app.clientId}`, { token: merchant.token });
    const { installationId } = auth.json().data;
    const handoff = new URL(auth.json().data.redirectUrl).searchParams;

    // A third transaction holds the installation's row, so that both requests are under way at once.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holderPid = 0;
    let holding!: () => void;
    const holds = new Promise<void>((resolve) => (holding = resolve));
    const holder = h.db.transaction(async (tx) => {
      holderPid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      await tx.query('SELECT id FROM installations WHERE id = $1 FOR UPDATE', [installationId]);
      holding();
      await held;
    });
    await holds;
    try {
      const exchanging = h.req('POST', '/apps/oauth/token', {
        body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'authorization_code', code: handoff.get('code'), state: handoff.get('state') },
      });
      await expect.poll(() => waitersOn(holderPid), { timeout: 10_000 }).toBe(1);
      const uninstalling = h.req('DELETE', `/apps/installations/${installationId}`, { token: merchant.token });
      await expect.poll(() => waitersOn(holderPid), { timeout: 10_000 }).toBe(2);
      release();
      const [exchanged, uninstalled] = await Promise.all([exchanging, uninstalling]);
      expect(uninstalled.statusCode, uninstalled.body).toBe(200);
      expect([200, 400]).toContain(exchanged.statusCode);

      const status = (await h.db.query<{ status: string }>('SELECT status FROM installations WHERE id = $1', [installationId])).rows[0].status;
      expect(status).toBe('uninstalled');
      const reinstalled = await installApp(h, merchant, app);
      expect((await h.req('GET', '/api/v1/products.json', { token: reinstalled.accessToken })).statusCode).toBe(200);
      if (exchanged.statusCode === 200) {
        const { access_token: accessToken, refresh_token: refreshToken } = exchanged.json().data;
        expectErrorsBody(await h.req('GET', '/api/v1/products.json', { token: accessToken }), 401);
        const refreshed = await h.req('POST', '/apps/oauth/token', { body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'refresh_token', refresh_token: refreshToken } });
        expectEnvelopeError(refreshed, 400);
      }
    } finally {
      release();
      await holder;
    }
  }, 30_000);
});
