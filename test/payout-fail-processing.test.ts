// C10.5-C10.7: failing a `processing` payout whose dispatcher went silent. Before the platform
// returns the amount to the balance it settles, with the payout provider, what became of the
// payout's idempotency key: cancelled (nothing sent, and nothing will be), rejected, or sent. A
// dispatcher whose provider call succeeded but which died before recording in_transit left the
// payout processing; failing it after the lease returned the amount, and the next sweep paid the
// same transactions again under a new payout id: the money went out twice.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { insertDeveloperWithInstallation, operator, tokenFor, workerCopies } from './helpers/billing.js';
import { openCharge, settleCharge } from '../src/billing/charges.js';
import { parseDecimal } from '../src/billing/money-math.js';
import { putPayoutMethod } from '../src/billing/developer-accounts.js';
import { sandbox, setBillingProviders, type PayoutDestination, type PayoutProvider } from '../src/billing/providers.js';
import { claimPayouts, DISPATCH_LEASE_MS, dispatchPayouts, failPayout, runPayoutSweep, type PayoutRow } from '../src/payouts/payouts.js';

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

/** A paid USD charge of `amountMinor` (20 % commission), posted as the billing job posts it. */
async function paidCharge(dev: Dev, amountMinor: number) {
  const start = new Date(Date.UTC(2003, 0, 1) + ++periodSeq * 1000);
  const txn = await openCharge(h.db, {
    installationId: dev.installationId, appId: dev.appId, storeId: dev.storeId, developerId: dev.developerId,
    amountMinor, currency: 'USD', commissionRate: parseDecimal('0.2'), fxRate: parseDecimal('1'),
    periodStart: start, periodEnd: new Date(start.getTime() + 30 * 86_400_000),
  }, h.clock.now());
  await settleCharge(h.deps, txn!, { ok: true, reference: `ref-${txn!.id}` });
}

/** A developer with 40.00 earned, a PayPal method, and one pending payout of it. */
async function pendingPayout(email = 'dev@example.com'): Promise<{ dev: Dev; payout: PayoutRow }> {
  const dev = await insertDeveloperWithInstallation(h);
  await paidCharge(dev, 50_00);
  await putPayoutMethod(h.deps, dev.developerId, { type: 'paypal', email });
  const { payouts: [payout] } = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] });
  return { dev, payout };
}

/** A dispatcher claims the payout and dies; with `send`, after its provider call went through. */
async function dispatcherDies(payout: PayoutRow, send: PayoutDestination | null) {
  const [claimed] = await claimPayouts(h.deps, 1, [payout.developer_id]);
  expect(claimed.id).toBe(payout.id);
  if (send) await sandbox.payouts.submit({ idempotencyKey: payout.id, developerId: payout.developer_id, amountMinor: payout.amount_cents, currency: 'USD', destination: send });
  h.clock.advance(DISPATCH_LEASE_MS / 1000 + 1);
}

const earningsOf = async (developerId: string) =>
  (await h.req('GET', '/apps/developer/earnings', { token: await tokenFor(h, developerId, 'PARTNER') })).json().data;
const rowOf = async (payoutId: string) => (await h.db.query<PayoutRow>('SELECT * FROM payouts WHERE id = $1', [payoutId])).rows[0];
const movesOf = async (payoutId: string) =>
  (await h.db.query<{ m: string }>(`SELECT coalesce(from_status, 'null') || '>' || to_status AS m FROM payout_status_changes WHERE payout_id = $1`, [payoutId])).rows.map((r) => r.m).sort();
const fail = async (payoutId: string, body: Record<string, unknown> = { reason: 'stuck at the provider' }) =>
  h.req('POST', `/apps/admin/payouts/${payoutId}/fail`, { token: await ops(), body });
/** Every amount the provider was asked to send for this developer, under any payout id. */
const sentFor = (developerId: string) => sandbox.payouts.calls.filter((c) => c.developerId === developerId).map((c) => `${c.idempotencyKey}:${c.amountMinor}`);

function useProvider(provider: PayoutProvider) {
  setBillingProviders(h.deps, { payouts: provider });
}
afterAll(() => h && setBillingProviders(h.deps, { payouts: sandbox.payouts }));

describe('C10.7 failing a processing payout after its dispatcher went silent', () => {
  it('the provider had sent it: 409 saying so, the payout is in_transit with its reference, and nothing is paid twice', async () => {
    const { dev, payout } = await pendingPayout('sent@example.com');
    await dispatcherDies(payout, { type: 'paypal', email: 'sent@example.com' });

    const res = await fail(payout.id);
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ status: 409, state: 'error', message: expect.stringMatching(/provider has sent.*in_transit/) });
    expect(await rowOf(payout.id)).toMatchObject({ status: 'in_transit', external_reference: `sandbox_pp_${payout.id}`, failure_reason: null });
    expect(await movesOf(payout.id)).toEqual(['null>pending', 'pending>processing', 'processing>in_transit']);
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '0.00', inFlight: '40.00' });

    // The next sweep and dispatch find nothing to pay: one send of 40.00 in all.
    expect((await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] })).created).toBe(0);
    await dispatchPayouts(h.deps, { developerIds: [dev.developerId] });
    expect(sentFor(dev.developerId)).toEqual([`${payout.id}:4000`]);

    // A fail decided on the processing payout the operator saw is refused the same way.
    const stale = await fail(payout.id, { reason: 'x', expectedStatus: 'processing' });
    expect(stale.statusCode).toBe(409);
    // From in_transit the operator's fail means "the money came back", as before.
    const back = await fail(payout.id, { reason: 'returned by PayPal', expectedStatus: 'in_transit' });
    expect(back.statusCode, back.body).toBe(200);
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '40.00', inFlight: '0.00' });
  });

  it('the provider never got it: cancelled under its key, failed, the amount back; a late send under that key is refused', async () => {
    const { dev, payout } = await pendingPayout('never@example.com');
    await dispatcherDies(payout, null);

    const res = await fail(payout.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.payout).toMatchObject({ status: 'failed', failureReason: 'stuck at the provider', externalReference: null });
    expect(sandbox.payouts.cancels).toContain(payout.id);
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '40.00', inFlight: '0.00' });

    // The dead dispatcher's call, arriving late (or a retry under the same key), sends nothing.
    const late = await sandbox.payouts.submit({ idempotencyKey: payout.id, developerId: dev.developerId, amountMinor: 40_00, currency: 'USD', destination: { type: 'paypal', email: 'never@example.com' } });
    expect(late).toMatchObject({ ok: false, reason: expect.stringMatching(/cancelled/) });
    // Cancelling again answers the same (idempotent per key).
    expect(await sandbox.payouts.cancel({ idempotencyKey: payout.id })).toEqual({ state: 'cancelled' });

    // The amount is paid once, by a new payout.
    const { payouts: [next] } = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] });
    expect(await dispatchPayouts(h.deps, { developerIds: [dev.developerId] })).toEqual({ dispatched: 1, failed: 0 });
    expect(await rowOf(next.id)).toMatchObject({ status: 'in_transit', amount_cents: 40_00 });
  });

  it('the provider had rejected it (the dispatcher died before recording the failure): failed, the amount back', async () => {
    const { dev, payout } = await pendingPayout('fail-rejected@example.com');
    await dispatcherDies(payout, { type: 'paypal', email: 'fail-rejected@example.com' });
    const res = await fail(payout.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.payout.status).toBe('failed');
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '40.00', inFlight: '0.00' });
  });

  it('the provider cannot be reached: 503, nothing changes; without a way to settle the key: 409, nothing changes', async () => {
    const { dev, payout } = await pendingPayout('down@example.com');
    await dispatcherDies(payout, null);
    const before = await rowOf(payout.id);
    try {
      useProvider({ submit: (r) => sandbox.payouts.submit(r), cancel: async () => { throw new Error('connect ECONNREFUSED'); } });
      const down = await fail(payout.id);
      expect(down.statusCode, down.body).toBe(503);
      expect(down.json().message).toMatch(/payout provider could not be reached.*nothing changed/i);

      useProvider({ submit: (r) => sandbox.payouts.submit(r) });
      const unsupported = await fail(payout.id);
      expect(unsupported.statusCode, unsupported.body).toBe(409);
      expect(unsupported.json().message).toMatch(/cannot confirm/);
    } finally {
      useProvider(sandbox.payouts);
    }
    expect(await rowOf(payout.id)).toEqual(before);
    expect(await movesOf(payout.id)).toEqual(['null>pending', 'pending>processing']);
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '0.00', inFlight: '40.00' });
    expect(sandbox.payouts.cancels).not.toContain(payout.id);
  });

  it('a dispatcher claiming the payout while it is being cancelled cannot send it: the fail stands', async () => {
    const { dev, payout } = await pendingPayout('reclaimed@example.com');
    await dispatcherDies(payout, null);
    try {
      useProvider({
        submit: (r) => sandbox.payouts.submit(r),
        async cancel(r) {
          // Another dispatcher takes the lapsed claim meanwhile (and will call the provider).
          expect((await claimPayouts(h.deps, 1, [dev.developerId])).map((p) => p.id)).toEqual([payout.id]);
          return sandbox.payouts.cancel(r);
        },
      });
      const res = await fail(payout.id);
      expect(res.statusCode, res.body).toBe(200);
    } finally {
      useProvider(sandbox.payouts);
    }
    expect(await rowOf(payout.id)).toMatchObject({ status: 'failed' });
    // That dispatcher's send under the cancelled key sends nothing.
    expect(await sandbox.payouts.submit({ idempotencyKey: payout.id, developerId: dev.developerId, amountMinor: 40_00, currency: 'USD', destination: { type: 'paypal', email: 'reclaimed@example.com' } }))
      .toMatchObject({ ok: false });
  });

  it('a dispatcher whose send under the cancelled key is refused fails the payout first: the fail still answers 200 with it, once, with the operator\'s reason', async () => {
    const { dev, payout } = await pendingPayout('raced@example.com');
    await dispatcherDies(payout, null);
    try {
      useProvider({
        submit: (r) => sandbox.payouts.submit(r),
        async cancel(r) {
          const settled = await sandbox.payouts.cancel(r);
          // The regular dispatcher run comes in between: its send under the cancelled key is refused,
          // and it records the payout failed before the operator's fail does.
          expect(await dispatchPayouts(h.deps, { developerIds: [dev.developerId] })).toEqual({ dispatched: 0, failed: 1 });
          return settled;
        },
      });
      const res = await fail(payout.id, { reason: 'operator: stuck at the provider' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.payout).toMatchObject({ status: 'failed', failureReason: 'operator: stuck at the provider' });
    } finally {
      useProvider(sandbox.payouts);
    }
    // The amount went back once, whoever failed it.
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '40.00', inFlight: '0.00' });
    expect(await movesOf(payout.id)).toEqual(['null>pending', 'pending>processing', 'processing>failed']);
  });

  it('within the lease the fail is still 409 (the dispatcher is calling), and the provider is not asked', async () => {
    const { payout } = await pendingPayout('live@example.com');
    await claimPayouts(h.deps, 1, [payout.developer_id]);
    const res = await fail(payout.id);
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toMatch(/being sent/);
    expect(sandbox.payouts.cancels).not.toContain(payout.id);
  });
});

describe('C10.6 the dispatcher retrying a payout whose method can no longer be read', () => {
  it('an earlier attempt had sent it: in_transit with the reference, not failed back to the balance', async () => {
    const dev = await insertDeveloperWithInstallation(h);
    await paidCharge(dev, 50_00);
    await putPayoutMethod(h.deps, dev.developerId, { type: 'bank', accountHolder: 'Dev', accountNumber: '000123456789', routingNumber: '110000000' });
    const { payouts: [payout] } = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] });
    await dispatcherDies(payout, { type: 'bank', accountHolder: 'Dev', accountNumber: '000123456789', routingNumber: '110000000' });
    // Sealed with a key the service no longer has by the time the next dispatcher reads it.
    await h.db.query(`UPDATE payouts SET payout_method = jsonb_set(payout_method, '{accountNumberEnc}', '"v1.AAAA.AAAA.AAAA"') WHERE id = $1`, [payout.id]);

    expect(await dispatchPayouts(h.deps, { developerIds: [dev.developerId] })).toEqual({ dispatched: 1, failed: 0 });
    expect(await rowOf(payout.id)).toMatchObject({ status: 'in_transit', external_reference: `sandbox_wire_${payout.id}` });
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '0.00', inFlight: '40.00' });
    expect((await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] })).created).toBe(0);
  });

  it('no earlier attempt had sent it: cancelled under its key and failed, the amount back', async () => {
    const dev = await insertDeveloperWithInstallation(h);
    await paidCharge(dev, 50_00);
    await putPayoutMethod(h.deps, dev.developerId, { type: 'bank', accountHolder: 'Dev', accountNumber: '000123456789', routingNumber: '110000000' });
    const { payouts: [payout] } = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.developerId] });
    await dispatcherDies(payout, null);
    await h.db.query(`UPDATE payouts SET payout_method = jsonb_set(payout_method, '{accountNumberEnc}', '"v1.AAAA.AAAA.AAAA"') WHERE id = $1`, [payout.id]);

    expect(await dispatchPayouts(h.deps, { developerIds: [dev.developerId] })).toEqual({ dispatched: 0, failed: 1 });
    expect(await rowOf(payout.id)).toMatchObject({ status: 'failed', failure_reason: expect.stringMatching(/payout method/) });
    expect(sandbox.payouts.cancels).toContain(payout.id);
    expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '40.00', inFlight: '0.00' });
  });
});

describe('C10.7 failing a pending payout while a dispatcher claims it', () => {
  // Real concurrency on PostgreSQL (separate pools); on PGlite the two run one after the other.
  const copies = serverUrl ? workerCopies(() => h, serverUrl) : [];

  it('either the fail lands first (never sent) or the dispatcher does (the fail is a 409): never both', async () => {
    const deps = () => (copies.length ? copies : [h.deps, h.deps]);
    for (let i = 0; i < 6; i++) {
      const { dev, payout } = await pendingPayout(`race${i}@example.com`);
      const [failing, dispatching] = await Promise.allSettled([
        failPayout(deps()[i % 2], payout.id, 'operator says no', 'pending'),
        // Started at once, or a moment after the fail, so both orders are met.
        new Promise((resolve) => setTimeout(resolve, (i % 3) * 2)).then(() => dispatchPayouts(deps()[(i + 1) % 2], { developerIds: [dev.developerId] })),
      ]);
      const row = await rowOf(payout.id);
      const sends = sentFor(dev.developerId);
      expect(dispatching.status).toBe('fulfilled');
      if (failing.status === 'fulfilled') {
        expect(row.status).toBe('failed');
        expect(sends).toEqual([]);
        expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '40.00', inFlight: '0.00' });
      } else {
        expect(failing.reason).toMatchObject({ status: 409 });
        expect(row.status).toBe('in_transit');
        expect(sends).toEqual([`${payout.id}:4000`]);
        expect(await earningsOf(dev.developerId)).toMatchObject({ balance: '0.00', inFlight: '40.00' });
      }
    }
  });
});
