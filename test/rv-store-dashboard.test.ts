// Dashboard behaviour (docs/decisions.md "Dashboard (issue 15)"), adversarial review of 2026-11-27.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { emitEvent, runDeliveries, subscribe, webhookStore } from './fixtures/webhook-setup.js';
import { createTestApp, installApp, signupMerchant, signupPartner } from './helpers/actors.js';
import { signedInBrowser, type Browser } from './helpers/dashboard.js';
import { insertRuns } from '../src/functions/function-runs.repo.js';
import { uuidv7 } from '../src/ids.js';
import { runBillingCharges } from '../src/billing/charges.js';
import { dispatchPayouts, runPayoutSweep } from '../src/payouts/payouts.js';

let h: Harness;
let rx: Receiver;
beforeAll(async () => {
  h = await createWebhookHarness();
  rx = await startReceiver(() => ({ status: 200, body: 'ok' }));
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

const PASSWORD = 'correct-horse';

/** Opens `base` one row a page, past its end: the rows exist, so "previous" leads to the last page and nothing says the list is empty. */
async function expectPastTheEnd(browser: Browser, base: string, rows: number, emptyWords: RegExp) {
  const sep = base.includes('?') ? '&' : '?';
  const first = await browser.get(`${base}${sep}limit=1`);
  expect(first.status, base).toBe(200);
  expect(first.html, base).toContain(`${rows} in all · page 1 of ${rows}`);
  const past = await browser.get(`${base}${sep}limit=1&page=9`);
  expect(past.status, base).toBe(200);
  expect(past.html, base).not.toMatch(emptyWords);
  expect(past.html, base).toContain(`${rows} in all · page 9 of ${rows}`);
  const prev = /href="([^"]+)" rel="prev"/.exec(past.html)?.[1].replaceAll('&amp;', '&');
  expect(prev, base).toBeDefined();
  expect(new URLSearchParams(prev!.split('?')[1]).get('page'), base).toBe(String(rows));
  expect(past.html, base).not.toContain('rel="next"');
  // The link leads to rows.
  expect((await browser.get(prev!)).html, base).toContain(`page ${rows} of ${rows}`);
}

describe('log pages past the end (decisions: "Paging past the end")', () => {
  it('deliveries, runs, payouts and GDPR requests: a page past the end offers the last page with rows and does not say the log is empty', async () => {
    // Deliveries: two.
    const s = await webhookStore(h);
    await subscribe(h, s.accessToken, 'orders/create', `${rx.url}/ok`);
    await emitEvent(h, s.merchant.storeId, 'orders/create', { id: 1 });
    await emitEvent(h, s.merchant.storeId, 'orders/create', { id: 2 });
    await runDeliveries(h);
    const dev = await signedInBrowser(h, s.partner.email, PASSWORD);
    await expectPastTheEnd(dev, `/dashboard/apps/${s.app.appId}/deliveries`, 2, /No deliveries yet|No delivery matches/);
    await expectPastTheEnd(dev, `/dashboard/apps/${s.app.appId}/deliveries?topic=orders%2Fcreate`, 2, /No deliveries yet|No delivery matches/);

    // Runs: two of one function.
    const partner = await signupPartner(h);
    const merchant = await signupMerchant(h);
    const app = await createTestApp(h, partner.token, {
      pricing: { type: 'recurring', amount: '40.00', currency: 'USD', interval: 'month' },
      extensions: { functions: [{ handle: 'v', title: 'Validate', target: 'cart.validations.generate.run', expression: '{"operations": []}' }] },
    });
    await installApp(h, merchant, app);
    const functionId = (await h.req('GET', '/functions', { token: merchant.token })).json().data.functions[0].functionId;
    for (let i = 0; i < 2; i++) {
      await insertRuns(h.deps.db, [{
        id: uuidv7(), appId: app.appId, storeId: merchant.storeId, functionId, functionHandle: 'v', target: 'cart.validations.generate.run', status: 'success',
        errorType: null, errorMessage: null, input: { n: i }, inputBytes: 7, output: { operations: [] }, outputBytes: 17, durationMs: 3, checkoutId: null,
        checkoutTokenSealed: null, createdAt: new Date(h.clock.nowMs()),
      }]);
    }
    const developer = await signedInBrowser(h, partner.email, PASSWORD);
    await expectPastTheEnd(developer, `/dashboard/apps/${app.appId}/runs`, 2, /No runs yet|No run matches|declares no functions/);

    // Payouts: one (a paid app charged, swept and dispatched).
    const method = await h.req('PUT', '/apps/developer/payout-method', { token: partner.token, body: { type: 'paypal', email: 'dev@example.com' } });
    expect(method.statusCode).toBe(200);
    await runBillingCharges(h.deps, { developerIds: [partner.userId] });
    await runPayoutSweep(h.deps, { force: true, developerIds: [partner.userId] });
    await dispatchPayouts(h.deps, { developerIds: [partner.userId] });
    await expectPastTheEnd(developer, '/dashboard/earnings', 1, /No payouts yet|No payout matches/);

    // GDPR requests: two.
    const store = await signedInBrowser(h, merchant.email, PASSWORD);
    for (const email of ['a@example.com', 'b@example.com']) {
      const filed = await store.submit('/dashboard/store/gdpr', '/dashboard/store/gdpr/data-request', { customerEmail: email });
      expect(filed.status, filed.html).toBe(303);
    }
    await expectPastTheEnd(store, '/dashboard/store/gdpr', 2, /No GDPR requests yet|No request matches/);
  });

  it('with no rows at all the pages still say so, and offer no "previous"', async () => {
    const s = await webhookStore(h);
    const dev = await signedInBrowser(h, s.partner.email, PASSWORD);
    const deliveries = await dev.get(`/dashboard/apps/${s.app.appId}/deliveries?page=3`);
    expect(deliveries.html).toContain('No deliveries yet.');
    expect(deliveries.html).not.toContain('rel="prev"');
    const earnings = await dev.get('/dashboard/earnings?page=3');
    expect(earnings.html).toContain('No payouts yet.');
    const runs = await dev.get(`/dashboard/apps/${s.app.appId}/runs?page=2`);
    expect(runs.html).toContain('This app declares no functions.');
    const store = await signedInBrowser(h, s.merchant.email, PASSWORD);
    const gdpr = await store.get('/dashboard/store/gdpr?page=2&status=completed');
    expect(gdpr.html).toContain('No request matches these filters.');
    expect(gdpr.html).not.toContain('rel="prev"');
  });
});

describe('money on the pages is the API\'s exact decimal (decisions: "Ledger figures are exact past 2^53 cents")', () => {
  it('twelve charges of the largest price: the balance shows as the API writes it, not a cent off', async () => {
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { pricing: { type: 'recurring', amount: '9999999999999.97', currency: 'USD', interval: 'month' } });
    for (let i = 0; i < 12; i++) await installApp(h, await signupMerchant(h), app);
    await runBillingCharges(h.deps, { developerIds: [partner.userId] });
    const api = (await h.req('GET', '/apps/developer/earnings', { token: partner.token })).json().data;
    // 12 x 7,999,999,999,999.98: past 2^53 cents, where Number("95999999999999.76") is ...999.765625.
    expect(api).toMatchObject({ balance: '95999999999999.76', totalEarned: '95999999999999.76' });
    const page = await (await signedInBrowser(h, partner.email, PASSWORD)).get('/dashboard/earnings');
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/<dt>Available<\/dt><dd>\$95,999,999,999,999\.76<\/dd>/);
    expect(page.html).toMatch(/<dt>Earned in all<\/dt><dd>\$95,999,999,999,999\.76<\/dd>/);
    const appPage = await (await signedInBrowser(h, partner.email, PASSWORD)).get(`/dashboard/apps/${app.appId}`);
    expect(appPage.html).toContain('$95,999,999,999,999.76 (12 charges)');
  });
});

describe('the login form\'s lifetime (decisions: CSRF, the login nonce)', () => {
  it('showing the form again renews its nonce cookie for an hour, with the same nonce (a form open in another tab stays valid)', async () => {
    const first = await h.app.inject({ method: 'GET', url: '/dashboard/login' });
    const cookie = ([] as string[]).concat(first.headers['set-cookie'] as string | string[]).find((c) => c.startsWith('svc_login_nonce='))!;
    expect(cookie).toMatch(/Max-Age=3600/);
    const nonce = /^svc_login_nonce=([^;]+)/.exec(cookie)![1];
    const again = await h.app.inject({ method: 'GET', url: '/dashboard/login', headers: { cookie: `svc_login_nonce=${nonce}` } });
    const renewed = ([] as string[]).concat((again.headers['set-cookie'] as string | string[] | undefined) ?? []).find((c) => c.startsWith('svc_login_nonce='));
    expect(renewed, 'the second showing sets the cookie again').toBeDefined();
    expect(renewed).toMatch(new RegExp(`^svc_login_nonce=${nonce};.*Max-Age=3600`));
    expect(/name="_csrf" value="([^"]+)"/.exec(again.body)![1]).toBe(/name="_csrf" value="([^"]+)"/.exec(first.body)![1]);
  });
});
