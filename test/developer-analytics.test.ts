// Developer analytics and installations (app-api.md "Developer resources", C3.3, C14.12) and app
// reviews feeding rating and reviewCount (C10.8, C14.9).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { createTestApp } from './helpers/actors.js';
import { developer, install, merchant, operator, paidApp, type Developer } from './helpers/billing.js';
import { runBillingCharges } from '../src/billing/charges.js';

let h: Harness;
let ops: () => Promise<string>;
beforeAll(async () => {
  h = await createHarness();
  ops = await operator(h);
});
afterAll(() => h?.close());

const billing = (dev: Developer) => runBillingCharges(h.deps, { developerIds: [dev.userId] });
const review = async (m: Awaited<ReturnType<typeof merchant>>, appId: string, body: unknown) =>
  h.req('POST', `/apps/${appId}/reviews`, { token: await m.fresh(), body });

describe('GET /apps/developer/{appId}/installations', () => {
  it('lists installations newest first with billing fields and the nested store; counts subscribers and installs', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '10.00', trialDays: 7 });
    const trialing = await merchant(h);
    const declined = await merchant(h, { email: `fail-dev-analytics-${Date.now()}@example.com` });
    const gone = await merchant(h);
    const a = await install(h, trialing, app);
    h.clock.advance(1);
    const b = await install(h, declined, app);
    h.clock.advance(1);
    const c = await install(h, gone, app);
    await h.req('DELETE', `/apps/installations/${c.installationId}`, { token: await gone.fresh() }); // in trial: uninstalled at once
    // b's trial is over and its charge is declined: past_due
    await h.db.query('UPDATE installations SET billing_start_date = $2, trial_ends_at = $2 WHERE id = $1', [b.installationId, new Date(h.clock.nowMs() - 1000)]);
    await billing(dev);

    const res = await h.req('GET', `/apps/developer/${app.appId}/installations`, { token: await dev.token() });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data.installations.map((i: any) => i.installationId)).toEqual([c.installationId, b.installationId, a.installationId]);
    expect(data.activeSubscribers).toBe(1); // a: active and trialing; b is past_due; c uninstalled
    expect(data.totalInstalls).toBe(2); // status active only (C14.12)
    const row = data.installations[2];
    expect(Object.keys(row).sort()).toEqual(
      ['installationId', 'storeId', 'status', 'billingStatus', 'installedVersion', 'autoUpdate', 'pinnedVersion', 'billingStartDate', 'trialEndsAt', 'createdAt', 'updatedAt', 'store'].sort(),
    );
    expect(row).toMatchObject({
      storeId: trialing.storeId, status: 'active', billingStatus: 'trialing', installedVersion: '1.0.0', autoUpdate: true, pinnedVersion: null,
      store: { id: trialing.storeId, business: expect.any(String), storeURL: trialing.slug, email: trialing.email },
    });
    expect(row.trialEndsAt).toBe(row.billingStartDate);
    expect(data.installations[1]).toMatchObject({ status: 'active', billingStatus: 'past_due' });
    expect(data.installations[0]).toMatchObject({ status: 'uninstalled' });
  });

  it('C3.3: a version PATCH moves auto-updating, unpinned installations; pinned ones stay', async () => {
    const dev = await developer(h);
    const app = await createTestApp(h, await dev.token());
    const one = await install(h, await merchant(h), app);
    const pinned = await install(h, await merchant(h), app);
    await h.db.query(`UPDATE installations SET pinned_version = '1.0.0' WHERE id = $1`, [pinned.installationId]);
    expect((await h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: await dev.token(), body: { version: '1.1.0' } })).statusCode).toBe(200);
    const { installations } = (await h.req('GET', `/apps/developer/${app.appId}/installations`, { token: await dev.token() })).json().data;
    const byId = Object.fromEntries(installations.map((i: any) => [i.installationId, i]));
    expect(byId[one.installationId]).toMatchObject({ installedVersion: '1.1.0', pinnedVersion: null, billingStatus: 'none' });
    expect(byId[pinned.installationId]).toMatchObject({ installedVersion: '1.0.0', pinnedVersion: '1.0.0' });
  });

  it('403 for another developer’s app, 404 for an unknown one, 401 without a token, 403 for the operator role', async () => {
    const owner = await developer(h);
    const app = await createTestApp(h, await owner.token());
    const other = await developer(h);
    expect((await h.req('GET', `/apps/developer/${app.appId}/installations`, { token: await other.token() })).statusCode).toBe(403);
    expect((await h.req('GET', `/apps/developer/00000000-0000-7000-8000-000000000000/installations`, { token: await other.token() })).statusCode).toBe(404);
    expect((await h.req('GET', `/apps/developer/${app.appId}/installations`)).statusCode).toBe(401);
    expect((await h.req('GET', `/apps/developer/${app.appId}/installations`, { token: await ops() })).statusCode).toBe(403);
  });
});

describe('GET /apps/developer/analytics', () => {
  it('aggregates installs, ratings and revenue over the developer’s apps', async () => {
    const dev = await developer(h);
    const paid = await paidApp(h, dev, { amount: '10.00' });
    const free = await createTestApp(h, await dev.token());
    const m1 = await merchant(h);
    const m2 = await merchant(h);
    await install(h, m1, paid);
    const second = await install(h, m2, paid);
    await install(h, m1, free);
    await billing(dev);
    expect((await review(m1, paid.appId, { rating: 5, body: 'Great' })).statusCode).toBe(201);
    expect((await review(m2, paid.appId, { rating: 2 })).statusCode).toBe(201);
    // uninstalled during its paid period: pending_uninstall, no longer counted as an install
    await h.req('DELETE', `/apps/installations/${second.installationId}`, { token: await m2.fresh() });

    const res = await h.req('GET', '/apps/developer/analytics', { token: await dev.token() });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      apps: [
        { appId: free.appId, name: expect.any(String), installCount: 1, rating: 0, reviewCount: 0 },
        { appId: paid.appId, name: expect.any(String), installCount: 1, rating: 3.5, reviewCount: 2 },
      ],
      totalRevenue: 16,
      totalInstalls: 2,
      totalTransactions: 2,
    });
    const other = await developer(h);
    expect((await h.req('GET', '/apps/developer/analytics', { token: await other.token() })).json().data).toEqual({ apps: [], totalRevenue: 0, totalInstalls: 0, totalTransactions: 0 });
    expect((await h.req('GET', '/apps/developer/analytics')).statusCode).toBe(401);
  });
});

describe('reviews (C10.8)', () => {
  it('one per store: a second replaces the first; rating is the mean, reviewCount the number', async () => {
    const dev = await developer(h);
    const app = await createTestApp(h, await dev.token());
    const stores = [await merchant(h), await merchant(h), await merchant(h)];
    for (const m of stores) await install(h, m, app);
    const first = await review(stores[0], app.appId, { rating: 4, body: 'Good' });
    expect(first.statusCode).toBe(201);
    expect(first.json().data).toEqual({
      review: { reviewId: expect.any(String), appId: app.appId, storeId: stores[0].storeId, rating: 4, body: 'Good', createdAt: expect.any(String), updatedAt: expect.any(String) },
      app: { appId: app.appId, rating: 4, reviewCount: 1 },
    });
    await review(stores[1], app.appId, { rating: 5 });
    await review(stores[2], app.appId, { rating: 1 });
    const replaced = await review(stores[0], app.appId, { rating: 1, body: 'Changed my mind' });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json().data.review).toMatchObject({ reviewId: first.json().data.review.reviewId, rating: 1, body: 'Changed my mind' });
    expect(replaced.json().data.app).toEqual({ appId: app.appId, rating: 2.33, reviewCount: 3 });
    const shown = (await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: await dev.token() })).json().data.app;
    expect(shown).toMatchObject({ rating: 2.33, reviewCount: 3 });
  });

  it('400 for a rating outside 1..5 or a bad body; 403 when the app is not installed; 404 for an unknown app; merchant JWT only', async () => {
    const dev = await developer(h);
    const app = await createTestApp(h, await dev.token());
    const m = await merchant(h);
    expect((await review(m, app.appId, { rating: 5 })).statusCode).toBe(403); // not installed (C14.9)
    const { installationId } = await install(h, m, app);
    for (const body of [{}, { rating: 0 }, { rating: 6 }, { rating: 3.5 }, { rating: 'great' }, { rating: 3, body: 42 }, { rating: 3, body: 'x'.repeat(5001) }]) {
      const res = await review(m, app.appId, body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 40)).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, state: 'error', data: null });
    }
    expect((await review(m, '00000000-0000-7000-8000-000000000000', { rating: 3 })).statusCode).toBe(404);
    expect((await review(m, 'nope', { rating: 3 })).statusCode).toBe(404);
    expect((await h.req('POST', `/apps/${app.appId}/reviews`, { body: { rating: 3 } })).statusCode).toBe(401);
    expect((await h.req('POST', `/apps/${app.appId}/reviews`, { token: await dev.token(), body: { rating: 3 } })).statusCode).toBe(403);
    await h.req('DELETE', `/apps/installations/${installationId}`, { token: await m.fresh() });
    expect((await review(m, app.appId, { rating: 3 })).statusCode).toBe(403);
    expect((await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: await dev.token() })).json().data.app).toMatchObject({ rating: 0, reviewCount: 0 });
  });
});
