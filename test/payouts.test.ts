// Payouts (C10.4-C10.7, C14.12, C14.13): money tests (24.99 rolls over, 25.00 pays out, a failed
// payout is paid again exactly once), the developer API shapes, the operator routes, and on
// PostgreSQL the concurrency guarantees (three sweeps at once, two dispatchers, billing twice).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { advanceTo, developer, install, merchant, operator, paidApp, type Developer , workerCopies } from './helpers/billing.js';
import { runBillingCharges } from '../src/billing/charges.js';
import { dispatchPayouts, runPayoutSweep } from '../src/payouts/payouts.js';
import { latestInstant, nextInstant } from '../src/billing/schedule.js';
import { sandbox } from '../src/billing/providers.js';

const serverUrl = inject('testDatabaseUrl');
let h: Harness;
let ops: () => Promise<string>;
beforeAll(async () => {
  h = await createHarness();
  ops = await operator(h);
});
afterAll(() => h?.close());

// Runs scoped to the test's developers (other test files share a PostgreSQL database, with their own clocks).
const ids = (devs: Developer[]) => devs.map((d) => d.userId);
const billing = (...devs: Developer[]) => runBillingCharges(h.deps, { developerIds: ids(devs) });
const sweep = (...devs: Developer[]) => runPayoutSweep(h.deps, { developerIds: ids(devs) });
const dispatch = (...devs: Developer[]) => dispatchPayouts(h.deps, { developerIds: ids(devs) });

async function get(dev: Developer, url: string) {
  return h.req('GET', url, { token: await dev.token() });
}
const earningsOf = async (dev: Developer) => (await get(dev, '/apps/developer/earnings')).json().data;
const payoutsOf = async (dev: Developer, query = '') => (await get(dev, `/apps/developer/payouts${query}`)).json().data;

async function setMethod(dev: Developer, body: Record<string, unknown>) {
  const res = await h.req('PUT', '/apps/developer/payout-method', { token: await dev.token(), body });
  expect(res.statusCode).toBe(200);
  return res.json().data;
}

/** A developer earning once from a paid app on a new store (no trial: charged at once). */
async function earning(amount: string, dev?: Developer) {
  dev ??= await developer(h);
  const app = await paidApp(h, dev, { amount });
  const installed = await install(h, await merchant(h), app);
  await billing(dev);
  return { dev, app, ...installed };
}

/** Just past the developer's next sweep instant (not into its installations' next billing period). */
async function toNextInstant(dev: Developer) {
  const { nextPayoutAt } = await earningsOf(dev);
  expect(nextPayoutAt).toEqual(expect.any(String));
  advanceTo(h, new Date(Date.parse(nextPayoutAt) + 60_000));
}

describe('C12.2 runs the billing and payout jobs on demand', () => {
  const runJob = async (job: string) => {
    const res = await h.req('POST', `/apps/admin/jobs/${job}/run`, { token: await ops() });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ job, processed: expect.any(Number) });
  };
  it('registers billing-charges, payout-sweep and payout-dispatch', () => {
    expect(h.deps.jobs.names()).toEqual(expect.arrayContaining(['billing-charges', 'payout-sweep', 'payout-dispatch']));
  });
  // These runs cover every developer in the database. Payout runs are harmless to the other test
  // files (only the ledger test has payout methods, and it tolerates them); a charge run is not:
  // on a shared PostgreSQL database it would charge other files' installations at this file's clock.
  it.each(['payout-sweep', 'payout-dispatch'])('%s', runJob);
  it.skipIf(!!serverUrl)('billing-charges', () => runJob('billing-charges'));
});

describe('sweep instants (C10.5, C14.13)', () => {
  it('monthly on the 1st, weekly on Mondays, fortnightly every second Monday, after the account was created', () => {
    const created = new Date('2026-01-15T12:00:00Z'); // a Thursday
    expect(latestInstant('monthly', created, new Date('2026-01-31T23:59:00Z'))).toBeNull();
    expect(latestInstant('monthly', created, new Date('2026-03-10T00:00:00Z'))!.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(nextInstant('monthly', created, new Date('2026-01-20T00:00:00Z')).toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(nextInstant('monthly', created, new Date('2026-12-31T23:00:00Z')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(latestInstant('weekly', created, new Date('2026-01-18T00:00:00Z'))).toBeNull();
    expect(latestInstant('weekly', created, new Date('2026-01-21T08:00:00Z'))!.toISOString()).toBe('2026-01-19T00:00:00.000Z');
    expect(nextInstant('weekly', created, new Date('2026-01-19T00:00:00Z')).toISOString()).toBe('2026-01-26T00:00:00.000Z');
    // fortnightly: the first Monday after creation (Jan 19), then every 14 days
    expect(nextInstant('fortnightly', created, new Date('2026-01-16T00:00:00Z')).toISOString()).toBe('2026-01-19T00:00:00.000Z');
    expect(nextInstant('fortnightly', created, new Date('2026-01-19T00:00:00Z')).toISOString()).toBe('2026-02-02T00:00:00.000Z');
    expect(latestInstant('fortnightly', created, new Date('2026-02-01T00:00:00Z'))!.toISOString()).toBe('2026-01-19T00:00:00.000Z');
    expect(latestInstant('fortnightly', created, new Date('2026-02-16T01:00:00Z'))!.toISOString()).toBe('2026-02-16T00:00:00.000Z');
  });
});

describe('money: the minimum payout (C10.5)', () => {
  it('24.99 rolls over to the next cycle; 25.00 pays out', async () => {
    // 31.24 at 20 %: commission 6.248 -> 6.25, developer 24.99. 31.25: 6.25 and 25.00.
    const low = await earning('31.24');
    const even = await earning('31.25');
    for (const e of [low, even]) await setMethod(e.dev, { type: 'paypal', email: `dev-${e.dev.userId.slice(-6)}@example.com` });
    expect(await earningsOf(low.dev)).toMatchObject({ totalEarned: '24.99', balance: '24.99', minimumPayoutAmount: '25.00' });

    await toNextInstant(low.dev); // both accounts were made moments apart: the same instants
    await sweep(low.dev, even.dev);
    expect((await payoutsOf(low.dev)).items).toEqual([]);
    expect(await earningsOf(low.dev)).toMatchObject({ balance: '24.99', inFlight: '0.00' });
    const [paid] = (await payoutsOf(even.dev)).items;
    expect(paid).toMatchObject({ amount: '25.00', currency: 'USD', status: 'pending', payoutMethodType: 'paypal' });
    expect(await earningsOf(even.dev)).toMatchObject({ totalEarned: '25.00', balance: '0.00', inFlight: '25.00', totalPaidOut: '0.00' });

    // More earnings before the next instant: swept together then, not now (this instant is done).
    await earning('31.24', low.dev);
    await sweep(low.dev);
    expect((await payoutsOf(low.dev)).items).toEqual([]);
    expect(await earningsOf(low.dev)).toMatchObject({ balance: '49.98' });
    await toNextInstant(low.dev);
    await sweep(low.dev);
    await sweep(low.dev);
    const { items } = await payoutsOf(low.dev);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ amount: '49.98', status: 'pending' });
    expect(items[0].transactionIds).toHaveLength(2);
  });

  it('a failed payout returns its amount and is paid again by the next sweep, exactly once', async () => {
    const { dev } = await earning('31.25');
    await setMethod(dev, { type: 'paypal', email: 'fail-payouts@example.com' });
    await toNextInstant(dev);
    await sweep(dev);
    expect(await dispatch(dev)).toEqual({ dispatched: 0, failed: 1 });
    const [failed] = (await payoutsOf(dev)).items;
    expect(failed).toMatchObject({ status: 'failed', externalReference: null, amount: '25.00' });
    expect(failed.failureReason).toMatch(/fail/);
    expect(await earningsOf(dev)).toMatchObject({ totalEarned: '25.00', balance: '25.00', inFlight: '0.00', totalPaidOut: '0.00' });

    await setMethod(dev, { type: 'bank', accountHolder: 'Dev Eloper', accountNumber: '000123456789', routingNumber: '110000000' });
    await sweep(dev); // this instant was swept already
    await dispatch(dev);
    expect((await payoutsOf(dev)).items).toHaveLength(1);

    await toNextInstant(dev);
    await sweep(dev);
    await sweep(dev);
    const { items } = await payoutsOf(dev);
    expect(items.map((p: any) => p.status)).toEqual(['pending', 'failed']);
    expect(items[0]).toMatchObject({ amount: '25.00', payoutMethodType: 'bank' });
    expect(items[0].transactionIds).toEqual(failed.transactionIds);

    expect(await dispatch(dev)).toEqual({ dispatched: 1, failed: 0 });
    await sweep(dev);
    const retried = (await payoutsOf(dev)).items[0];
    expect(retried).toMatchObject({ status: 'in_transit', externalReference: expect.stringMatching(/^sandbox_wire_/) });
    const before = h.clock.nowMs();
    const res = await h.req('POST', `/apps/admin/payouts/${retried.payoutId}/mark-paid`, { token: await ops() });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.payout).toMatchObject({ status: 'paid', paidAt: expect.any(String) });
    expect(Date.parse(res.json().data.payout.paidAt)).toBeGreaterThanOrEqual(before);
    expect(await earningsOf(dev)).toMatchObject({ totalEarned: '25.00', totalPaidOut: '25.00', balance: '0.00', inFlight: '0.00' });
    expect((await payoutsOf(dev)).items).toHaveLength(2);
  });

  it('process-scheduled with force pays a balance out of cycle and dispatches it (C10.7, C14.13)', async () => {
    const { dev } = await earning('40.00');
    await setMethod(dev, { type: 'paypal', email: 'force@example.com' });
    const res = await h.req('POST', '/apps/admin/payouts/process-scheduled', { token: await ops(), body: { force: true } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ created: expect.any(Number), dispatched: expect.any(Number), failed: expect.any(Number) });
    expect(res.json().data.created).toBeGreaterThanOrEqual(1);
    const { items } = await payoutsOf(dev);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ amount: '32.00', status: 'in_transit' });
    const again = await h.req('POST', '/apps/admin/payouts/process-scheduled', { token: await ops(), body: { force: true } });
    expect(again.statusCode).toBe(200);
    expect((await payoutsOf(dev)).items).toHaveLength(1);
    expect((await h.req('POST', '/apps/admin/payouts/process-scheduled', { token: await ops(), body: { force: 'yes' } })).statusCode).toBe(400);
    expect((await h.req('POST', '/apps/admin/payouts/process-scheduled', { token: await dev.token(), body: {} })).statusCode).toBe(403);
  });
});

describe('payout method (C10.4, C14.12)', () => {
  it('is null until set; a bank account number is masked and stored encrypted', async () => {
    const dev = await developer(h);
    expect((await get(dev, '/apps/developer/payout-method')).json().data).toEqual({ payoutMethod: null });
    expect((await earningsOf(dev)).nextPayoutAt).toBeNull();
    const put = await setMethod(dev, { type: 'bank', accountHolder: 'Ada', accountNumber: '123456789', routingNumber: '021000021' });
    expect(put).toEqual({ payoutMethod: { type: 'bank', accountHolder: 'Ada', accountNumber: '*****6789', routingNumber: '021000021', updatedAt: expect.any(String) } });
    expect((await get(dev, '/apps/developer/payout-method')).json().data).toEqual(put);
    const stored = await h.db.query('SELECT payout_method::text AS m FROM developer_accounts WHERE developer_id = $1', [dev.userId]);
    expect(stored.rows[0].m).not.toContain('123456789');
    const next = (await earningsOf(dev)).nextPayoutAt;
    expect(next).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);

    const token = await dev.token();
    for (const body of [{ type: 'swift' }, { type: 'paypal', email: 'nope' }, { type: 'bank', accountHolder: 'A', accountNumber: '12', routingNumber: '021000021' }, { type: 'bank', accountNumber: '123456789', routingNumber: '021000021' }]) {
      const res = await h.req('PUT', '/apps/developer/payout-method', { token, body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, state: 'error', data: null });
    }
    expect((await h.req('GET', '/apps/developer/payout-method')).statusCode).toBe(401);
  });
});

describe('operator payout routes (C10.7, C10.4)', () => {
  it('PATCH a developer: schedule, minimum, commission rate; validation; 404; operator only', async () => {
    const dev = await developer(h);
    await setMethod(dev, { type: 'paypal', email: 'sched@example.com' });
    const res = await h.req('PATCH', `/apps/admin/developers/${dev.userId}`, { token: await ops(), body: { payoutSchedule: 'weekly', minimumPayoutAmount: '10.00', commissionRate: 0.25 } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.developer).toMatchObject({ developerId: dev.userId, payoutSchedule: 'weekly', minimumPayoutAmount: '10.00', commissionRate: 0.25 });
    const e = await earningsOf(dev);
    expect(e.minimumPayoutAmount).toBe('10.00');
    expect(new Date(e.nextPayoutAt).getUTCDay()).toBe(1); // a Monday
    expect(e.nextPayoutAt).toMatch(/T00:00:00\.000Z$/);

    const t = await ops();
    const shown = await h.req('GET', `/apps/admin/developers/${dev.userId}`, { token: t });
    expect(shown.json().data.developer).toEqual({
      developerId: dev.userId, payoutSchedule: 'weekly', minimumPayoutAmount: '10.00', currency: 'USD', commissionRate: 0.25,
      payoutMethod: { type: 'paypal', email: 'sched@example.com', updatedAt: expect.any(String) }, nextPayoutAt: e.nextPayoutAt,
    });
    for (const body of [{ payoutSchedule: 'daily' }, { commissionRate: 1.5 }, { commissionRate: '0.2' }, { minimumPayoutAmount: '-1' }, { minimumPayoutAmount: 'ten' }, {}]) {
      expect((await h.req('PATCH', `/apps/admin/developers/${dev.userId}`, { token: t, body })).statusCode, JSON.stringify(body)).toBe(400);
    }
    expect((await h.req('PATCH', `/apps/admin/developers/00000000-0000-7000-8000-000000000000`, { token: t, body: { payoutSchedule: 'weekly' } })).statusCode).toBe(404);
    expect((await h.req('PATCH', `/apps/admin/developers/${dev.userId}`, { token: await dev.token(), body: { commissionRate: 0 } })).statusCode).toBe(403);
    expect((await h.req('PATCH', `/apps/admin/developers/${dev.userId}`, { body: { commissionRate: 0 } })).statusCode).toBe(401);
  });

  it('mark-paid only from in_transit (409 otherwise); fail from pending/processing/in_transit (409 otherwise)', async () => {
    const { dev } = await earning('50.00');
    await setMethod(dev, { type: 'paypal', email: 'ops@example.com' });
    await runPayoutSweep(h.deps, { force: true, developerIds: [dev.userId] });
    const [pending] = (await payoutsOf(dev)).items;
    const t = await ops();
    expect((await h.req('POST', `/apps/admin/payouts/${pending.payoutId}/mark-paid`, { token: t })).statusCode).toBe(409);
    expect((await h.req('POST', `/apps/admin/payouts/${pending.payoutId}/fail`, { token: t, body: {} })).statusCode).toBe(400);
    const failed = await h.req('POST', `/apps/admin/payouts/${pending.payoutId}/fail`, { token: t, body: { reason: 'bank closed' } });
    expect(failed.statusCode).toBe(200);
    expect(failed.json().data.payout).toMatchObject({ status: 'failed', failureReason: 'bank closed' });
    expect((await h.req('POST', `/apps/admin/payouts/${pending.payoutId}/fail`, { token: t, body: { reason: 'again' } })).statusCode).toBe(409);
    expect((await h.req('POST', `/apps/admin/payouts/${pending.payoutId}/mark-paid`, { token: t })).statusCode).toBe(409);
    expect(await earningsOf(dev)).toMatchObject({ balance: '40.00', inFlight: '0.00' });

    await runPayoutSweep(h.deps, { force: true, developerIds: [dev.userId] });
    await dispatch(dev);
    const [inTransit] = (await payoutsOf(dev, '?status=in_transit')).items;
    const failedInTransit = await h.req('POST', `/apps/admin/payouts/${inTransit.payoutId}/fail`, { token: t, body: { reason: 'returned by the bank' } });
    expect(failedInTransit.json().data.payout.status).toBe('failed');
    expect(await earningsOf(dev)).toMatchObject({ balance: '40.00', inFlight: '0.00', totalPaidOut: '0.00' });

    expect((await h.req('POST', `/apps/admin/payouts/00000000-0000-7000-8000-000000000000/mark-paid`, { token: t })).statusCode).toBe(404);
    expect((await h.req('POST', `/apps/admin/payouts/nope/mark-paid`, { token: t })).statusCode).toBe(404);
    expect((await h.req('POST', `/apps/admin/payouts/${inTransit.payoutId}/mark-paid`, { token: await dev.token() })).statusCode).toBe(403);
  });
});

describe('developer API: earnings and payouts', () => {
  it('earnings has exactly the fields of app-api.md, amounts as decimal strings', async () => {
    const { dev } = await earning('10.00');
    expect(await earningsOf(dev)).toEqual({
      totalEarned: '8.00', totalPaidOut: '0.00', balance: '8.00', inFlight: '0.00', currency: 'USD', nextPayoutAt: null, minimumPayoutAmount: '25.00',
    });
  });

  it('lists payouts newest first with { page, limit, total, hasMore }, filters by status, 400 on an unknown one; detail inlines transactions; another developer’s payout is 404', async () => {
    const dev = await developer(h);
    await h.req('PATCH', `/apps/admin/developers/${dev.userId}`, { token: await ops(), body: { minimumPayoutAmount: '0.01' } });
    await setMethod(dev, { type: 'paypal', email: 'list@example.com' });
    const created: string[] = [];
    for (const amount of ['1.00', '2.00', '3.00']) {
      await earning(amount, dev);
      h.clock.advance(1);
      const { payouts } = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.userId] });
      created.push(payouts[0].id);
    }
    const t = await ops();
    await h.req('POST', `/apps/admin/payouts/${created[0]}/fail`, { token: t, body: { reason: 'test' } });

    const all = await get(dev, '/apps/developer/payouts');
    expect(all.statusCode).toBe(200);
    const data = all.json().data;
    expect(data.items.map((p: any) => p.payoutId)).toEqual([...created].reverse());
    expect(data.pagination).toEqual({ page: 1, limit: 50, total: 3, hasMore: false });
    expect(Object.keys(data.items[0]).sort()).toEqual(
      ['payoutId', 'developerId', 'amount', 'currency', 'status', 'payoutMethodType', 'externalReference', 'periodStart', 'periodEnd', 'transactionIds', 'failureReason', 'paidAt', 'createdAt'].sort(),
    );
    expect(data.items[0]).toMatchObject({ developerId: dev.userId, amount: '2.40', currency: 'USD', status: 'pending', payoutMethodType: 'paypal', externalReference: null, failureReason: null, paidAt: null });

    expect((await payoutsOf(dev, '?limit=2')).pagination).toEqual({ page: 1, limit: 2, total: 3, hasMore: true });
    const page2 = await payoutsOf(dev, '?limit=2&page=2');
    expect(page2.items.map((p: any) => p.payoutId)).toEqual([created[0]]);
    expect(page2.pagination).toEqual({ page: 2, limit: 2, total: 3, hasMore: false });
    expect((await payoutsOf(dev, '?limit=1000')).pagination.limit).toBe(250);
    const failedOnly = await payoutsOf(dev, '?status=failed');
    expect(failedOnly.items.map((p: any) => p.payoutId)).toEqual([created[0]]);
    expect(failedOnly.pagination.total).toBe(1);
    const bad = await get(dev, '/apps/developer/payouts?status=lost');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ status: 400, state: 'error', data: null });

    const detail = await get(dev, `/apps/developer/payouts/${created[2]}`);
    expect(detail.statusCode).toBe(200);
    const { payout, transactions } = detail.json().data;
    expect(payout.payoutId).toBe(created[2]);
    expect(transactions).toHaveLength(1);
    expect(transactions[0]).toMatchObject({ amount: '3.00', developerAmount: '2.40', currency: 'USD', transactionId: payout.transactionIds[0] });
    expect(Object.keys(transactions[0])).toEqual(expect.arrayContaining(['transactionId', 'appId', 'storeId', 'amount', 'developerAmount', 'currency', 'createdAt']));

    const other = await developer(h);
    expect((await get(other, `/apps/developer/payouts/${created[2]}`)).statusCode).toBe(404);
    expect((await get(other, `/apps/developer/payouts/00000000-0000-7000-8000-000000000000`)).statusCode).toBe(404);
    expect((await get(other, `/apps/developer/payouts/not-a-uuid`)).statusCode).toBe(404);
    expect((await payoutsOf(other)).items).toEqual([]);
    expect((await h.req('GET', '/apps/developer/payouts')).statusCode).toBe(401);
    expect((await h.req('GET', '/apps/developer/payouts', { token: await ops() })).statusCode).toBe(403);
  });
});

// Concurrency needs real concurrent connections: PostgreSQL only (PGlite runs one transaction at a time).
describe.skipIf(!serverUrl)('concurrency on PostgreSQL (C1.3)', () => {
  const copies = workerCopies(() => h, serverUrl!);

  it('three sweeps started at once create one payout per developer (scheduled and forced)', async () => {
    const devs: Developer[] = [];
    for (let i = 0; i < 4; i++) {
      const { dev } = await earning('40.00');
      await setMethod(dev, { type: 'paypal', email: `race${i}@example.com` });
      devs.push(dev);
    }
    await toNextInstant(devs[0]); // accounts made moments apart share their instants
    const scope = { developerIds: ids(devs) };
    await Promise.all(copies.map((deps) => runPayoutSweep(deps, scope)));
    for (const d of devs) expect((await payoutsOf(d)).items, d.userId).toHaveLength(1);

    for (const d of devs) await earning('40.00', d);
    await Promise.all(copies.map((deps) => runPayoutSweep(deps, { ...scope, force: true })));
    for (const d of devs) {
      const { items } = await payoutsOf(d);
      expect(items.map((p: any) => p.amount)).toEqual(['32.00', '32.00']);
    }
  });

  it('two dispatchers never move one payout twice', async () => {
    const devs: Developer[] = [];
    for (let i = 0; i < 3; i++) {
      const { dev } = await earning('40.00');
      await h.req('PATCH', `/apps/admin/developers/${dev.userId}`, { token: await ops(), body: { minimumPayoutAmount: '0.01' } });
      await setMethod(dev, { type: 'paypal', email: i === 2 ? 'fail-race@example.com' : `d${i}@example.com` });
      devs.push(dev);
    }
    const payoutIds: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (const d of devs) {
        if (round) await earning('5.00', d);
        const { payouts } = await runPayoutSweep(h.deps, { force: true, developerIds: [d.userId] });
        payoutIds.push(payouts[0].id);
      }
    }
    const results = await Promise.all(copies.slice(0, 2).map((deps) => dispatchPayouts(deps, { developerIds: ids(devs) })));
    expect(results.reduce((n, r) => n + r.dispatched + r.failed, 0)).toBe(payoutIds.length);
    const moves = await h.db.query<{ payout_id: string; from_status: string; to_status: string }>(
      `SELECT payout_id, from_status, to_status FROM payout_status_changes WHERE payout_id = ANY($1::uuid[])`, [payoutIds],
    );
    for (const id of payoutIds) {
      const mine = moves.rows.filter((m) => m.payout_id === id).map((m) => `${m.from_status}>${m.to_status}`).sort();
      expect([['null>pending', 'pending>processing', 'processing>in_transit'], ['null>pending', 'pending>processing', 'processing>failed']]).toContainEqual(mine);
      expect(sandbox.payouts.calls.filter((c) => c.idempotencyKey === id)).toHaveLength(1);
    }
  });

  it('the billing job run twice at once charges each installation once', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '9.00' });
    const installs: string[] = [];
    for (let i = 0; i < 4; i++) installs.push((await install(h, await merchant(h), app)).installationId);
    await Promise.all(copies.slice(0, 2).map((deps) => runBillingCharges(deps, { developerIds: [dev.userId] })));
    const { rows } = await h.db.query<{ id: string; installation_id: string; status: string }>(
      'SELECT id, installation_id, status FROM app_transactions WHERE installation_id = ANY($1::uuid[])', [installs],
    );
    expect(rows.map((r) => r.installation_id).sort()).toEqual([...installs].sort());
    for (const r of rows) {
      expect(r.status).toBe('paid');
      expect(sandbox.payments.calls.filter((c) => c.idempotencyKey === r.id)).toHaveLength(1);
    }
    const entries = await h.db.query('SELECT count(*)::int AS n FROM journal_entries WHERE transaction_id = ANY($1::uuid[])', [rows.map((r) => r.id)]);
    expect(entries.rows[0].n).toBe(4);
    expect(await earningsOf(dev)).toMatchObject({ totalEarned: '28.80' });
  });
});
