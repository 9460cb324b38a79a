// The developer ledger (C10.3) under thousands of random operations: charges in several currencies
// and commission rates (some declined, some settled twice), forced and scheduled sweeps, dispatches
// to working and failing payout methods, dispatchers that die mid-payout, operator fail and
// mark-paid. After every run: every entry balances, balance = totalEarned - totalPaidOut - inFlight,
// nothing below zero, the figures recomputed from raw postings equal the reported ones and the
// payout table, and totalEarned equals an independent model of the charges.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHarness, type Harness } from './helpers/harness.js';
import { insertDeveloperWithInstallation } from './helpers/billing.js';
import { uuidv7 } from '../src/ids.js';
import type { Deps } from '../src/deps.js';
import type { Queryable } from '../src/db/db.js';
import { parseMoney } from '../src/money.js';
import { parseDecimal } from '../src/billing/money-math.js';
import { openCharge, settleCharge } from '../src/billing/charges.js';
import { putPayoutMethod } from '../src/billing/developer-accounts.js';
import { earnings } from '../src/payouts/payouts.views.js';
import { DISPATCH_LEASE_MS, beingDispatched, claimPayouts, dispatchPayouts, failPayout, markPayoutPaid, sweepDeveloper } from '../src/payouts/payouts.js';
import type { PayoutRow } from '../src/payouts/payouts.js';

const FX: Record<string, string> = { USD: '1', EUR: '1.08', INR: '0.012', JPY: '0.0067' };
const RATES = ['0', '0.15', '0.2', '0.3', '0.333', '1'];

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ SVC_FX_RATES: JSON.stringify({ EUR: 1.08, INR: 0.012, JPY: 0.0067 }) });
});
afterAll(() => h?.close());

describe('database guarantees of the ledger', () => {
  it('refuses a journal entry that does not balance, or has a single line', async () => {
    const dev = await insertDeveloperWithInstallation(h);
    const post = (lines: [string, number, number][]) =>
      h.db.transaction(async (tx) => {
        const txn = await openCharge(tx, spec(dev, 1000, 'USD', '0.2'), h.clock.now());
        const id = uuidv7();
        await tx.query(`INSERT INTO journal_entries (id, kind, developer_id, transaction_id, created_at) VALUES ($1, 'charge', $2, $3, $4)`, [id, dev.developerId, txn!.id, h.clock.now()]);
        for (const [account, debit, credit] of lines) {
          await tx.query(`INSERT INTO journal_lines (entry_id, account, developer_id, debit_cents, credit_cents) VALUES ($1, $2, $3, $4, $5)`, [
            id, account, account.startsWith('developer:') ? dev.developerId : null, debit, credit,
          ]);
        }
        return id;
      });
    await expect(post([['platform:cash', 1000, 0], ['developer:available', 0, 999]])).rejects.toMatchObject({ code: '23514' });
    await expect(post([['platform:cash', 1000, 0]])).rejects.toMatchObject({ code: '23514' });
    await expect(post([])).rejects.toMatchObject({ code: '23514' });
    const ok = await post([['platform:cash', 1000, 0], ['platform:commission', 0, 200], ['developer:available', 0, 800]]);
    // append-only: no edit, no delete
    await expect(h.db.query('UPDATE journal_lines SET credit_cents = 900 WHERE entry_id = $1 AND credit_cents = 800', [ok])).rejects.toMatchObject({ code: '23514' });
    await expect(h.db.query('DELETE FROM journal_lines WHERE entry_id = $1', [ok])).rejects.toMatchObject({ code: '23514' });
    await expect(h.db.query('DELETE FROM journal_entries WHERE id = $1', [ok])).rejects.toMatchObject({ code: '23514' });
  });

  it('refuses a transaction whose commission and developer amount do not add up to the amount', async () => {
    const dev = await insertDeveloperWithInstallation(h);
    const now = h.clock.now();
    await expect(
      h.db.query(
        `INSERT INTO app_transactions (id, installation_id, app_id, store_id, developer_id, amount_cents, currency, commission_rate, commission_cents,
           developer_amount_cents, fx_rate, usd_amount_cents, usd_developer_amount_cents, status, period_start, period_end, claimed_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 1000, 'USD', 0.2, 200, 801, 1, 1000, 801, 'pending', $6, $6, $6, $6, $6)`,
        [uuidv7(), dev.installationId, dev.appId, dev.storeId, dev.developerId, now],
      ),
    ).rejects.toMatchObject({ code: '23514' });
  });
});

type Dev = Awaited<ReturnType<typeof insertDeveloperWithInstallation>>;

let periodSeq = 0;
function spec(dev: Dev, amountMinor: number, currency: string, rate: string) {
  // A distinct period per charge: the (installation, period) key is what the billing job uses.
  const start = new Date(Date.UTC(2001, 0, 1) + ++periodSeq * 1000);
  return {
    installationId: dev.installationId, appId: dev.appId, storeId: dev.storeId, developerId: dev.developerId,
    amountMinor, currency, commissionRate: parseDecimal(rate), fxRate: parseDecimal(FX[currency]),
    periodStart: start, periodEnd: new Date(start.getTime() + 30 * 86_400_000),
  };
}

// Independent model of C10.2/C10.3: exact rationals rounded half-even, written differently from
// the service (round half up, then step back on an exact tie to an odd result).
function roundHalfEven(n: bigint, d: bigint): bigint {
  const up = (2n * n + d) / (2n * d);
  const tie = (2n * n) % (2n * d) === d;
  return tie && up % 2n === 1n ? up - 1n : up;
}
function rational(text: string): [bigint, bigint] {
  const [w, f = ''] = text.split('.');
  return [BigInt(w + f), 10n ** BigInt(f.length)];
}
function modelUsdDeveloperAmount(amount: number, rate: string, currency: string): number {
  const [rn, rd] = rational(rate);
  const commission = roundHalfEven(BigInt(amount) * rn, rd);
  const [fn, fd] = rational(FX[currency]);
  return Number(roundHalfEven((BigInt(amount) - commission) * fn, fd));
}

type Op =
  | { op: 'charge'; dev: number; amount: number; currency: string; rate: string; declined: boolean; settleTwice: boolean }
  | { op: 'sweep'; dev: number }
  | { op: 'sweepAt'; dev: number; instant: number }
  | { op: 'dispatch' }
  | { op: 'crashDispatch' }
  | { op: 'leasePasses' }
  | { op: 'fail'; dev: number; pick: number }
  | { op: 'markPaid'; dev: number; pick: number }
  | { op: 'method'; dev: number; works: boolean; bank: boolean }
  | { op: 'minimum'; dev: number; cents: number };

const DEVS = 3;
const dev = fc.integer({ min: 0, max: DEVS - 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ op: fc.constant('charge' as const), dev, amount: fc.integer({ min: 1, max: 60_00 }), currency: fc.constantFrom(...Object.keys(FX)), rate: fc.constantFrom(...RATES), declined: fc.integer({ min: 0, max: 9 }).map((x) => x < 2), settleTwice: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('sweep' as const), dev }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('sweepAt' as const), dev, instant: fc.integer({ min: 0, max: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('dispatch' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('crashDispatch' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('leasePasses' as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('fail' as const), dev, pick: fc.nat(5) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('markPaid' as const), dev, pick: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('method' as const), dev, works: fc.boolean(), bank: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('minimum' as const), dev, cents: fc.constantFrom(0, 1, 10_00, 25_00, 100_00) }) },
);

const money = (s: string | null) => parseMoney(s)!;

/**
 * One consistent snapshot (REPEATABLE READ): on PostgreSQL other test files share the database and
 * may sweep or dispatch these developers' payouts (the operator's process-scheduled covers everyone).
 */
function checkInvariants(devs: Dev[], earnedModel: number[]) {
  return h.db.transaction(async (q) => {
    await q.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    await checkInvariantsIn(q, { ...h.deps, db: q as Deps['db'] }, devs, earnedModel);
  });
}

async function checkInvariantsIn(q: Queryable, deps: Deps, devs: Dev[], earnedModel: number[]) {
  // Every entry in the database balances and has at least two lines.
  const unbalanced = await q.query(
    `SELECT e.id FROM journal_entries e LEFT JOIN journal_lines l ON l.entry_id = e.id
      GROUP BY e.id HAVING count(l.id) < 2 OR coalesce(sum(l.debit_cents), 0) <> coalesce(sum(l.credit_cents), 0)`,
  );
  expect(unbalanced.rows).toEqual([]);
  for (const [i, d] of devs.entries()) {
    const reported = await earnings(deps, d.developerId);
    const [earned, paidOut, balance, inFlight] = [reported.totalEarned, reported.totalPaidOut, reported.balance, reported.inFlight].map(money);
    expect(balance).toBe(earned - paidOut - inFlight);
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(inFlight).toBeGreaterThanOrEqual(0);
    expect(earned).toBe(earnedModel[i]);

    // Recomputed from the raw postings, in JavaScript.
    const { rows: lines } = await q.query<{ account: string; kind: string; debit_cents: number; credit_cents: number }>(
      `SELECT l.account, e.kind, l.debit_cents, l.credit_cents FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id WHERE l.developer_id = $1`,
      [d.developerId],
    );
    let available = 0, flight = 0, earnedRaw = 0, paidRaw = 0;
    for (const l of lines) {
      if (l.account === 'developer:available') available += l.credit_cents - l.debit_cents;
      if (l.account === 'developer:in_flight') flight += l.credit_cents - l.debit_cents;
      if (l.account === 'developer:available' && l.kind === 'charge') earnedRaw += l.credit_cents;
      if (l.account === 'developer:in_flight' && l.kind === 'payout_paid') paidRaw += l.debit_cents;
    }
    expect([available, flight, earnedRaw, paidRaw]).toEqual([balance, inFlight, earned, paidOut]);

    // The same figures from the payout and transaction tables.
    const { rows: [t] } = await q.query<{ paid: number; live: number; unswept: number; earned: number }>(
      `SELECT
         (SELECT coalesce(sum(amount_cents), 0)::bigint FROM payouts WHERE developer_id = $1 AND status = 'paid') AS paid,
         (SELECT coalesce(sum(amount_cents), 0)::bigint FROM payouts WHERE developer_id = $1 AND status IN ('pending', 'processing', 'in_transit')) AS live,
         (SELECT coalesce(sum(usd_developer_amount_cents), 0)::bigint FROM app_transactions WHERE developer_id = $1 AND status = 'paid' AND payout_id IS NULL) AS unswept,
         (SELECT coalesce(sum(usd_developer_amount_cents), 0)::bigint FROM app_transactions WHERE developer_id = $1 AND status = 'paid') AS earned`,
      [d.developerId],
    );
    expect([t.paid, t.live, t.unswept, t.earned]).toEqual([paidOut, inFlight, balance, earned]);

    // Each payout carries exactly its transactions; a transaction is in at most one live payout.
    const { rows: mismatched } = await q.query(
      `SELECT p.id FROM payouts p WHERE p.developer_id = $1 AND p.amount_cents <>
         (SELECT coalesce(sum(t.usd_developer_amount_cents), 0) FROM payout_transactions pt JOIN app_transactions t ON t.id = pt.transaction_id WHERE pt.payout_id = p.id)`,
      [d.developerId],
    );
    expect(mismatched).toEqual([]);
    const { rows: twice } = await q.query(
      `SELECT pt.transaction_id FROM payout_transactions pt JOIN payouts p ON p.id = pt.payout_id
        WHERE p.developer_id = $1 AND p.status <> 'failed' GROUP BY pt.transaction_id HAVING count(*) > 1`,
      [d.developerId],
    );
    expect(twice).toEqual([]);
  }
  // Every payout moved along the status table, each move once.
  const allowed = new Set(['null>pending', 'pending>processing', 'processing>in_transit', 'in_transit>paid', 'pending>failed', 'processing>failed', 'in_transit>failed']);
  const { rows: moves } = await q.query<{ payout_id: string; from_status: string | null; to_status: string }>(
    `SELECT c.payout_id, c.from_status, c.to_status FROM payout_status_changes c JOIN payouts p ON p.id = c.payout_id
      WHERE p.developer_id = ANY($1::uuid[]) ORDER BY c.id`,
    [devs.map((d) => d.developerId)],
  );
  const seen = new Set<string>();
  for (const m of moves) {
    const move = `${m.from_status}>${m.to_status}`;
    expect(allowed.has(move), move).toBe(true);
    expect(seen.has(`${m.payout_id}:${move}`), `${m.payout_id} moved ${move} twice`).toBe(false);
    seen.add(`${m.payout_id}:${move}`);
  }
}

describe('ledger invariants under random operations (property)', () => {
  it('hold after every run of charges, sweeps, dispatches, failures and mark-paid', async () => {
    let totalOps = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 80, maxLength: 140 }), async (ops) => {
        const devs: Dev[] = [];
        for (let i = 0; i < DEVS; i++) devs.push(await insertDeveloperWithInstallation(h));
        const ids = devs.map((d) => d.developerId);
        const earnedModel = devs.map(() => 0);
        for (const [i, d] of devs.entries()) {
          await putPayoutMethod(h.deps, d.developerId, i === 2 ? { type: 'paypal', email: 'fail-dev@example.com' } : { type: 'paypal', email: `dev${i}@example.com` });
        }
        const livePayouts = async (d: number, statuses: string[]) =>
          (await h.db.query<{ id: string }>(`SELECT id FROM payouts WHERE developer_id = $1 AND status = ANY($2::text[]) ORDER BY created_at, id`, [ids[d], statuses])).rows;

        for (const [n, op] of ops.entries()) {
          totalOps++;
          switch (op.op) {
            case 'charge': {
              const txn = (await openCharge(h.db, spec(devs[op.dev], op.amount, op.currency, op.rate), h.clock.now()))!;
              const result = op.declined ? { ok: false as const, reason: 'declined' } : { ok: true as const, reference: `ref-${txn.id}` };
              await settleCharge(h.deps, txn, result);
              if (op.settleTwice) expect(await settleCharge(h.deps, txn, result)).toBeNull();
              if (!op.declined) earnedModel[op.dev] += modelUsdDeveloperAmount(op.amount, op.rate, op.currency);
              break;
            }
            case 'sweep':
              await sweepDeveloper(h.deps, ids[op.dev], null);
              break;
            case 'sweepAt': {
              const instant = new Date(Date.UTC(2000, 0, 1 + op.instant));
              await sweepDeveloper(h.deps, ids[op.dev], instant);
              expect(await sweepDeveloper(h.deps, ids[op.dev], instant)).toBeNull(); // one sweep per instant
              break;
            }
            case 'dispatch':
              await dispatchPayouts(h.deps, { developerIds: ids });
              break;
            case 'crashDispatch':
              // A dispatcher claims and dies before calling the provider: processing until the lease passes.
              await claimPayouts(h.deps, 2, ids);
              break;
            case 'leasePasses':
              h.clock.advance(DISPATCH_LEASE_MS / 1000 + 1);
              break;
            case 'fail': {
              const live = await livePayouts(op.dev, ['pending', 'processing', 'in_transit']);
              const done = await livePayouts(op.dev, ['paid', 'failed']);
              if (live.length) {
                const id = live[op.pick % live.length].id;
                await failPayout(h.deps, id, 'operator says no').catch(async (err) => {
                  // Acceptable if something else (another file's dispatcher, on a shared database) failed it
                  // first, or while a dispatcher's claim on it is live (C10.7 as decided: the provider may be
                  // sending it; a crashed dispatcher's claim holds until its lease passes).
                  if (err?.status !== 409) throw err;
                  const row = (await h.db.query<{ status: PayoutRow['status']; claimed_at: Date | null }>('SELECT status, claimed_at FROM payouts WHERE id = $1', [id])).rows[0];
                  if (['pending', 'processing', 'in_transit'].includes(row.status) && !beingDispatched(row, h.clock.now())) throw err;
                });
              }
              else if (done.length) await expect(failPayout(h.deps, done[op.pick % done.length].id, 'again')).rejects.toMatchObject({ status: 409 });
              break;
            }
            case 'markPaid': {
              const transit = await livePayouts(op.dev, ['in_transit']);
              const other = await livePayouts(op.dev, ['paid', 'failed']); // final states: nothing else can move them
              if (transit.length) await markPayoutPaid(h.deps, transit[op.pick % transit.length].id);
              else if (other.length) await expect(markPayoutPaid(h.deps, other[op.pick % other.length].id)).rejects.toMatchObject({ status: 409 });
              break;
            }
            case 'method':
              await putPayoutMethod(h.deps, ids[op.dev], op.bank
                ? { type: 'bank', accountHolder: 'Dev', routingNumber: '110000000', accountNumber: op.works ? '000123456789' : '000000000' }
                : { type: 'paypal', email: op.works ? 'ok@example.com' : 'fail@example.com' });
              break;
            case 'minimum':
              await h.db.query('UPDATE developer_accounts SET minimum_payout_cents = $2 WHERE developer_id = $1', [ids[op.dev], op.cents]);
              break;
          }
          if (n % 40 === 39) await checkInvariants(devs, earnedModel);
        }
        // Drain: every payout reaches a final state (dead dispatchers' claims included), and the
        // invariants still hold. On a shared PostgreSQL database another file's dispatcher may hold
        // a claim for a moment, or its sweep add a payout: then drain again until none is live.
        const deadline = Date.now() + 20_000;
        for (;;) {
          h.clock.advance(DISPATCH_LEASE_MS / 1000 + 1);
          await dispatchPayouts(h.deps, { developerIds: ids });
          for (const [i] of devs.entries()) for (const p of await livePayouts(i, ['in_transit'])) await markPayoutPaid(h.deps, p.id);
          const live = await h.db.query(`SELECT 1 FROM payouts WHERE developer_id = ANY($1::uuid[]) AND status IN ('pending', 'processing', 'in_transit')`, [ids]);
          if (!live.rows.length) break;
          expect(Date.now(), 'payouts still live after draining').toBeLessThan(deadline);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        await checkInvariants(devs, earnedModel);
      }),
      { numRuns: 25, endOnFailure: true },
    );
    expect(totalOps).toBeGreaterThanOrEqual(2000);
  }, 180_000);
});
