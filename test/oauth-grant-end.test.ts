// Where an installation's time runs out: the grant's end (C4.5, app-api.md Token state) and the
// first trial's (C10.1). Both read the test clock (C12.1); it is moved with `h.advance` only (this
// harness's own offset), never backwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { expectEnvelopeError, expectErrorsBody } from './helpers/expect.js';
import { storeWithApp, type TestApp } from './helpers/actors.js';
import { days, developer, install, installation, merchant, paidApp, transactionsOf, type Developer } from './helpers/billing.js';
import { runBillingCharges } from '../src/billing/charges.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

/** Move the clock to `at` (never backwards). */
async function advanceTo(at: Date): Promise<void> {
  const seconds = (at.getTime() - h.clock.nowMs()) / 1000;
  if (seconds > 0) await h.advance(seconds);
}

const refresh = (app: TestApp, refreshToken: string) =>
  h.req('POST', '/apps/oauth/token', { body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'refresh_token', refresh_token: refreshToken } });
const products = (token: string) => h.req('GET', '/api/v1/products.json', { token });

describe('C4.5, Token state: an access token does not outlive its grant', () => {
  // Before: a refresh 10 s before the grant's end gave an access token with expires_in 86400 that
  // opened the App API for 24 hours after the grant had ended, while the refresh token was refused
  // and the merchant was told to re-authorise.
  it('a refresh 10 s before the grant\'s end: expires_in <= 10, and the token is refused (401) once the grant ended', async () => {
    const s = await storeWithApp(h, { scopes: ['read_products'] });
    expect(s.tokenResponse.expires_in).toBe(86400); // C4.4: a code exchange starts a 30-day grant
    const grantEnds = (await h.db.query<{ expires_at: Date }>('SELECT expires_at FROM oauth_grants WHERE installation_id = $1', [s.installationId])).rows[0].expires_at;

    // Two days before the end a refresh still gives a full day.
    await advanceTo(new Date(grantEnds.getTime() - days(2) * 1000));
    const early = await refresh(s.app, s.refreshToken);
    expect(early.statusCode, early.body).toBe(200);
    expect(early.json().data.expires_in).toBe(86400);

    await advanceTo(new Date(grantEnds.getTime() - 10_000));
    const late = await refresh(s.app, early.json().data.refresh_token);
    expect(late.statusCode, late.body).toBe(200);
    const { access_token: accessToken, refresh_token: refreshToken, expires_in: expiresIn, refresh_token_expires_in: refreshExpiresIn } = late.json().data;
    expect(expiresIn).toBeLessThanOrEqual(10);
    expect(expiresIn).toBeGreaterThanOrEqual(0);
    expect(expiresIn).toBe(refreshExpiresIn);
    expect((await products(accessToken)).statusCode).toBe(200);

    await advanceTo(new Date(grantEnds.getTime() + 1000));
    expectErrorsBody(await products(accessToken), 401);
    expectEnvelopeError(await refresh(s.app, refreshToken), 400, /re-authorise/);
  });
});

describe('C10.1 a reinstall during the first trial keeps the trial\'s end (still no second trial)', () => {
  const billing = (dev: Developer) => runBillingCharges(h.deps, { developerIds: [dev.userId] });

  // Before: the reinstall set billingStatus "active" and billingStartDate now, keeping the first
  // trial's end 14 days ahead: the next run charged a full period on trial day 0.
  it('installed with a 14-day trial, uninstalled, reinstalled at once: trialing until the first trial\'s end, charged nothing before it', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '10.00', trialDays: 14 });
    const m = await merchant(h);
    const { installationId } = await install(h, m, app);
    const first = await installation(h, installationId);
    expect(first.billing_status).toBe('trialing');
    const removed = await h.req('DELETE', `/apps/installations/${installationId}`, { token: await m.fresh() });
    expect(removed.json().data.status).toBe('uninstalled');

    await install(h, m, app);
    const listed = (await h.req('GET', '/apps/installations', { token: await m.fresh() })).json().data.installations;
    const trialEndsAt = first.trial_ends_at.toISOString();
    expect(listed.find((i: { installationId: string }) => i.installationId === installationId)).toMatchObject({
      status: 'active', billingStatus: 'trialing', trialEndsAt, billingStartDate: trialEndsAt,
    });

    await billing(dev);
    expect(await transactionsOf(h, installationId)).toEqual([]);
    await advanceTo(new Date(first.trial_ends_at.getTime() - 3600_000));
    await billing(dev);
    expect(await transactionsOf(h, installationId)).toEqual([]);

    await advanceTo(new Date(first.trial_ends_at.getTime() + 3600_000));
    await billing(dev);
    const txns = await transactionsOf(h, installationId);
    expect(txns).toMatchObject([{ status: 'paid', amount_cents: 1000 }]);
    expect(txns[0].period_start.toISOString()).toBe(trialEndsAt);
    expect((await installation(h, installationId)).billing_status).toBe('active');
  });

  it('reinstalled after the first trial ended: billed from the reinstall, no second trial (as before)', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '10.00', trialDays: 14 });
    const m = await merchant(h);
    const { installationId } = await install(h, m, app);
    const first = await installation(h, installationId);
    expect((await h.req('DELETE', `/apps/installations/${installationId}`, { token: await m.fresh() })).json().data.status).toBe('uninstalled');

    await advanceTo(new Date(first.trial_ends_at.getTime() + days(1) * 1000));
    const before = h.clock.nowMs();
    await install(h, m, app);
    const again = await installation(h, installationId);
    expect(again).toMatchObject({ status: 'active', billing_status: 'active' });
    expect(again.trial_ends_at.getTime()).toBe(first.trial_ends_at.getTime());
    expect(again.billing_start_date.getTime()).toBeGreaterThanOrEqual(before);
    await billing(dev);
    expect(await transactionsOf(h, installationId)).toMatchObject([{ status: 'paid', amount_cents: 1000 }]);
  });
});
