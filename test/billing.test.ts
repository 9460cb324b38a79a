// App billing (C10.1, C10.2, C14.12): commission arithmetic, the billing-charges job, trials,
// failed charges, FX roll-up, pending_uninstall.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHarness, type Harness } from './helpers/harness.js';
import { advanceTo, days, developer, type Developer, install, installation, merchant, operator, paidApp, transactionsOf } from './helpers/billing.js';
import { decimalText, divHalfEven, parseDecimal, splitCommission, toUsd } from '../src/billing/money-math.js';
import { addMonths, periodContaining } from '../src/billing/schedule.js';
import { sandbox, setBillingProviders } from '../src/billing/providers.js';
import { CHARGE_LEASE_MS, runBillingCharges } from '../src/billing/charges.js';

let h: Harness;
let ops: () => Promise<string>;
beforeAll(async () => {
  h = await createHarness({ SVC_FX_RATES: '{"EUR":1.08,"INR":0.012,"JPY":0.0067,"KWD":3.25}' });
  ops = await operator(h);
});
afterAll(() => h?.close());

// Scoped to the test's own developers: on PostgreSQL other test files share the database, each
// with its own clock, and a run over everyone would charge their installations at our time.
const billing = (...devs: Developer[]) => runBillingCharges(h.deps, { developerIds: devs.map((d) => d.userId) });

describe('commission split (C10.2): integer cents, half-even', () => {
  it('rounds half-cent ties to the even cent', () => {
    const cases: [number, string, number][] = [
      [225, '0.1', 22], // 22.5 -> 22
      [235, '0.1', 24], // 23.5 -> 24
      [101, '0.5', 50], // 50.5 -> 50
      [103, '0.5', 52], // 51.5 -> 52
      [1, '0.5', 0], // 0.5 -> 0
      [3, '0.5', 2], // 1.5 -> 2
      [3124, '0.2', 625], // 624.8 -> 625 (no tie)
      [3125, '0.2', 625],
      [1005, '0.3', 302], // 301.5 -> 302
      [1015, '0.3', 304], // 304.5 -> 304
    ];
    for (const [amount, rate, commission] of cases) {
      const split = splitCommission(amount, parseDecimal(rate));
      expect(split, `${amount} x ${rate}`).toEqual({ commission, developerAmount: amount - commission });
    }
  });

  it('commission + developerAmount = amount, within half a cent of the exact product, ties to even (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000_00 }), fc.integer({ min: 0, max: 6 }), fc.bigInt({ min: 0n, max: 1_000_000n }), (amount, scale, raw) => {
        const d = 10n ** BigInt(scale);
        const units = raw % (d + 1n); // rate in [0, 1]
        const rate = { units, scale };
        const { commission, developerAmount } = splitCommission(amount, rate);
        expect(commission + developerAmount).toBe(amount);
        expect(Number.isInteger(commission) && commission >= 0 && developerAmount >= 0).toBe(true);
        // |commission - amount x rate| <= 1/2, and exactly 1/2 only with an even commission
        const diff2 = (BigInt(commission) * d - BigInt(amount) * units) * 2n;
        const abs = diff2 < 0n ? -diff2 : diff2;
        expect(abs <= d).toBe(true);
        if (abs === d) expect(commission % 2).toBe(0);
      }),
      { numRuns: 3000 },
    );
  });

  it('reads rates as exact decimals, never as binary floats', () => {
    expect(parseDecimal(0.2)).toEqual({ units: 2n, scale: 1 });
    expect(parseDecimal(1.08)).toEqual({ units: 108n, scale: 2 });
    expect(parseDecimal(1e-7)).toEqual({ units: 1n, scale: 7 });
    expect(parseDecimal('0.01200')).toEqual({ units: 12n, scale: 3 });
    expect(decimalText(parseDecimal('0.25000'))).toBe('0.25');
    expect(decimalText(parseDecimal(83.2))).toBe('83.2');
    expect(() => parseDecimal(-1)).toThrow(RangeError);
    expect(() => splitCommission(100, parseDecimal('1.5'))).toThrow(RangeError);
    // 0.1 + 0.2 style drift cannot happen: 1.15 x 100 cents is exactly 115
    expect(splitCommission(100, parseDecimal(1.15 - 0.15)).commission).toBe(100);
  });

  it('USD roll-up: the converted commission is the difference, so the ledger entry balances (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000_00 }), fc.integer({ min: 0, max: 100 }), fc.integer({ min: 1, max: 200_000 }), (amount, pct, rateUnits) => {
        const split = splitCommission(amount, { units: BigInt(pct), scale: 2 });
        const usd = toUsd(amount, split.developerAmount, { units: BigInt(rateUnits), scale: 4 });
        expect(usd.usdCommission + usd.usdDeveloperAmount).toBe(usd.usdAmount);
        expect(usd.usdCommission).toBeGreaterThanOrEqual(0);
        expect(usd.usdDeveloperAmount).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 1000 },
    );
    expect(divHalfEven(5n, 2n)).toBe(2n);
    expect(divHalfEven(7n, 2n)).toBe(4n);
  });
});

describe('billing periods', () => {
  it('count calendar months from the anchor without drifting', () => {
    const anchor = new Date('2024-01-31T10:00:00Z');
    expect(addMonths(anchor, 1).toISOString()).toBe('2024-02-29T10:00:00.000Z');
    expect(addMonths(anchor, 2).toISOString()).toBe('2024-03-31T10:00:00.000Z');
    expect(periodContaining(anchor, 'month', new Date('2024-03-01T00:00:00Z'))).toEqual({ start: new Date('2024-02-29T10:00:00Z'), end: new Date('2024-03-31T10:00:00Z') });
    expect(periodContaining(anchor, 'year', new Date('2025-01-31T09:59:59Z'))!.start.toISOString()).toBe('2024-01-31T10:00:00.000Z');
    expect(periodContaining(anchor, 'month', new Date('2024-01-30T00:00:00Z'))).toBeNull();
  });

  it('every instant falls in exactly the period that contains it (property)', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('2000-01-01'), max: new Date('2090-01-01'), noInvalidDate: true }), fc.integer({ min: 0, max: 4000 * 86_400_000 }), fc.constantFrom('month' as const, 'year' as const), (anchor, offset, interval) => {
        const now = new Date(anchor.getTime() + offset);
        const p = periodContaining(anchor, interval, now)!;
        expect(p.start.getTime()).toBeLessThanOrEqual(now.getTime());
        expect(p.end.getTime()).toBeGreaterThan(now.getTime());
      }),
      { numRuns: 500 },
    );
  });
});

describe('billing-charges job (C10.1, C10.2)', () => {
  // Found in review: the platform keeps hundredths, and the provider was sent them as they are: for
  // yen a hundred times the price (a processor such as Stripe reads JPY amounts in yen).
  it("asks the payment provider for the price in the currency's own minor units (JPY yen, KWD fils, USD cents)", async () => {
    const dev = await developer(h);
    for (const [currency, amount, expected] of [['JPY', '3333', 3333], ['KWD', '10.50', 10_500], ['USD', '9.99', 999]] as const) {
      const app = await paidApp(h, dev, { amount, currency, trialDays: 0 });
      const { installationId } = await install(h, await merchant(h), app);
      await billing(dev);
      const [txn] = await transactionsOf(h, installationId);
      expect(txn, currency).toMatchObject({ currency, status: 'paid' });
      expect(sandbox.payments.calls.filter((c) => c.idempotencyKey === txn.id).map((c) => [c.currency, c.amountIsoMinor]), currency).toEqual([[currency, expected]]);
    }
  });

  it('charges nothing during the trial, then once per period; a second run charges nothing more', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '10.00', trialDays: 14 });
    const m = await merchant(h);
    const { installationId } = await install(h, m, app);
    const before = await installation(h, installationId);
    expect(before.billing_status).toBe('trialing');
    expect(before.trial_ends_at.getTime()).toBe(before.billing_start_date.getTime());

    await billing(dev);
    expect(await transactionsOf(h, installationId)).toEqual([]);

    advanceTo(h, new Date(before.trial_ends_at.getTime() + 3600_000));
    await billing(dev);
    await billing(dev);
    const txns = await transactionsOf(h, installationId);
    expect(txns).toHaveLength(1);
    expect(txns[0]).toMatchObject({
      status: 'paid', amount_cents: 1000, currency: 'USD', commission_cents: 200, developer_amount_cents: 800,
      usd_amount_cents: 1000, usd_developer_amount_cents: 800, fx_rate: '1', commission_rate: '0.2', developer_id: dev.userId,
    });
    expect(txns[0].period_start.getTime()).toBe(before.billing_start_date.getTime());
    expect(txns[0].period_end.getTime()).toBe(addMonths(before.billing_start_date, 1).getTime());
    expect((await installation(h, installationId)).billing_status).toBe('active');
    expect(sandbox.payments.calls.filter((c) => c.idempotencyKey === txns[0].id)).toHaveLength(1);

    const entries = await h.db.query(`SELECT l.account, l.debit_cents, l.credit_cents FROM journal_entries e JOIN journal_lines l ON l.entry_id = e.id
      WHERE e.transaction_id = $1 ORDER BY l.account`, [txns[0].id]);
    expect(entries.rows).toEqual([
      { account: 'developer:available', debit_cents: 0, credit_cents: 800 },
      { account: 'platform:cash', debit_cents: 1000, credit_cents: 0 },
      { account: 'platform:commission', debit_cents: 0, credit_cents: 200 },
    ]);

    advanceTo(h, new Date(txns[0].period_end.getTime() + 60_000));
    await billing(dev);
    expect(await transactionsOf(h, installationId)).toHaveLength(2);
  });

  it('a declined charge leaves the transaction failed and the installation past_due, once per period', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '5.00' });
    const m = await merchant(h, { email: `fail-card-${Date.now()}@example.com` });
    const { installationId } = await install(h, m, app);
    expect((await installation(h, installationId)).billing_status).toBe('active');
    await billing(dev);
    await billing(dev);
    const txns = await transactionsOf(h, installationId);
    expect(txns).toHaveLength(1);
    expect(txns[0].status).toBe('failed');
    expect(txns[0].failure_reason).toMatch(/declin/);
    expect((await installation(h, installationId)).billing_status).toBe('past_due');
    const posted = await h.db.query('SELECT 1 FROM journal_entries WHERE transaction_id = $1', [txns[0].id]);
    expect(posted.rows).toEqual([]);
  });

  it('rolls non-USD charges up to USD with the rate stored on the transaction (C10.3)', async () => {
    const dev = await developer(h);
    const eur = await paidApp(h, dev, { amount: '9.99', currency: 'EUR' });
    const gbp = await paidApp(h, dev, { amount: '9.99', currency: 'GBP' });
    const m = await merchant(h);
    const a = await install(h, m, eur);
    const b = await install(h, m, gbp);
    await billing(dev);
    const [txn] = await transactionsOf(h, a.installationId);
    // 9.99 EUR: commission 1.998 -> 2.00, developer 7.99; USD 1078.92 -> 1079 and 862.92 -> 863
    expect(txn).toMatchObject({ amount_cents: 999, currency: 'EUR', commission_cents: 200, developer_amount_cents: 799, fx_rate: '1.08', usd_amount_cents: 1079, usd_developer_amount_cents: 863 });
    // No SVC_FX_RATES entry for GBP: not charged (nothing could be rolled up) until one is configured.
    expect(await transactionsOf(h, b.installationId)).toEqual([]);
    const earnings = (await h.req('GET', '/apps/developer/earnings', { token: await dev.token() })).json().data;
    expect(earnings).toMatchObject({ totalEarned: '8.63', balance: '8.63', currency: 'USD' });
  });

  it('a provider outage leaves the charge pending; a later run retries it after the lease, same idempotency key, charged once', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '12.00' });
    const { installationId } = await install(h, await merchant(h), app);
    setBillingProviders(h.deps, { payments: { charge: async () => { throw new Error('provider down'); } } });
    try {
      await billing(dev);
    } finally {
      setBillingProviders(h.deps, { payments: sandbox.payments });
    }
    const [pending] = await transactionsOf(h, installationId);
    expect(pending.status).toBe('pending');
    await billing(dev); // within the lease: neither re-claimed nor charged again
    expect(sandbox.payments.calls.filter((c) => c.idempotencyKey === pending.id)).toHaveLength(0);
    h.clock.advance(CHARGE_LEASE_MS / 1000 + 60);
    await billing(dev);
    await billing(dev);
    const txns = await transactionsOf(h, installationId);
    expect(txns).toHaveLength(1);
    expect(txns[0]).toMatchObject({ id: pending.id, status: 'paid' });
    expect(sandbox.payments.calls.filter((c) => c.idempotencyKey === pending.id)).toHaveLength(1);
  });

  it('uses the developer’s own commission rate when the operator set one', async () => {
    const dev = await developer(h);
    const res = await h.req('PATCH', `/apps/admin/developers/${dev.userId}`, { token: await ops(), body: { commissionRate: 0.1 } });
    expect(res.statusCode).toBe(200);
    const app = await paidApp(h, dev, { amount: '2.25' });
    const { installationId } = await install(h, await merchant(h), app);
    await billing(dev);
    expect((await transactionsOf(h, installationId))[0]).toMatchObject({ commission_cents: 22, developer_amount_cents: 203, commission_rate: '0.1' });
  });
});

describe('uninstall (C4.7, C10.1, C14.12)', () => {
  it('during a paid period: pending_uninstall until it ends, then uninstalled; no further charge', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '20.00' });
    const m = await merchant(h);
    const { installationId, accessToken } = await install(h, m, app);
    await billing(dev);
    const [txn] = await transactionsOf(h, installationId);
    expect(txn.status).toBe('paid');

    const res = await h.req('DELETE', `/apps/installations/${installationId}`, { token: await m.fresh() });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ installationId, status: 'pending_uninstall' });
    expect((await h.req('GET', '/api/v1/products.json', { token: accessToken })).statusCode).toBe(401);

    advanceTo(h, new Date(txn.period_end.getTime() - 3600_000));
    await billing(dev);
    expect((await installation(h, installationId)).status).toBe('pending_uninstall');

    advanceTo(h, new Date(txn.period_end.getTime() + 60_000));
    await billing(dev);
    expect((await installation(h, installationId)).status).toBe('uninstalled');
    expect(await transactionsOf(h, installationId)).toHaveLength(1);
  });

  // Found in review: the job runs once a UTC day, so an app installed after one run and removed
  // before the next was never charged, and a reinstall (no second trial) made it free day after day.
  it('before the daily run charged the period it was used in: that period is charged at uninstall, once', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '49.00' });
    const m = await merchant(h);
    const { installationId } = await install(h, m, app);
    h.clock.advance(23 * 3600);
    const res = await h.req('DELETE', `/apps/installations/${installationId}`, { token: await m.fresh() });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ installationId, status: 'pending_uninstall' });
    const [txn, ...more] = await transactionsOf(h, installationId);
    expect(more).toEqual([]);
    const installedAt = (await installation(h, installationId)).billing_start_date as Date;
    expect(txn).toMatchObject({ status: 'paid', amount_cents: 4900, period_start: installedAt, period_end: addMonths(installedAt, 1) });
    // The job then charges nothing more, and ends the uninstall with the period.
    h.clock.advance(3600);
    await billing(dev);
    expect(await transactionsOf(h, installationId)).toHaveLength(1);
    advanceTo(h, new Date(txn.period_end.getTime() + 60_000));
    await billing(dev);
    expect((await installation(h, installationId)).status).toBe('uninstalled');
    expect(await transactionsOf(h, installationId)).toHaveLength(1);
  });

  it('after the trial ended, before the run: the first paid period is charged; during the trial: nothing', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '20.00', trialDays: 7 });
    const m = await merchant(h);
    const late = await install(h, m, app);
    h.clock.advance(days(7) + 3600);
    const res = await h.req('DELETE', `/apps/installations/${late.installationId}`, { token: await m.fresh() });
    expect(res.json().data.status).toBe('pending_uninstall');
    expect(await transactionsOf(h, late.installationId)).toMatchObject([{ status: 'paid', amount_cents: 2000 }]);

    const m2 = await merchant(h);
    const early = await install(h, m2, app);
    h.clock.advance(days(6));
    expect((await h.req('DELETE', `/apps/installations/${early.installationId}`, { token: await m2.fresh() })).json().data.status).toBe('uninstalled');
    expect(await transactionsOf(h, early.installationId)).toEqual([]);
  });

  it('a declined charge at uninstall is failed once, and the uninstall ends at the next run', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '20.00' });
    const m = await merchant(h, { email: `fail-${Date.now()}@example.com` });
    const { installationId } = await install(h, m, app);
    h.clock.advance(3600);
    await h.req('DELETE', `/apps/installations/${installationId}`, { token: await m.fresh() });
    expect(await transactionsOf(h, installationId)).toMatchObject([{ status: 'failed' }]);
    h.clock.advance(60);
    await billing(dev);
    expect((await installation(h, installationId)).status).toBe('uninstalled');
    expect(await transactionsOf(h, installationId)).toHaveLength(1);
  });

  it('during a trial, or of a free app: uninstalled at once', async () => {
    const dev = await developer(h);
    const trial = await paidApp(h, dev, { amount: '20.00', trialDays: 7 });
    const m = await merchant(h);
    const a = await install(h, m, trial);
    const res = await h.req('DELETE', `/apps/installations/${a.installationId}`, { token: await m.fresh() });
    expect(res.json().data.status).toBe('uninstalled');

    const { createTestApp } = await import('./helpers/actors.js');
    const free = await createTestApp(h, await dev.token());
    const b = await install(h, m, free);
    expect((await installation(h, b.installationId)).billing_status).toBe('none');
    expect((await h.req('DELETE', `/apps/installations/${b.installationId}`, { token: await m.fresh() })).json().data.status).toBe('uninstalled');
  });

  it('a reinstall while the paid period still runs is not charged twice for that period', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '20.00' });
    const m = await merchant(h);
    const { installationId } = await install(h, m, app);
    await billing(dev);
    await h.req('DELETE', `/apps/installations/${installationId}`, { token: await m.fresh() });
    h.clock.advance(days(3));
    await install(h, m, app);
    expect((await installation(h, installationId)).status).toBe('active');
    await billing(dev);
    expect(await transactionsOf(h, installationId)).toHaveLength(1);
  });

  it('C10.1 the trial is granted once: a reinstall inside the first trial keeps its end, one after it bills from then, with no second trial', async () => {
    const dev = await developer(h);
    const app = await paidApp(h, dev, { amount: '9.99', trialDays: 14 });
    const m = await merchant(h);
    const { installationId } = await install(h, m, app);
    const first = await installation(h, installationId);
    expect(first.billing_status).toBe('trialing');
    const del = await h.req('DELETE', `/apps/installations/${installationId}`, { token: await m.fresh() });
    expect(del.json().data.status).toBe('uninstalled');
    h.clock.advance(days(2));
    await install(h, m, app);
    // Two days into its 14: the same trial goes on, and billing starts at its end (C10.1).
    const again = await installation(h, installationId);
    expect(again.status).toBe('active');
    expect(again.billing_status).toBe('trialing');
    expect(again.trial_ends_at.getTime()).toBe(first.trial_ends_at.getTime());
    expect(again.billing_start_date.getTime()).toBe(first.trial_ends_at.getTime());
    // Past its end: no second trial, billed from the reinstall.
    expect((await h.req('DELETE', `/apps/installations/${installationId}`, { token: await m.fresh() })).json().data.status).toBe('uninstalled');
    h.clock.advance(days(13));
    await install(h, m, app);
    const late = await installation(h, installationId);
    expect(late.billing_status).toBe('active');
    expect(late.trial_ends_at.getTime()).toBe(first.trial_ends_at.getTime());
    expect(late.billing_start_date.getTime()).toBeGreaterThan(first.trial_ends_at.getTime());
  });
});
