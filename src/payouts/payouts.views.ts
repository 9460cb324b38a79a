// The developer's view of its money (app-api.md "Developer resources"): earnings, payouts and the
// transactions a payout carries. Amounts are decimal strings (C14.12); the ledger is in USD.
import type { Deps } from '../deps.js';
import { badRequest, notFound } from '../http/errors.js';
import type { Page } from '../http/paging.js';
import { formatMinor } from '../money.js';
import { developerLedger } from '../ledger/ledger.js';
import { developerAccount, nextPayoutAt } from '../billing/developer-accounts.js';
import { PAYOUT_STATUSES, findPayout, type PayoutStatus } from './payouts.js';
import { listDeveloperPayouts, payoutTransactions, payoutWithIds as payoutWithIdsRow, type PayoutWithIds } from './payouts.repo.js';

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

export function payoutWithIds(deps: Deps, payoutId: string): Promise<PayoutWithIds | null> {
  return payoutWithIdsRow(deps.db, payoutId);
}

/** Earnings (app-api.md): every figure derived from ledger postings. */
export async function earnings(deps: Deps, developerId: string) {
  const [ledger, account] = await Promise.all([developerLedger(deps.db, developerId), developerAccount(deps.db, developerId)]);
  return {
    totalEarned: formatMinor(ledger.earned),
    totalPaidOut: formatMinor(ledger.paidOut),
    balance: formatMinor(ledger.available),
    inFlight: formatMinor(ledger.inFlight),
    currency: 'USD' as const,
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
  const { rows, total } = await listDeveloperPayouts(deps.db, developerId, filter, page);
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
  const rows = await payoutTransactions(deps.db, payoutId);
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
