// Payouts (C10.5-C10.7, app-api.md "Payout status"): the sweep turns a developer's balance into one
// `pending` payout. What happens to a payout after that (dispatch to the payout provider, and the
// operator marking it paid or failed) is its settlement, in payout-settlement.ts; this file
// re-exports that API so routes, jobs and tests keep importing the payouts module from one place.
import type { Deps } from '../deps.js';
import { uuidv7 } from '../ids.js';
import { developerLedger, lockDeveloper, postEntry } from '../ledger/ledger.js';
import type { DeveloperAccountRow } from '../billing/developer-accounts.js';
import { latestInstant } from '../billing/schedule.js';
import {
  DEVELOPER_PAGE, attachTransactions, developersWithPayoutMethod, insertPayout, recordMove, sweepRunDone, takeSweepRun, unsweptTransactions,
  type PayoutRow, type PayoutStatus,
} from './payouts.repo.js';

export type { PayoutRow, PayoutStatus } from './payouts.repo.js';
export {
  DISPATCH_LEASE_MS, FAILABLE_STATUSES, beingDispatched, claimPayouts, dispatchPayouts, failPayout, findPayout, markPayoutPaid, type FailableStatus,
} from './payout-settlement.js';
export const PAYOUT_STATUSES: PayoutStatus[] = ['pending', 'processing', 'in_transit', 'paid', 'failed'];

/** The job_runs key of one developer's sweep instant (C14.13): one sweep per developer and instant. */
export const sweepKey = (developerId: string, instant: Date) => `developer:${developerId}@${instant.toISOString()}`;

/**
 * Sweep one developer (C10.5): with `instant`, at most once for that instant (a job_runs key taken
 * in the same transaction); without, out of cycle (`force`). Creates one `pending` payout of the
 * whole balance, covering the paid transactions not yet in a live payout, when the balance is at
 * least the developer's minimum and a payout method is set. Below the minimum it rolls over.
 */
export async function sweepDeveloper(deps: Deps, developerId: string, instant: Date | null): Promise<PayoutRow | null> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    if (instant) {
      if (!(await takeSweepRun(tx, sweepKey(developerId, instant), now))) return null;
    }
    const account = await lockDeveloper<DeveloperAccountRow>(tx, developerId, now);
    if (!account.payout_method) return null;
    const ledger = await developerLedger(tx, developerId);
    if (ledger.available <= 0n || ledger.available < BigInt(account.minimum_payout_cents)) return null;

    const txns = await unsweptTransactions(tx, developerId);
    const covered = txns.reduce((sum, t) => sum + BigInt(t.usd_developer_amount_cents), 0n);
    if (covered !== ledger.available) {
      // Cannot happen while every writer holds the developer lock; refuse rather than pay a wrong amount.
      throw new Error(`ledger balance ${ledger.available} of developer ${developerId} differs from unswept transactions ${covered}`);
    }
    const { carried, amount } = payableTransactions(txns);
    const id = uuidv7();
    const { periodStart, periodEnd } = earningsWindow(carried, instant ?? now);
    const payout = await insertPayout(tx, {
      id, developer_id: developerId, amount_cents: amount, currency: 'USD', status: 'pending',
      payout_method_type: account.payout_method.type, payout_method: account.payout_method, period_start: periodStart, period_end: periodEnd,
      sweep_instant: instant, created_at: now, updated_at: now,
    });
    await attachTransactions(tx, id, carried.map((t) => t.id));
    await postEntry(tx, {
      kind: 'payout_created', developerId, payoutId: id, now,
      lines: [{ account: 'developer:available', debit: amount }, { account: 'developer:in_flight', credit: amount }],
    });
    await recordMove(tx, id, null, 'pending', now);
    return payout;
  });
}

/**
 * A payout's earnings window (app-api.md Payout `periodStart`, `periodEnd`): from its oldest
 * transaction to the sweep's time (the scheduled instant, or now when forced), or to its newest
 * transaction when that is later. The sweep runs after its instant and carries every paid
 * transaction not yet in a payout (C10.5), including those charged since the instant; ending the
 * window at the instant left them outside it, and a payout of such transactions alone had its
 * start after its end. `txns` are oldest first.
 */
export function earningsWindow(txns: { created_at: Date }[], sweptAt: Date): { periodStart: Date; periodEnd: Date } {
  const newest = txns.length ? txns[txns.length - 1].created_at : sweptAt;
  const periodEnd = newest.getTime() > sweptAt.getTime() ? newest : sweptAt;
  return { periodStart: txns.length ? txns[0].created_at : periodEnd, periodEnd };
}

/**
 * The transactions one payout carries: the unswept ones, oldest first, while their sum stays an
 * exact number of cents (2^53 - 1, some 90 trillion USD; what a provider's amount can hold). Past
 * that the rest stays in the balance for the next payout, as a balance below the minimum does.
 */
export function payableTransactions<T extends { usd_developer_amount_cents: number }>(txns: T[]): { carried: T[]; amount: number } {
  const carried: T[] = [];
  let amount = 0;
  for (const t of txns) {
    if (amount + t.usd_developer_amount_cents > Number.MAX_SAFE_INTEGER) break;
    amount += t.usd_developer_amount_cents;
    carried.push(t);
  }
  return { carried, amount };
}

/**
 * The sweep over every developer with a payout method: the scheduled one sweeps each developer
 * whose latest instant has not been swept yet (a missed instant is caught up once, C14.13);
 * `force` sweeps every one of them now (C10.7).
 */
export async function runPayoutSweep(deps: Deps, options: { force?: boolean; developerIds?: string[] } = {}): Promise<{ created: number; payouts: PayoutRow[] }> {
  const now = deps.clock.now();
  const payouts: PayoutRow[] = [];
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows = await developersWithPayoutMethod(deps.db, after, options.developerIds ?? null);
    for (const dev of rows) {
      let instant: Date | null = null;
      if (!options.force) {
        instant = latestInstant(dev.payout_schedule, dev.created_at, now);
        if (!instant) continue;
        if (await sweepRunDone(deps.db, sweepKey(dev.developer_id, instant))) continue;
      }
      try {
        const payout = await sweepDeveloper(deps, dev.developer_id, instant);
        if (payout) payouts.push(payout);
      } catch (err) {
        // One developer's sweep failing (its transaction, and so its instant's key, rolled back:
        // retried by the next run) must not keep every developer after it from being paid.
        deps.log.error({ err, developerId: dev.developer_id }, 'payouts: sweep of one developer failed; the others go on');
      }
    }
    if (rows.length < DEVELOPER_PAGE) break;
    after = rows[rows.length - 1].developer_id;
  }
  return { created: payouts.length, payouts };
}
