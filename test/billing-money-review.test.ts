// Review of the money paths (C10): an operator failing a payout a dispatcher is sending, jobs that
// stopped for every row after one bad row (billing, sweep, dispatch), a change of billing interval
// that left an installation uncharged for most of a year, and an uninstall racing the billing job.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { developer, insertDeveloperWithInstallation, install, merchant, operator, paidApp, tokenFor, transactionsOf, advanceTo , workerCopies } from './helpers/billing.js';
import { parseDecimal } from '../src/billing/money-math.js';
import { openCharge, runBillingCharges, settleCharge } from '../src/billing/charges.js';
import { addMonths } from '../src/billing/schedule.js';
import { putPayoutMethod } from '../src/billing/developer-accounts.js';
import { sandbox, setBillingProviders, type PayoutRequest } from '../src/billing/providers.js';
import { claimPayouts, dispatchPayouts, DISPATCH_LEASE_MS, failPayout, markPayoutPaid, runPayoutSweep } from '../src/payouts/payouts.js';
import { uuidv7 } from '../src/ids.js';
import { openPostgres } from '../src/db/postgres.js';

const serverUrl = inject('testDatabaseUrl');

let h: Harness;
let ops: () => Promise<string>;
beforeAll(async () => {
  h = await createHarness();
  ops = await operator(h);
});
afterAll(() => h?.close());

type Dev = Awaited<ReturnType<typeof insertDeveloperWithInstallation>>;
let periodSeq = 0;

function chargeSpec(dev: Dev, amountMinor: number, rate: string) {
  const start = new Date(Date.UTC(2002, 0, 1) + ++periodSeq * 1000);
  return {
    installationId: dev.installationId, appId: dev.appId, storeId: dev.storeId, developerId: dev.developerId,
    amountMinor, currency: 'USD', commissionRate: parseDecimal(rate), fxRate: parseDecimal('1'),
    periodStart: start, periodEnd: new Date(start.getTime() + 30 * 86_400_000),
  };
}

/** A paid USD charge, posted as the billing job posts it. */
async function paidCharge(dev: Dev, amountMinor: number, rate = '0.2') {
  const txn = await openCharge(h.db, chargeSpec(dev, amountMinor, rate), h.clock.now());
  await settleCharge(h.deps, txn!, { ok: true, reference: `ref-${txn!.id}` });
  return txn!;
}

const earningsOf = async (developerId: string) =>
  (await h.req('GET', '/apps/developer/earnings', { token: await tokenFor(h, developerId, 'PARTNER') })).json().data;

const statusOf = async (payoutId: string) => (await h.db.query<{ status: string }>('SELECT status FROM payouts WHERE id = $1', [payoutId])).rows[0].status;

describe('C10.7 an operator failing a payout that a dispatcher is sending', () => {
  it('is 409 while the provider call is in flight; the dispatcher records in_transit and the transactions are paid once', async () => {
    const dev = await insertDeveloperWithInstallation(h);
    await paidCharge(dev, 50_00);
    await putPayoutMethod(h.deps, dev.developerId, { type: 'paypal', email: 'inflight@example.com' });
    const { payouts: [payout] } = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] });

    // The sandbox provider, held at the moment it is called, as a real provider's network call is.
    let entered!: () => void;
    const inProvider = new Promise<void>((resolve) => { entered = resolve; });
    let release!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    const submitted: PayoutRequest[] = [];
    setBillingProviders(h.deps, {
      payouts: {
        async submit(request) {
          submitted.push(request);
          entered();
          await released;
          return sandbox.payouts.submit(request);
        },
      },
    });
    try {
      const dispatching = dispatchPayouts(h.deps, { developerIds: [dev.developerId] });
      await inProvider;
      const res = await h.req('POST', `/apps/admin/payouts/${payout.id}/fail`, { token: await ops(), body: { reason: 'operator thinks it failed' } });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ status: 409, state: 'error', message: expect.stringMatching(/being sent/) });
      release();
      expect(await dispatching).toEqual({ dispatched: 1, failed: 0 });
    } finally {
      release();
      setBillingProviders(h.deps, { payouts: sandbox.payouts });
    }
    expect(await statusOf(payout.id)).toBe('in_transit');
    expect(await earningsOf(dev.developerId)).toMatchObject({ totalEarned: '40.00', balance: '0.00', inFlight: '40.00', totalPaidOut: '0.00' });
    // Nothing is left to pay again: a new sweep makes no second payout of the same transactions.
    const again = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] });
    expect(again.created).toBe(0);
    expect(submitted.map((s) => s.amountMinor)).toEqual([40_00]);

    // Once the dispatcher has reported, the operator may fail it (the transfer came back).
    const failed = await h.req('POST', `/apps/admin/payouts/${payout.id}/fail`, { token: await ops(), body: { reason: 'returned by PayPal' } });
    expect(failed.statusCode).toBe(200);
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '40.00', inFlight: '0.00' });
  });

  it('a processing payout whose dispatcher went silent: 409 within its lease, failed once the lease has passed', async () => {
    const dev = await insertDeveloperWithInstallation(h);
    await paidCharge(dev, 30_00); // 24.00 to the developer
    await h.req('PATCH', `/apps/admin/developers/${dev.developerId}`, { token: await ops(), body: { minimumPayoutAmount: '10.00' } });
    await putPayoutMethod(h.deps, dev.developerId, { type: 'paypal', email: 'silent@example.com' });
    const { payouts: [payout] } = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] });
    await claimPayouts(h.deps, 1, [dev.developerId]); // a dispatcher claims it and dies
    expect(await statusOf(payout.id)).toBe('processing');

    const early = await h.req('POST', `/apps/admin/payouts/${payout.id}/fail`, { token: await ops(), body: { reason: 'stuck' } });
    expect(early.statusCode).toBe(409);
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '0.00', inFlight: '24.00' });

    h.clock.advance(DISPATCH_LEASE_MS / 1000 + 1);
    const late = await h.req('POST', `/apps/admin/payouts/${payout.id}/fail`, { token: await ops(), body: { reason: 'stuck' } });
    expect(late.statusCode).toBe(200);
    expect(late.json().data.payout).toMatchObject({ status: 'failed', failureReason: 'stuck' });
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '24.00', inFlight: '0.00' });
  });
});

describe('C10.7 a fail decided on the status the operator saw (expectedStatus)', () => {
  it('a pending payout sent meanwhile is a 409 with nothing changed; the status as it now is fails it; another value is a 400', async () => {
    const dev = await insertDeveloperWithInstallation(h);
    await paidCharge(dev, 50_00);
    await putPayoutMethod(h.deps, dev.developerId, { type: 'paypal', email: 'expected@example.com' });
    const { payouts: [payout] } = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] });
    // The operator looks: pending. Before the fail arrives, a dispatcher sends it.
    expect(await statusOf(payout.id)).toBe('pending');
    expect(await dispatchPayouts(h.deps, { developerIds: [dev.developerId] })).toEqual({ dispatched: 1, failed: 0 });
    const url = `/apps/admin/payouts/${payout.id}/fail`;
    const stale = await h.req('POST', url, { token: await ops(), body: { reason: 'never sent', expectedStatus: 'pending' } });
    expect(stale.statusCode, stale.body).toBe(409);
    expect(stale.json().message).toBe('Payout is in_transit, not pending as expected; look at it again before failing it');
    expect(await statusOf(payout.id)).toBe('in_transit');
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '0.00', inFlight: '40.00' });

    const bad = await h.req('POST', url, { token: await ops(), body: { reason: 'x', expectedStatus: 'paid' } });
    expect(bad.statusCode, bad.body).toBe(400);
    const failed = await h.req('POST', url, { token: await ops(), body: { reason: 'returned by PayPal', expectedStatus: 'in_transit' } });
    expect(failed.statusCode, failed.body).toBe(200);
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '40.00', inFlight: '0.00' });
  });
});

describe('jobs go on past one bad row', () => {
  it('payout-dispatch: a payout whose method cannot be read fails (provider never called); the payouts after it are dispatched in the same run', async () => {
    const bad = await insertDeveloperWithInstallation(h);
    const good = await insertDeveloperWithInstallation(h);
    for (const d of [bad, good]) await paidCharge(d, 50_00);
    await putPayoutMethod(h.deps, bad.developerId, { type: 'bank', accountHolder: 'Dev', accountNumber: '000123456789', routingNumber: '110000000' });
    await putPayoutMethod(h.deps, good.developerId, { type: 'paypal', email: 'good@example.com' });
    const { payouts: [badPayout] } = await runPayoutSweep(h.deps, { force: true, developerIds: [bad.developerId] });
    const { payouts: [goodPayout] } = await runPayoutSweep(h.deps, { force: true, developerIds: [good.developerId] });
    // Sealed with a key the service no longer has.
    await h.db.query(`UPDATE payouts SET payout_method = jsonb_set(payout_method, '{accountNumberEnc}', '"v1.AAAA.AAAA.AAAA"') WHERE id = $1`, [badPayout.id]);
    const before = sandbox.payouts.calls.length;

    const result = await dispatchPayouts(h.deps, { developerIds: [bad.developerId, good.developerId] });
    expect(result).toEqual({ dispatched: 1, failed: 1 });
    expect(await statusOf(goodPayout.id)).toBe('in_transit');
    const failed = (await h.db.query('SELECT status, failure_reason FROM payouts WHERE id = $1', [badPayout.id])).rows[0];
    expect(failed).toMatchObject({ status: 'failed', failure_reason: expect.stringMatching(/payout method/) });
    expect(sandbox.payouts.calls.slice(before).map((c) => c.idempotencyKey)).toEqual([goodPayout.id]);
    expect(await earningsOf(bad.developerId)).toMatchObject({ balance: '40.00', inFlight: '0.00' });
  });

  it('payout-sweep: one developer whose sweep throws does not keep the developers after it from being swept', async () => {
    const broken = await insertDeveloperWithInstallation(h);
    const fine = await insertDeveloperWithInstallation(h);
    for (const d of [broken, fine]) {
      await paidCharge(d, 50_00);
      await putPayoutMethod(h.deps, d.developerId, { type: 'paypal', email: 'sweep@example.com' });
    }
    // A paid transaction the ledger never saw (an older build's row): this sweep refuses to pay.
    const orphan = await openCharge(h.db, chargeSpec(broken, 10_00, '0'), h.clock.now());
    await h.db.query(`UPDATE app_transactions SET status = 'paid' WHERE id = $1`, [orphan!.id]);

    const { payouts } = await runPayoutSweep(h.deps, { force: true, developerIds: [broken.developerId, fine.developerId] });
    expect(payouts.map((p) => p.developer_id)).toEqual([fine.developerId]);
    expect(await earningsOf(fine.developerId)).toMatchObject({ balance: '0.00', inFlight: '40.00' });
    expect(await earningsOf(broken.developerId)).toMatchObject({ balance: '40.00', inFlight: '0.00' });
  });

  it('billing-charges: an installation whose charge cannot be recorded does not leave the installations after it uncharged', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '12.00' });
    const first = await install(h, await merchant(h), app);
    const second = await install(h, await merchant(h), app);
    expect(first.installationId < second.installationId).toBe(true); // the job walks installations by id
    const fn = `refuse_charge_${uuidv7().replace(/-/g, '')}`;
    await h.db.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.installation_id = '${first.installationId}' THEN RAISE EXCEPTION 'refused for the test'; END IF;
        RETURN NEW;
      END $$`);
    await h.db.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON app_transactions FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
    try {
      await runBillingCharges(h.deps, { developerIds: [dev.userId] });
    } finally {
      await h.db.query(`DROP TRIGGER ${fn} ON app_transactions`);
      await h.db.query(`DROP FUNCTION ${fn}()`);
    }
    expect(await transactionsOf(h, first.installationId)).toEqual([]);
    expect((await transactionsOf(h, second.installationId)).map((t: any) => t.status)).toEqual(['paid']);
    // The next run charges the first one.
    await runBillingCharges(h.deps, { developerIds: [dev.userId] });
    expect((await transactionsOf(h, first.installationId)).map((t: any) => t.status)).toEqual(['paid']);
  });
});

describe('C10.2 a price moving from monthly to yearly', () => {
  it('charges the year from the end of the month already paid: neither nothing until next year, nor the paid month twice', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '10.00' });
    const { installationId } = await install(h, await merchant(h), app);
    await runBillingCharges(h.deps, { developerIds: [dev.userId] });
    const [month] = await transactionsOf(h, installationId);
    expect(month).toMatchObject({ status: 'paid', amount_cents: 10_00 });

    const res = await h.req('PATCH', `/apps/developer/apps/${app.appId}`, {
      token: await dev.token(), body: { pricing: { type: 'recurring', amount: '100.00', currency: 'USD', interval: 'year' } },
    });
    expect(res.statusCode).toBe(200);
    advanceTo(h, new Date(month.period_end.getTime() + 60_000));
    await runBillingCharges(h.deps, { developerIds: [dev.userId] });
    const charged = await transactionsOf(h, installationId);
    expect(charged).toHaveLength(2);
    expect(charged[1]).toMatchObject({ status: 'paid', amount_cents: 100_00 });
    expect(charged[1].period_start.toISOString()).toBe(month.period_end.toISOString());
    expect(charged[1].period_end.toISOString()).toBe(addMonths(month.period_end, 12).toISOString());

    // Through the year: nothing more until it ends, then the next year.
    advanceTo(h, addMonths(month.period_end, 6));
    await runBillingCharges(h.deps, { developerIds: [dev.userId] });
    expect(await transactionsOf(h, installationId)).toHaveLength(2);
    advanceTo(h, new Date(addMonths(month.period_end, 12).getTime() + 60_000));
    await runBillingCharges(h.deps, { developerIds: [dev.userId] });
    const later = await transactionsOf(h, installationId);
    expect(later).toHaveLength(3);
    expect(later[2].period_start.toISOString()).toBe(addMonths(month.period_end, 12).toISOString());
  });
});

describe.skipIf(!serverUrl)('on PostgreSQL: sweeps, dispatchers, charges and operator fails all at once (C10.3, C10.5-C10.7)', () => {
  const copies = workerCopies(() => h, serverUrl!);

  it('every transaction is paid out exactly once, and each developer is paid exactly what they earned', async () => {
    const devs: Dev[] = [];
    for (let i = 0; i < 3; i++) {
      const d = await insertDeveloperWithInstallation(h);
      await putPayoutMethod(h.deps, d.developerId, { type: 'paypal', email: `mixed${i}@example.com` });
      await h.db.query('UPDATE developer_accounts SET minimum_payout_cents = 1 WHERE developer_id = $1', [d.developerId]);
      await paidCharge(d, 50_00);
      devs.push(d);
    }
    const ids = devs.map((d) => d.developerId);
    const live = async (statuses = ['pending', 'processing', 'in_transit']) => (await h.db.query<{ id: string }>(
      `SELECT id FROM payouts WHERE developer_id = ANY($1::uuid[]) AND status = ANY($2::text[])`, [ids, statuses])).rows;
    const tolerate409 = (p: Promise<unknown>) => p.catch((err) => { if (err?.status !== 409) throw err; });

    for (let round = 0; round < 6; round++) {
      // The operator fails payouts the provider has not accepted (yet), as far as it can see.
      const fails = (await live(['pending', 'processing'])).map((p) => tolerate409(failPayout(copies[round % 3], p.id, 'operator says no')));
      const transits = (await h.db.query<{ id: string }>(
        `SELECT id FROM payouts WHERE developer_id = ANY($1::uuid[]) AND status = 'in_transit'`, [ids])).rows;
      const paid = round % 2 ? transits.map((p) => tolerate409(markPayoutPaid(copies[(round + 1) % 3], p.id))) : [];
      await Promise.all([
        runPayoutSweep(copies[0], { force: true, developerIds: ids }),
        runPayoutSweep(copies[1], { force: true, developerIds: ids }),
        dispatchPayouts(copies[2], { developerIds: ids }),
        dispatchPayouts(copies[1], { developerIds: ids }),
        ...devs.map(async (d, i) => {
          const deps = copies[(i + round) % 3];
          const txn = await openCharge(deps.db, chargeSpec(d, 10_00 + round, '0.2'), h.clock.now());
          await settleCharge(deps, txn!, { ok: true, reference: `ref-${txn!.id}` });
        }),
        ...fails,
        ...paid,
      ]);
    }
    // Drain: every payout reaches paid, balances are swept until nothing is left.
    for (let i = 0; i < 10 && ((await live()).length || i < 2); i++) {
      h.clock.advance(DISPATCH_LEASE_MS / 1000 + 1);
      await runPayoutSweep(h.deps, { force: true, developerIds: ids });
      await dispatchPayouts(h.deps, { developerIds: ids });
      for (const p of await live()) await tolerate409(markPayoutPaid(h.deps, p.id));
    }
    expect(await live()).toEqual([]);

    const { rows: twice } = await h.db.query(
      `SELECT pt.transaction_id FROM payout_transactions pt JOIN payouts p ON p.id = pt.payout_id
        WHERE p.developer_id = ANY($1::uuid[]) AND p.status = 'paid' GROUP BY pt.transaction_id HAVING count(*) > 1`, [ids]);
    expect(twice).toEqual([]);
    for (const d of devs) {
      const { rows: [sums] } = await h.db.query<{ earned: string; paid: string; unpaid: number }>(
        `SELECT (SELECT sum(usd_developer_amount_cents) FROM app_transactions WHERE developer_id = $1 AND status = 'paid')::text AS earned,
                (SELECT sum(amount_cents) FROM payouts WHERE developer_id = $1 AND status = 'paid')::text AS paid,
                (SELECT count(*) FROM app_transactions t WHERE developer_id = $1 AND status = 'paid'
                   AND NOT EXISTS (SELECT 1 FROM payout_transactions pt JOIN payouts p ON p.id = pt.payout_id
                                    WHERE pt.transaction_id = t.id AND p.status = 'paid'))::int AS unpaid`,
        [d.developerId]);
      expect(sums.unpaid).toBe(0);
      expect(sums.paid).toBe(sums.earned);
      // What the payout provider actually accepted (each payout id once, none of them refused): the
      // money that left, which a payout failed while it was being sent would push past the earnings.
      // A fail sent for a pending payout may reach it once in_transit (C10.7 allows that move: the
      // operator says the money came back), so those payouts are not counted as money that stayed out.
      const { rows: returned } = await h.db.query<{ payout_id: string }>(
        `SELECT c.payout_id FROM payout_status_changes c JOIN payouts p ON p.id = c.payout_id
          WHERE p.developer_id = $1 AND c.from_status = 'in_transit' AND c.to_status = 'failed'`, [d.developerId]);
      const back = new Set(returned.map((r) => r.payout_id));
      const sent = new Map(sandbox.payouts.calls.filter((c) => c.developerId === d.developerId && !back.has(c.idempotencyKey))
        .map((c) => [c.idempotencyKey, c.amountMinor]));
      expect(String([...sent.values()].reduce((a, b) => a + b, 0))).toBe(sums.earned);
      const e = await earningsOf(d.developerId);
      expect(e).toMatchObject({ balance: '0.00', inFlight: '0.00', totalPaidOut: e.totalEarned });
    }
  }, 120_000);
});

describe('C10.1, C4.7 an uninstall racing the billing job', () => {
  it('a charge is never claimed for an installation that is no longer active (the job read it as active earlier)', async () => {
    const dev = await developer(h);
    // In its trial, so the uninstall itself charges nothing (a period already due it would charge, C10.2).
    const app = await paidApp(h, dev, { amount: '15.00', trialDays: 7 });
    const m = await merchant(h);
    const { installationId } = await install(h, m, app);
    const res = await h.req('DELETE', `/apps/installations/${installationId}`, { token: await m.fresh() });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'uninstalled' });
    const row = (await h.db.query('SELECT store_id FROM installations WHERE id = $1', [installationId])).rows[0];
    const now = h.clock.now();
    const txn = await openCharge(h.db, {
      installationId, appId: app.appId, storeId: row.store_id, developerId: dev.userId, amountMinor: 15_00, currency: 'USD',
      commissionRate: parseDecimal('0.2'), fxRate: parseDecimal('1'), periodStart: now, periodEnd: addMonths(now, 1),
    }, now);
    expect(txn).toBeNull();
    expect(await transactionsOf(h, installationId)).toEqual([]);
  });
});

describe.skipIf(!serverUrl)('on PostgreSQL: an uninstall committing while the billing job claims', () => {
  it('the merchant is not charged for the app they removed', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '15.00' });
    const m = await merchant(h);
    const { installationId } = await install(h, m, app);
    const other = await openPostgres(serverUrl!, { max: 1 });
    try {
      let billing!: Promise<unknown>;
      // An uninstall in progress (it locks the installation first, as src/oauth does), holding its
      // lock while the billing job, which read the installation as active, tries to claim a charge.
      await other.transaction(async (tx) => {
        await tx.query('SELECT id FROM installations WHERE id = $1 FOR UPDATE', [installationId]);
        billing = runBillingCharges(h.deps, { developerIds: [dev.userId] });
        const deadline = Date.now() + 20_000;
        for (;;) {
          // Activity is snapshotted once per transaction unless cleared; pg_blocking_pids names who waits for this one.
          await tx.query('SELECT pg_stat_clear_snapshot()');
          const { rows } = await tx.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid)) AND query LIKE '%INSERT INTO app_transactions%'`);
          if (rows[0].n > 0) break;
          if (Date.now() > deadline) throw new Error('the billing job never waited for the installation');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await tx.query(`UPDATE installations SET status = 'uninstalled', uninstalled_at = $2, updated_at = $2 WHERE id = $1`, [installationId, h.clock.now()]);
      });
      await billing;
    } finally {
      await other.close();
    }
    expect(await transactionsOf(h, installationId)).toEqual([]);
  });
});
