// Review of billing periods and payout windows: a declined period followed by a price of another
// interval (C10.2, "charges each due installation once per period (idempotent per installation and
// period)"), and a payout's earnings window when the sweep carries transactions charged after its
// scheduled instant (C10.5 "the paid transactions not yet in a payout"; app-api.md Payout
// `periodStart`, `periodEnd`). Both through the jobs on the test clock, on PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { advanceTo, developer, install, installation, merchant, paidApp, transactionsOf, type Developer } from './helpers/billing.js';
import { runBillingCharges } from '../src/billing/charges.js';
import { runPayoutSweep } from '../src/payouts/payouts.js';
import { setBillingProviders, type ChargeRequest } from '../src/billing/providers.js';
import { addMonths } from '../src/billing/schedule.js';

let h: Harness;
/** Stores whose card is declined for now; every provider call is kept, to count attempts. */
const declining = new Set<string>();
const calls: ChargeRequest[] = [];
beforeAll(async () => {
  h = await createHarness();
  setBillingProviders(h.deps, {
    payments: {
      async charge(r) {
        calls.push(r);
        return declining.has(r.storeId) ? { ok: false, reason: 'card_declined' } : { ok: true, reference: `ref_${r.idempotencyKey}` };
      },
    },
  });
});
afterAll(() => h?.close());

// Scoped to this file's developers: on PostgreSQL other files share the database, with their own clocks.
const billing = (dev: Developer) => runBillingCharges(h.deps, { developerIds: [dev.userId] });
const callsFor = (storeId: string) => calls.filter((c) => c.storeId === storeId).length;
/** The installation's charges by period (start, then end: two periods may now share a start). */
const periods = async (installationId: string) =>
  (await transactionsOf(h, installationId))
    .sort((a, b) => a.period_start - b.period_start || a.period_end - b.period_end)
    .map((t) => `${t.status} ${t.amount_cents} ${t.period_start.toISOString()}..${t.period_end.toISOString()}`);
const span = (status: string, cents: number, start: Date, end: Date) => `${status} ${cents} ${start.toISOString()}..${end.toISOString()}`;

async function reprice(dev: Developer, appId: string, amount: string, interval: 'month' | 'year') {
  const res = await h.req('PATCH', `/apps/developer/apps/${appId}`, { token: await dev.token(), body: { pricing: { type: 'recurring', amount, currency: 'USD', interval } } });
  expect(res.statusCode).toBe(200);
}

/** A developer's app at `amount` per `interval`, installed on a store whose card is declined, and the first (declined) charge. */
async function declinedFirstPeriod(amount: string, interval: 'month' | 'year') {
  const dev = await developer(h);
  const app = await paidApp(h, dev, { amount, interval });
  const m = await merchant(h);
  declining.add(m.storeId);
  const { installationId } = await install(h, m, app);
  await billing(dev);
  const [first] = await transactionsOf(h, installationId);
  expect(first).toMatchObject({ status: 'failed' });
  expect((await installation(h, installationId)).billing_status).toBe('past_due');
  // One attempt per installation and period: the same period is not tried again the same day.
  await billing(dev);
  expect(callsFor(m.storeId)).toBe(1);
  declining.delete(m.storeId); // the merchant fixes their card
  return { dev, app, storeId: m.storeId, installationId, start: first.period_start as Date, end: first.period_end as Date };
}

describe('C10.2 a period is its start and its end: a declined period does not block one of another length', () => {
  it('a declined month, then yearly pricing: the year is charged at the next run, once', async () => {
    const { dev, app, storeId, installationId, start, end } = await declinedFirstPeriod('10.00', 'month');
    await reprice(dev, app.appId, '100.00', 'year');

    advanceTo(h, new Date(start.getTime() + 86_400_000));
    await billing(dev);
    const year = span('paid', 10000, start, addMonths(start, 12));
    expect(await periods(installationId)).toEqual([span('failed', 1000, start, end), year]);
    expect((await installation(h, installationId)).billing_status).toBe('active');

    // The year is charged once: the same day, after the declined month's end and late in the year.
    for (const at of [new Date(start.getTime() + 86_400_000), new Date(end.getTime() + 60_000), addMonths(start, 6), addMonths(start, 11)]) {
      advanceTo(h, at);
      await billing(dev);
    }
    expect(await periods(installationId)).toEqual([span('failed', 1000, start, end), year]);
    expect(callsFor(storeId)).toBe(2);

    // And the next year after it.
    advanceTo(h, new Date(addMonths(start, 12).getTime() + 60_000));
    await billing(dev);
    expect(await periods(installationId)).toEqual([span('failed', 1000, start, end), year, span('paid', 10000, addMonths(start, 12), addMonths(start, 24))]);
  });

  it('a declined year, then monthly pricing: the first month is charged at the next run, then each month once', async () => {
    const { dev, app, storeId, installationId, start, end } = await declinedFirstPeriod('100.00', 'year');
    expect(end.toISOString()).toBe(addMonths(start, 12).toISOString());
    await reprice(dev, app.appId, '10.00', 'month');

    advanceTo(h, new Date(start.getTime() + 86_400_000));
    await billing(dev);
    await billing(dev);
    const month1 = span('paid', 1000, start, addMonths(start, 1));
    expect(await periods(installationId)).toEqual([month1, span('failed', 10000, start, end)]);
    expect((await installation(h, installationId)).billing_status).toBe('active');

    advanceTo(h, new Date(addMonths(start, 1).getTime() + 60_000));
    await billing(dev);
    await billing(dev);
    expect(await periods(installationId)).toEqual([month1, span('failed', 10000, start, end), span('paid', 1000, addMonths(start, 1), addMonths(start, 2))]);
    expect(callsFor(storeId)).toBe(3);
  });
});

describe("C10.5 a payout's earnings window holds every transaction it carries", () => {
  /** A developer with a payout method, on the 15th of next month at noon: installations' months stay clear of the 1st's instant. */
  async function developerWithMethod() {
    const now = h.clock.now();
    advanceTo(h, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 15, 12)));
    const dev = await developer(h);
    const res = await h.req('PUT', '/apps/developer/payout-method', { token: await dev.token(), body: { type: 'paypal', email: `window-${dev.userId}@example.com` } });
    expect(res.statusCode).toBe(200);
    return dev;
  }
  /** Past the developer's next scheduled sweep instant, before any sweep has run for it. */
  async function pastNextInstant(dev: Developer) {
    const earnings = (await h.req('GET', '/apps/developer/earnings', { token: await dev.token() })).json().data;
    expect(earnings.nextPayoutAt).toEqual(expect.any(String));
    advanceTo(h, new Date(Date.parse(earnings.nextPayoutAt) + 60 * 60_000));
    return new Date(earnings.nextPayoutAt);
  }
  async function charge(dev: Developer, app: Awaited<ReturnType<typeof paidApp>>) {
    const { installationId } = await install(h, await merchant(h), app);
    await billing(dev);
    const [txn] = await transactionsOf(h, installationId);
    expect(txn.status).toBe('paid');
    return txn;
  }
  /** The developer's one payout as the developer API shows it, its window checked against each transaction. */
  async function sweptWindow(dev: Developer) {
    const { payouts } = await runPayoutSweep(h.deps, { developerIds: [dev.userId] });
    expect(payouts).toHaveLength(1);
    const detail = (await h.req('GET', `/apps/developer/payouts/${payouts[0].id}`, { token: await dev.token() })).json().data;
    const { periodStart, periodEnd } = detail.payout;
    for (const t of detail.transactions) {
      expect(Date.parse(periodStart)).toBeLessThanOrEqual(Date.parse(t.createdAt));
      expect(Date.parse(t.createdAt)).toBeLessThanOrEqual(Date.parse(periodEnd));
    }
    return { periodStart, periodEnd, createdAt: detail.transactions.map((t: { createdAt: string }) => t.createdAt) };
  }

  it('a charge made after the scheduled instant, swept by that instant: the window ends at the charge, not before its start', async () => {
    const dev = await developerWithMethod();
    const app = await paidApp(h, dev, { amount: '50.00' });
    const instant = await pastNextInstant(dev);
    const txn = await charge(dev, app);
    expect(txn.created_at.getTime()).toBeGreaterThan(instant.getTime());
    const window = await sweptWindow(dev);
    expect(window).toEqual({ periodStart: txn.created_at.toISOString(), periodEnd: txn.created_at.toISOString(), createdAt: [txn.created_at.toISOString()] });
  });

  it('charges before and after the instant: the window runs from the first to the last', async () => {
    const dev = await developerWithMethod();
    const app = await paidApp(h, dev, { amount: '50.00' });
    const before = await charge(dev, app);
    await pastNextInstant(dev);
    const after = await charge(dev, app);
    const window = await sweptWindow(dev);
    expect(window.periodStart).toBe(before.created_at.toISOString());
    expect(window.periodEnd).toBe(after.created_at.toISOString());
    expect(window.createdAt).toHaveLength(2);
  });

  it('every transaction before the instant: the window still ends at the instant', async () => {
    const dev = await developerWithMethod();
    const app = await paidApp(h, dev, { amount: '50.00' });
    const txn = await charge(dev, app);
    const instant = await pastNextInstant(dev);
    expect(await sweptWindow(dev)).toEqual({ periodStart: txn.created_at.toISOString(), periodEnd: instant.toISOString(), createdAt: [txn.created_at.toISOString()] });
  });
});
