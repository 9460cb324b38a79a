// Review of billing, the developer ledger, payouts and payment-processor events (C10, C13): money
// figures past 2^53 cents, the commission of a currency without cents, signed Stripe bodies that
// are not events, and operator payout moves raced by parallel requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { developer, insertDeveloperWithInstallation, install, merchant, operator, paidApp, tokenFor, transactionsOf } from './helpers/billing.js';
import { parseDecimal } from '../src/billing/money-math.js';
import { openCharge, runBillingCharges, settleCharge } from '../src/billing/charges.js';
import { putPayoutMethod } from '../src/billing/developer-accounts.js';
import { dispatchPayouts, runPayoutSweep } from '../src/payouts/payouts.js';
import { event, signStripe } from './fixtures/webhook-stripe-events.js';

const STRIPE_SECRET = 'whsec_billing_review_0123456789';
let h: Harness;
let ops: () => Promise<string>;
beforeAll(async () => {
  h = await createHarness({ SVC_STRIPE_WEBHOOK_SECRET: STRIPE_SECRET, SVC_FX_RATES: '{"JPY":0.0067}' });
  ops = await operator(h);
});
afterAll(() => h?.close());

type Dev = Awaited<ReturnType<typeof insertDeveloperWithInstallation>>;
let periodSeq = 0;

/** A paid USD charge of `amountMinor` at commission `rate`, posted as the billing job posts it. */
async function paidCharge(dev: Dev, amountMinor: number, rate = '0') {
  const start = new Date(Date.UTC(2001, 0, 1) + ++periodSeq * 1000);
  const txn = await openCharge(h.db, {
    installationId: dev.installationId, appId: dev.appId, storeId: dev.storeId, developerId: dev.developerId,
    amountMinor, currency: 'USD', commissionRate: parseDecimal(rate), fxRate: parseDecimal('1'),
    periodStart: start, periodEnd: new Date(start.getTime() + 30 * 86_400_000),
  }, h.clock.now());
  await settleCharge(h.deps, txn!, { ok: true, reference: `ref-${txn!.id}` });
  return txn!;
}

/** Exact text of `minor` cents. */
const text = (minor: bigint) => `${minor / 100n}.${String(minor % 100n).padStart(2, '0')}`;

describe('ledger figures past 2^53 cents', () => {
  // app-input.ts bounds a price at 10^15 cents: eleven charges at that price pass 2^53 (9.007e15).
  const PRICE = 999_999_999_999_999; // odd: a sum that lost precision would end on another digit

  it('earnings and analytics are exact; a sweep pays what a payout can hold exactly, and the rest next (C10.3, C10.5)', async () => {
    const dev = await insertDeveloperWithInstallation(h);
    for (let i = 0; i < 11; i++) await paidCharge(dev, PRICE);
    const token = await tokenFor(h, dev.developerId, 'PARTNER');
    const earnings = async () => (await h.req('GET', '/apps/developer/earnings', { token })).json().data;
    const total = 11n * BigInt(PRICE); // odd and past 2^53: no double holds it
    expect(await earnings()).toMatchObject({ totalEarned: text(total), balance: text(total), inFlight: '0.00', totalPaidOut: '0.00' });
    const analytics = await h.req('GET', '/apps/developer/analytics', { token });
    expect(analytics.json().data.totalRevenue).toBe(Number(text(total)));

    // The sweep: nine charges fit below 2^53 cents, the tenth would not; it stays in the balance.
    await putPayoutMethod(h.deps, dev.developerId, { type: 'paypal', email: 'big@example.com' });
    const first = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] });
    expect(first.payouts.map((p) => p.amount_cents)).toEqual([9 * PRICE]);
    expect(await earnings()).toMatchObject({ totalEarned: text(total), balance: text(2n * BigInt(PRICE)), inFlight: text(9n * BigInt(PRICE)) });
    const detail = (await h.req('GET', `/apps/developer/payouts/${first.payouts[0].id}`, { token })).json().data;
    expect(detail.payout.amount).toBe(text(9n * BigInt(PRICE)));
    expect(detail.transactions).toHaveLength(9);

    const second = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] });
    expect(second.payouts.map((p) => p.amount_cents)).toEqual([2 * PRICE]);
    expect(await earnings()).toMatchObject({ totalEarned: text(total), balance: '0.00', inFlight: text(total) });
  });
});

describe('C13.1 a signed body that is not an event object', () => {
  const postSigned = (body: unknown) => {
    const payload = JSON.stringify(body);
    return h.req('POST', '/payments/stripe/webhook', { payload, headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(payload, STRIPE_SECRET) } });
  };

  it('400 (not a 500) without a string id or type; nothing recorded; a proper event still goes through', async () => {
    const base = event('customer.subscription.updated', { id: `sub_bad_${Date.now()}`, metadata: {} });
    const bad = [
      { ...base, id: undefined }, { ...base, id: null }, { ...base, id: '' }, { ...base, id: { evt: 1 } }, { ...base, id: 12 },
      { ...base, type: undefined }, { ...base, type: null }, { ...base, type: 5 },
    ];
    for (const body of bad) {
      const res = await postSigned(body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, state: 'error', data: null });
    }
    const { rows } = await h.db.query(`SELECT 1 FROM stripe_events WHERE subscription_id = $1`, [base.data.object.id]);
    expect(rows).toEqual([]);
    const ok = await postSigned(base);
    expect(ok.statusCode).toBe(200);
    // Naming no store and before any create of its subscription: held for the create (stripe-order.test.ts).
    expect(ok.json().data).toMatchObject({ received: true, duplicate: false, topic: null, ignored: 'awaiting_create' });
  });
});

describe('payout moves raced by parallel operator requests (C10.7)', () => {
  it('mark-paid and fail sent together on one in_transit payout: exactly one wins, the money moves once', async () => {
    const dev = await insertDeveloperWithInstallation(h);
    await paidCharge(dev, 50_00, '0.2');
    await putPayoutMethod(h.deps, dev.developerId, { type: 'paypal', email: 'race@example.com' });
    const { payouts } = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] });
    await dispatchPayouts(h.deps, { developerIds: [dev.developerId] });
    const id = payouts[0].id;
    const token = await ops();
    const calls = [
      ...Array.from({ length: 3 }, () => h.req('POST', `/apps/admin/payouts/${id}/mark-paid`, { token })),
      ...Array.from({ length: 3 }, () => h.req('POST', `/apps/admin/payouts/${id}/fail`, { token, body: { reason: 'bank bounced it' } })),
    ];
    const results = await Promise.all(calls);
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 200), codes.join()).toHaveLength(1);
    expect(codes.filter((c) => c === 409), codes.join()).toHaveLength(5);
    const winner = results.find((r) => r.statusCode === 200)!.json().data.payout.status;
    const earnings = (await h.req('GET', '/apps/developer/earnings', { token: await tokenFor(h, dev.developerId, 'PARTNER') })).json().data;
    expect(earnings).toMatchObject(winner === 'paid'
      ? { totalEarned: '40.00', totalPaidOut: '40.00', balance: '0.00', inFlight: '0.00' }
      : { totalEarned: '40.00', totalPaidOut: '0.00', balance: '40.00', inFlight: '0.00' });
    const entries = await h.db.query<{ kind: string }>('SELECT kind FROM journal_entries WHERE payout_id = $1 ORDER BY kind', [id]);
    expect(entries.rows.map((e) => e.kind)).toEqual(winner === 'paid' ? ['payout_created', 'payout_paid'] : ['payout_created', 'payout_failed']);
  });
});
