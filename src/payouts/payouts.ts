// Payouts (C10.5-C10.7, app-api.md "Payout status"): the sweep turns a developer's balance into one
// `pending` payout; the dispatcher moves it pending -> processing (claimed and committed) ->
// provider call outside any transaction -> in_transit or failed; the operator marks it paid or
// failed. Every move is a conditional UPDATE on the expected status, so no payout moves twice.
import type { Deps } from '../deps.js';
import type { Queryable, Tx } from '../db/db.js';
import { conflict, notFound } from '../http/errors.js';
import { uuidv7, isUuid } from '../ids.js';
import { developerLedger, lockDeveloper, postEntry } from '../ledger/ledger.js';
import { billingProviders, type ProviderResult } from '../billing/providers.js';
import { payoutDestination, type DeveloperAccountRow, type StoredPayoutMethod } from '../billing/developer-accounts.js';
import { latestInstant } from '../billing/schedule.js';

export type PayoutStatus = 'pending' | 'processing' | 'in_transit' | 'paid' | 'failed';
export const PAYOUT_STATUSES: PayoutStatus[] = ['pending', 'processing', 'in_transit', 'paid', 'failed'];
/** A processing payout whose dispatcher has not reported back for this long is dispatched again. */
export const DISPATCH_LEASE_MS = 15 * 60 * 1000;
const BATCH = 20;

export interface PayoutRow {
  id: string;
  developer_id: string;
  amount_cents: number;
  currency: string;
  status: PayoutStatus;
  payout_method_type: 'bank' | 'paypal';
  payout_method: StoredPayoutMethod;
  external_reference: string | null;
  period_start: Date;
  period_end: Date;
  failure_reason: string | null;
  paid_at: Date | null;
  sweep_instant: Date | null;
  claimed_at: Date | null;
  attempts: number;
  created_at: Date;
  updated_at: Date;
}

async function recordMove(tx: Queryable, payoutId: string, from: PayoutStatus | null, to: PayoutStatus, now: Date, reason: string | null = null) {
  await tx.query('INSERT INTO payout_status_changes (payout_id, from_status, to_status, reason, created_at) VALUES ($1, $2, $3, $4, $5)', [payoutId, from, to, reason, now]);
}

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
      const taken = await tx.query(
        `INSERT INTO job_runs (job, period_key, started_at, finished_at, processed) VALUES ('payout-sweep', $1, $2, $2, 0)
         ON CONFLICT (job, period_key) DO NOTHING RETURNING 1`,
        [sweepKey(developerId, instant), now],
      );
      if (!taken.rows.length) return null;
    }
    const account = await lockDeveloper<DeveloperAccountRow>(tx, developerId, now);
    if (!account.payout_method) return null;
    const ledger = await developerLedger(tx, developerId);
    if (ledger.available <= 0 || ledger.available < Number(account.minimum_payout_cents)) return null;

    const { rows: txns } = await tx.query<{ id: string; usd_developer_amount_cents: number; created_at: Date }>(
      `SELECT id, usd_developer_amount_cents, created_at FROM app_transactions
        WHERE developer_id = $1 AND status = 'paid' AND payout_id IS NULL ORDER BY created_at, id`,
      [developerId],
    );
    const covered = txns.reduce((sum, t) => sum + t.usd_developer_amount_cents, 0);
    if (covered !== ledger.available) {
      // Cannot happen while every writer holds the developer lock; refuse rather than pay a wrong amount.
      throw new Error(`ledger balance ${ledger.available} of developer ${developerId} differs from unswept transactions ${covered}`);
    }
    const id = uuidv7();
    const periodStart = txns.length ? txns[0].created_at : now;
    const { rows } = await tx.query<PayoutRow>(
      `INSERT INTO payouts (id, developer_id, amount_cents, currency, status, payout_method_type, payout_method, period_start, period_end,
         sweep_instant, created_at, updated_at)
       VALUES ($1, $2, $3, 'USD', 'pending', $4, $5, $6, $7, $8, $9, $9) RETURNING *`,
      [id, developerId, ledger.available, account.payout_method.type, JSON.stringify(account.payout_method), periodStart, instant ?? now, instant, now],
    );
    await tx.query(
      `INSERT INTO payout_transactions (payout_id, transaction_id)
       SELECT $1, id FROM app_transactions WHERE developer_id = $2 AND status = 'paid' AND payout_id IS NULL`,
      [id, developerId],
    );
    await tx.query(`UPDATE app_transactions SET payout_id = $1 WHERE developer_id = $2 AND status = 'paid' AND payout_id IS NULL`, [id, developerId]);
    await postEntry(tx, {
      kind: 'payout_created', developerId, payoutId: id, now,
      lines: [{ account: 'developer:available', debit: ledger.available }, { account: 'developer:in_flight', credit: ledger.available }],
    });
    await recordMove(tx, id, null, 'pending', now);
    return rows[0];
  });
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
    const { rows } = await deps.db.query<{ developer_id: string; payout_schedule: DeveloperAccountRow['payout_schedule']; created_at: Date }>(
      `SELECT d.developer_id, d.payout_schedule, u.created_at
         FROM developer_accounts d JOIN users u ON u.id = d.developer_id
        WHERE d.payout_method IS NOT NULL AND d.developer_id > $1
          AND ($2::uuid[] IS NULL OR d.developer_id = ANY($2::uuid[]))
        ORDER BY d.developer_id LIMIT 500`,
      [after, options.developerIds ?? null],
    );
    for (const dev of rows) {
      let instant: Date | null = null;
      if (!options.force) {
        instant = latestInstant(dev.payout_schedule, dev.created_at, now);
        if (!instant) continue;
        const done = await deps.db.query(`SELECT 1 FROM job_runs WHERE job = 'payout-sweep' AND period_key = $1`, [sweepKey(dev.developer_id, instant)]);
        if (done.rows.length) continue;
      }
      const payout = await sweepDeveloper(deps, dev.developer_id, instant);
      if (payout) payouts.push(payout);
    }
    if (rows.length < 500) break;
    after = rows[rows.length - 1].developer_id;
  }
  return { created: payouts.length, payouts };
}

/**
 * Claim up to `limit` payouts: pending ones, and processing ones whose dispatcher went silent past
 * the lease. Row locks with SKIP LOCKED, committed at once: two dispatchers never claim one payout.
 */
export async function claimPayouts(deps: Deps, limit = BATCH, onlyDevelopers?: string[]): Promise<PayoutRow[]> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const { rows: picked } = await tx.query<{ id: string; status: PayoutStatus }>(
      `SELECT id, status FROM payouts
        WHERE (status = 'pending' OR (status = 'processing' AND claimed_at < $1))
          AND ($3::uuid[] IS NULL OR developer_id = ANY($3::uuid[]))
        ORDER BY created_at, id LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [new Date(now.getTime() - DISPATCH_LEASE_MS), limit, onlyDevelopers ?? null],
    );
    if (!picked.length) return [];
    const { rows } = await tx.query<PayoutRow>(
      `UPDATE payouts SET status = 'processing', claimed_at = $2, attempts = attempts + 1, updated_at = $2
        WHERE id = ANY($1::uuid[]) RETURNING *`,
      [picked.map((p) => p.id), now],
    );
    for (const p of picked) if (p.status === 'pending') await recordMove(tx, p.id, 'pending', 'processing', now);
    return rows;
  });
}

/** Record the provider's answer for a payout this dispatcher claimed (fenced by its attempt number). */
async function recordDispatch(deps: Deps, payout: PayoutRow, result: ProviderResult): Promise<'in_transit' | 'failed' | 'lost'> {
  const now = deps.clock.now();
  if (!result.ok) {
    const failed = await failPayoutWith(deps, payout.developer_id, payout.id, result.reason, (p) => p.status === 'processing' && p.attempts === payout.attempts);
    return failed ? 'failed' : 'lost';
  }
  return deps.db.transaction(async (tx) => {
    const { rows } = await tx.query(
      `UPDATE payouts SET status = 'in_transit', external_reference = $2, updated_at = $3
        WHERE id = $1 AND status = 'processing' AND attempts = $4 RETURNING id`,
      [payout.id, result.reference, now, payout.attempts],
    );
    if (!rows.length) return 'lost' as const;
    await recordMove(tx, payout.id, 'processing', 'in_transit', now);
    return 'in_transit' as const;
  });
}

/** The dispatcher (C10.6): every claimable payout through the payout provider. */
export async function dispatchPayouts(deps: Deps, options: { developerIds?: string[] } = {}): Promise<{ dispatched: number; failed: number }> {
  let dispatched = 0;
  let failed = 0;
  for (;;) {
    const claimed = await claimPayouts(deps, BATCH, options.developerIds);
    if (!claimed.length) break;
    for (const payout of claimed) {
      let result: ProviderResult;
      try {
        result = await billingProviders(deps).payouts.submit({
          idempotencyKey: payout.id,
          developerId: payout.developer_id,
          amountMinor: payout.amount_cents,
          currency: payout.currency,
          destination: payoutDestination(deps, payout.payout_method),
        });
      } catch (err) {
        // Transient: the payout stays processing and is dispatched again after the lease.
        deps.log.warn({ err, payoutId: payout.id }, 'payouts: provider unavailable; retried after the lease');
        continue;
      }
      const outcome = await recordDispatch(deps, payout, result);
      if (outcome === 'in_transit') dispatched++;
      if (outcome === 'failed') failed++;
    }
  }
  return { dispatched, failed };
}

/**
 * Move a payout to `failed` when `allowed` accepts its current state: the amount goes back to the
 * developer's balance (ledger) and its transactions become sweepable again. Null when refused.
 */
async function failPayoutWith(deps: Deps, developerId: string, payoutId: string, reason: string, allowed: (p: PayoutRow) => boolean): Promise<PayoutRow | null> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    await lockDeveloper(tx, developerId, now);
    const payout = await lockPayout(tx, payoutId);
    if (!payout || !allowed(payout)) return null;
    const { rows } = await tx.query<PayoutRow>(
      `UPDATE payouts SET status = 'failed', failure_reason = $2, updated_at = $3 WHERE id = $1 RETURNING *`,
      [payoutId, reason, now],
    );
    await tx.query('UPDATE app_transactions SET payout_id = NULL, updated_at = $2 WHERE payout_id = $1', [payoutId, now]);
    await postEntry(tx, {
      kind: 'payout_failed', developerId, payoutId, now,
      lines: [{ account: 'developer:in_flight', debit: payout.amount_cents }, { account: 'developer:available', credit: payout.amount_cents }],
    });
    await recordMove(tx, payoutId, payout.status, 'failed', now, reason);
    return rows[0];
  });
}

async function lockPayout(tx: Tx, payoutId: string): Promise<PayoutRow | null> {
  return (await tx.query<PayoutRow>('SELECT * FROM payouts WHERE id = $1 FOR UPDATE', [payoutId])).rows[0] ?? null;
}

export async function findPayout(q: Queryable, payoutId: string): Promise<PayoutRow | null> {
  if (!isUuid(payoutId)) return null;
  return (await q.query<PayoutRow>('SELECT * FROM payouts WHERE id = $1', [payoutId])).rows[0] ?? null;
}

/** C10.7 operator fail: from pending, processing or in_transit; else 409. */
export async function failPayout(deps: Deps, payoutId: string, reason: string): Promise<PayoutRow> {
  const payout = await findPayout(deps.db, payoutId);
  if (!payout) throw notFound('Payout not found');
  const failed = await failPayoutWith(deps, payout.developer_id, payoutId, reason, (p) => ['pending', 'processing', 'in_transit'].includes(p.status));
  if (!failed) throw conflict(`Payout is ${(await findPayout(deps.db, payoutId))!.status}; only pending, processing or in_transit payouts can fail`);
  return failed;
}

/** C10.7 mark-paid: in_transit -> paid with paidAt; any other state -> 409. */
export async function markPayoutPaid(deps: Deps, payoutId: string): Promise<PayoutRow> {
  const payout = await findPayout(deps.db, payoutId);
  if (!payout) throw notFound('Payout not found');
  const now = deps.clock.now();
  const paid = await deps.db.transaction(async (tx) => {
    await lockDeveloper(tx, payout.developer_id, now);
    const current = await lockPayout(tx, payoutId);
    if (!current || current.status !== 'in_transit') return { refused: current?.status ?? 'missing' };
    const { rows } = await tx.query<PayoutRow>(`UPDATE payouts SET status = 'paid', paid_at = $2, updated_at = $2 WHERE id = $1 RETURNING *`, [payoutId, now]);
    await postEntry(tx, {
      kind: 'payout_paid', developerId: payout.developer_id, payoutId, now,
      lines: [{ account: 'developer:in_flight', debit: current.amount_cents }, { account: 'platform:cash', credit: current.amount_cents }],
    });
    await recordMove(tx, payoutId, 'in_transit', 'paid', now);
    return { row: rows[0] };
  });
  if ('refused' in paid) throw conflict(`Payout is ${paid.refused}; only an in_transit payout can be marked paid`);
  return paid.row;
}
