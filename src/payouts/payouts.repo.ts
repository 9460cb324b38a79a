// Payouts' SQL. Every move of a payout is a conditional UPDATE on the state the caller expects
// (payouts.ts), and each move is also a row of payout_status_changes.
import type { Queryable } from '../db/db.js';
import { insertRow } from '../db/sql.js';
import type { DeveloperAccountRow, StoredPayoutMethod } from '../billing/developer-accounts.js';

export type PayoutStatus = 'pending' | 'processing' | 'in_transit' | 'paid' | 'failed';

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

export type PayoutWithIds = PayoutRow & { transaction_ids: string[] };

export async function recordMove(q: Queryable, payoutId: string, from: PayoutStatus | null, to: PayoutStatus, now: Date, reason: string | null = null) {
  await insertRow(q, 'payout_status_changes', { payout_id: payoutId, from_status: from, to_status: to, reason, created_at: now });
}

// ---- the sweep -------------------------------------------------------------------------------------

/** Takes the sweep's job_runs key (C14.13); false when another sweep took it first. */
export async function takeSweepRun(q: Queryable, key: string, now: Date): Promise<boolean> {
  const taken = await q.query(
    `INSERT INTO job_runs (job, period_key, started_at, finished_at, processed) VALUES ('payout-sweep', $1, $2, $2, 0)
     ON CONFLICT (job, period_key) DO NOTHING RETURNING 1`,
    [key, now],
  );
  return taken.rows.length > 0;
}

export async function sweepRunDone(q: Queryable, key: string): Promise<boolean> {
  const done = await q.query(`SELECT 1 FROM job_runs WHERE job = 'payout-sweep' AND period_key = $1`, [key]);
  return done.rows.length > 0;
}

/** The developer's paid transactions in no payout yet, oldest first. */
export async function unsweptTransactions(q: Queryable, developerId: string) {
  const { rows } = await q.query<{ id: string; usd_developer_amount_cents: number; created_at: Date }>(
    `SELECT id, usd_developer_amount_cents, created_at FROM app_transactions
      WHERE developer_id = $1 AND status = 'paid' AND payout_id IS NULL ORDER BY created_at, id`,
    [developerId],
  );
  return rows;
}

export async function insertPayout(
  q: Queryable,
  row: Pick<PayoutRow, 'id' | 'developer_id' | 'amount_cents' | 'currency' | 'status' | 'payout_method_type' | 'payout_method' | 'period_start' | 'period_end' | 'sweep_instant' | 'created_at' | 'updated_at'>,
): Promise<PayoutRow> {
  const { rows } = await insertRow<PayoutRow>(q, 'payouts', { ...row }, { casts: { payout_method: 'jsonb' }, returning: '*' });
  return rows[0];
}

/** Puts the given transactions (paid, unswept, read under the developer lock) into the payout. */
export async function attachTransactions(q: Queryable, payoutId: string, transactionIds: string[]): Promise<void> {
  await q.query(
    `INSERT INTO payout_transactions (payout_id, transaction_id) SELECT $1, t FROM unnest($2::uuid[]) AS t`,
    [payoutId, transactionIds],
  );
  await q.query(`UPDATE app_transactions SET payout_id = $1 WHERE id = ANY($2::uuid[]) AND status = 'paid' AND payout_id IS NULL`, [payoutId, transactionIds]);
}

export const DEVELOPER_PAGE = 500;

/** A page (DEVELOPER_PAGE) of developers with a payout method, by id after `after` (optionally only `developerIds`). */
export async function developersWithPayoutMethod(q: Queryable, after: string, developerIds: string[] | null) {
  const { rows } = await q.query<{ developer_id: string; payout_schedule: DeveloperAccountRow['payout_schedule']; created_at: Date }>(
    `SELECT d.developer_id, d.payout_schedule, u.created_at
       FROM developer_accounts d JOIN users u ON u.id = d.developer_id
      WHERE d.payout_method IS NOT NULL AND d.developer_id > $1
        AND ($2::uuid[] IS NULL OR d.developer_id = ANY($2::uuid[]))
      ORDER BY d.developer_id LIMIT 500`,
    [after, developerIds],
  );
  return rows;
}

// ---- dispatch and the operator's moves ------------------------------------------------------------

/**
 * Locks up to `limit` payouts to dispatch: pending ones, and processing ones claimed before
 * `leaseCutoff`. SKIP LOCKED: two dispatchers never pick one payout.
 */
export async function pickClaimable(q: Queryable, leaseCutoff: Date, limit: number, onlyDevelopers: string[] | null) {
  const { rows } = await q.query<{ id: string; status: PayoutStatus }>(
    `SELECT id, status FROM payouts
      WHERE (status = 'pending' OR (status = 'processing' AND claimed_at < $1))
        AND ($3::uuid[] IS NULL OR developer_id = ANY($3::uuid[]))
      ORDER BY created_at, id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [leaseCutoff, limit, onlyDevelopers],
  );
  return rows;
}

/** The picked payouts become processing, one more attempt each. */
export async function markProcessing(q: Queryable, ids: string[], now: Date): Promise<PayoutRow[]> {
  const { rows } = await q.query<PayoutRow>(
    `UPDATE payouts SET status = 'processing', claimed_at = $2, attempts = attempts + 1, updated_at = $2
      WHERE id = ANY($1::uuid[]) RETURNING *`,
    [ids, now],
  );
  return rows;
}

/** processing -> in_transit, only for the attempt that claimed it; false when that claim was lost. */
export async function markInTransit(q: Queryable, id: string, attempt: number, reference: string, now: Date): Promise<boolean> {
  const { rows } = await q.query(
    `UPDATE payouts SET status = 'in_transit', external_reference = $2, updated_at = $3
      WHERE id = $1 AND status = 'processing' AND attempts = $4 RETURNING id`,
    [id, reference, now, attempt],
  );
  return rows.length > 0;
}

/** The payout fails; its transactions are free to be swept again. */
export async function markFailed(q: Queryable, id: string, reason: string, now: Date): Promise<PayoutRow> {
  const { rows } = await q.query<PayoutRow>(`UPDATE payouts SET status = 'failed', failure_reason = $2, updated_at = $3 WHERE id = $1 RETURNING *`, [id, reason, now]);
  await q.query('UPDATE app_transactions SET payout_id = NULL, updated_at = $2 WHERE payout_id = $1', [id, now]);
  return rows[0];
}

/** A failed payout's reason, replaced (the status and the ledger are not touched). Null when it is not failed. */
export async function replaceFailureReason(q: Queryable, id: string, reason: string, now: Date): Promise<PayoutRow | null> {
  const { rows } = await q.query<PayoutRow>(`UPDATE payouts SET failure_reason = $2, updated_at = $3 WHERE id = $1 AND status = 'failed' RETURNING *`, [id, reason, now]);
  return rows[0] ?? null;
}

export async function markPaid(q: Queryable, id: string, now: Date): Promise<PayoutRow> {
  const { rows } = await q.query<PayoutRow>(`UPDATE payouts SET status = 'paid', paid_at = $2, updated_at = $2 WHERE id = $1 RETURNING *`, [id, now]);
  return rows[0];
}

export async function lockPayout(q: Queryable, id: string): Promise<PayoutRow | null> {
  return (await q.query<PayoutRow>('SELECT * FROM payouts WHERE id = $1 FOR UPDATE', [id])).rows[0] ?? null;
}

export async function payoutById(q: Queryable, id: string): Promise<PayoutRow | null> {
  return (await q.query<PayoutRow>('SELECT * FROM payouts WHERE id = $1', [id])).rows[0] ?? null;
}

// ---- the developer's reads ---------------------------------------------------------------------

const WITH_IDS = `p.*, coalesce((SELECT json_agg(pt.transaction_id ORDER BY pt.transaction_id) FROM payout_transactions pt WHERE pt.payout_id = p.id), '[]'::json) AS transaction_ids`;

export async function payoutWithIds(q: Queryable, id: string): Promise<PayoutWithIds | null> {
  const { rows } = await q.query<PayoutWithIds>(`SELECT ${WITH_IDS} FROM payouts p WHERE p.id = $1`, [id]);
  return rows[0] ?? null;
}

/** The developer's payouts, newest first, optionally of one status; with the total count. */
export async function listDeveloperPayouts(q: Queryable, developerId: string, status: PayoutStatus | null, page: { limit: number; offset: number }) {
  const [{ rows }, count] = await Promise.all([
    q.query<PayoutWithIds>(
      `SELECT ${WITH_IDS} FROM payouts p WHERE p.developer_id = $1 AND ($2::text IS NULL OR p.status = $2)
        ORDER BY p.created_at DESC, p.id DESC LIMIT $3 OFFSET $4`,
      [developerId, status, page.limit, page.offset],
    ),
    q.query<{ n: number }>(`SELECT count(*)::int AS n FROM payouts WHERE developer_id = $1 AND ($2::text IS NULL OR status = $2)`, [developerId, status]),
  ]);
  return { rows, total: count.rows[0].n };
}

/** The transactions a payout carries, oldest first. */
export async function payoutTransactions(q: Queryable, payoutId: string) {
  const { rows } = await q.query<{ id: string; app_id: string; store_id: string; amount_cents: number; developer_amount_cents: number; currency: string; fx_rate: string; usd_developer_amount_cents: number; created_at: Date }>(
    `SELECT t.id, t.app_id, t.store_id, t.amount_cents, t.developer_amount_cents, t.currency, t.fx_rate::text AS fx_rate, t.usd_developer_amount_cents, t.created_at
       FROM payout_transactions pt JOIN app_transactions t ON t.id = pt.transaction_id
      WHERE pt.payout_id = $1 ORDER BY t.created_at, t.id`,
    [payoutId],
  );
  return rows;
}
