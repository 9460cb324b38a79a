// The developer's view of its money (app-api.md "Developer resources"): earnings, payouts and the
// transactions a payout carries. Amounts are decimal strings (C14.12); the ledger is in USD.
import type { Deps } from '../deps.js';
import { badRequest, notFound } from '../http/errors.js';
import type { Page } from '../http/paging.js';
import { formatMinor } from '../money.js';
import { developerLedger } from '../ledger/ledger.js';
import { developerAccount, nextPayoutAt } from '../billing/developer-accounts.js';
import { PAYOUT_STATUSES, findPayout, type PayoutRow, type PayoutStatus } from './payouts.js';

type PayoutWithIds = PayoutRow & { transaction_ids: string[] };

export function payoutView(p: PayoutWithIds) {
  return {
    payoutId: p.id,
    developerId: p.developer_id,
    amount: formatMinor(p.amount_cents),
    currency: p.currency,
    status: p.status,
    payoutMethodType: p.payout_method_type,
    externalReference: p.external_reference,
    periodStart: p.period_start.toISOString(),
    periodEnd: p.period_end.toISOString(),
    transactionIds: p.transaction_ids ?? [],
    failureReason: p.failure_reason,
    paidAt: p.paid_at?.toISOString() ?? null,
    createdAt: p.created_at.toISOString(),
  };
}

const WITH_IDS = `p.*, coalesce((SELECT json_agg(pt.transaction_id ORDER BY pt.transaction_id) FROM payout_transactions pt WHERE pt.payout_id = p.id), '[]'::json) AS transaction_ids`;

export async function payoutWithIds(deps: Deps, payoutId: string): Promise<PayoutWithIds | null> {
  const { rows } = await deps.db.query<PayoutWithIds>(`SELECT ${WITH_IDS} FROM payouts p WHERE p.id = $1`, [payoutId]);
  return rows[0] ?? null;
}

/** Earnings (app-api.md): every figure derived from ledger postings. */
export async function earnings(deps: Deps, developerId: string) {
  const [ledger, account] = await Promise.all([developerLedger(deps.db, developerId), developerAccount(deps.db, developerId)]);
  return {
    totalEarned: formatMinor(ledger.earned),
    totalPaidOut: formatMinor(ledger.paidOut),
    balance: formatMinor(ledger.available),
    inFlight: formatMinor(ledger.inFlight),
    currency: 'USD',
    nextPayoutAt: nextPayoutAt(account, deps.clock.now()),
    minimumPayoutAmount: formatMinor(Number(account.minimum_payout_cents)),
  };
}

/** `GET /apps/developer/payouts`: newest first, optional status filter (another value -> 400). */
export async function listPayouts(deps: Deps, developerId: string, page: Page, status: unknown) {
  if (status !== undefined && status !== '' && !PAYOUT_STATUSES.includes(status as PayoutStatus)) {
    throw badRequest(`status must be one of ${PAYOUT_STATUSES.join(', ')}`);
  }
  const filter = status ? (status as PayoutStatus) : null;
  const [{ rows }, count] = await Promise.all([
    deps.db.query<PayoutWithIds>(
      `SELECT ${WITH_IDS} FROM payouts p WHERE p.developer_id = $1 AND ($2::text IS NULL OR p.status = $2)
        ORDER BY p.created_at DESC, p.id DESC LIMIT $3 OFFSET $4`,
      [developerId, filter, page.limit, page.offset],
    ),
    deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payouts WHERE developer_id = $1 AND ($2::text IS NULL OR status = $2)`, [developerId, filter]),
  ]);
  const total = count.rows[0].n;
  return {
    items: rows.map(payoutView),
    pagination: { page: page.page, limit: page.limit, total, hasMore: page.offset + rows.length < total },
  };
}

/** `GET /apps/developer/payouts/{payoutId}`: another developer's payout is 404, like an unknown one. */
export async function payoutDetail(deps: Deps, developerId: string, payoutId: string) {
  const payout = await findPayout(deps.db, payoutId);
  if (!payout || payout.developer_id !== developerId) throw notFound('Payout not found');
  const full = (await payoutWithIds(deps, payoutId))!;
  const { rows } = await deps.db.query<{ id: string; app_id: string; store_id: string; amount_cents: number; developer_amount_cents: number; currency: string; fx_rate: string; usd_developer_amount_cents: number; created_at: Date }>(
    `SELECT t.id, t.app_id, t.store_id, t.amount_cents, t.developer_amount_cents, t.currency, t.fx_rate::text AS fx_rate, t.usd_developer_amount_cents, t.created_at
       FROM payout_transactions pt JOIN app_transactions t ON t.id = pt.transaction_id
      WHERE pt.payout_id = $1 ORDER BY t.created_at, t.id`,
    [payoutId],
  );
  return {
    payout: payoutView(full),
    transactions: rows.map((t) => ({
      transactionId: t.id,
      appId: t.app_id,
      storeId: t.store_id,
      amount: formatMinor(t.amount_cents),
      developerAmount: formatMinor(t.developer_amount_cents),
      currency: t.currency,
      // beyond app-api.md's list: what the developer amount rolled up to in the payout's currency
      fxRate: t.fx_rate,
      usdDeveloperAmount: formatMinor(t.usd_developer_amount_cents),
      createdAt: t.created_at.toISOString(),
    })),
  };
}
