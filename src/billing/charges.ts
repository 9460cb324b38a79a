// The `billing-charges` job (C10.1, C10.2, C14.12). Each due installation is charged once per
// billing period, in three short steps with the provider call outside any transaction:
//   1. claim: insert the period's app transaction as `pending`; the unique (installation, period
//      start, period end) key lets exactly one run (of any process) win the insert, and only the
//      winner goes on;
//   2. charge through the payment provider, idempotency key = transaction id;
//   3. settle: `paid` with its ledger entry, or `failed` with the installation `past_due`.
// A run that dies between 1 and 3 leaves a `pending` row; a later run reclaims it after a lease and
// retries with the same idempotency key, so the provider takes the money once.
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { uuidv7 } from '../ids.js';
import { parseMoney } from '../money.js';
import { isoMinorUnits } from '../currencies.js';
import { lockDeveloper, postEntry } from '../ledger/ledger.js';
import { billingProviders, type ProviderResult } from './providers.js';
import { decimalText, mulHalfEven, parseDecimal, splitCommission, toUsd, type Decimal } from './money-math.js';
import { periodContaining, type BillingInterval } from './schedule.js';

/** A pending charge older than this is taken to be abandoned by a dead run and is retried. */
export const CHARGE_LEASE_MS = 10 * 60 * 1000;
const BATCH = 200;

export interface AppTransactionRow {
  id: string;
  installation_id: string;
  app_id: string;
  store_id: string;
  developer_id: string;
  amount_cents: number;
  currency: string;
  commission_rate: string;
  commission_cents: number;
  developer_amount_cents: number;
  fx_rate: string;
  usd_amount_cents: number;
  usd_developer_amount_cents: number;
  status: 'pending' | 'paid' | 'failed';
  period_start: Date;
  period_end: Date;
  provider_reference: string | null;
  failure_reason: string | null;
  claimed_at: Date;
  payout_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Whether a paid (or still pending) period of the installation is running at `now`: uninstalling
 * then leaves it `pending_uninstall` until the period ends (C4.7, C10.1).
 */
export async function paidPeriodRunning(q: Queryable, installationId: string, now: Date): Promise<boolean> {
  const { rows } = await q.query(
    `SELECT 1 FROM app_transactions WHERE installation_id = $1 AND status IN ('paid', 'pending') AND period_start <= $2 AND period_end > $2 LIMIT 1`,
    [installationId, now],
  );
  return rows.length > 0;
}

/** USD per unit of `currency` (C10.3); null when SVC_FX_RATES has no rate for it. */
export function fxRateFor(deps: Deps, currency: string): Decimal | null {
  if (currency === 'USD') return { units: 1n, scale: 0 };
  const rate = deps.config.fxRates[currency];
  return rate === undefined ? null : parseDecimal(rate);
}

export interface ChargeSpec {
  installationId: string;
  appId: string;
  storeId: string;
  developerId: string;
  amountMinor: number;
  currency: string;
  commissionRate: Decimal;
  fxRate: Decimal;
  periodStart: Date;
  periodEnd: Date;
}

/**
 * Step 1: the claim. Returns the new pending transaction, or null when the period was already
 * taken or the installation is no longer active. A period is its start and its end (0029): keyed
 * by its start alone, a period of another length sharing a failed period's start (a declined month,
 * then yearly pricing) was "taken" and never charged; overlap with paid or pending time is kept
 * out by `chargePeriod` and the due query, not by this key. The installation row is locked
 * (shared) for the insert, as uninstall locks it (C4.7): the job's candidate list was read
 * earlier, and an uninstall committed since then found no charge running and made the installation
 * `uninstalled`, after which this insert charged the merchant a full period of an app they had
 * removed. Now either the uninstall comes first (nothing is claimed) or the claim does (the
 * uninstall sees it running and leaves the installation `pending_uninstall` until the period
 * ends, C10.1).
 */
export async function openCharge(q: Queryable, spec: ChargeSpec, now: Date): Promise<AppTransactionRow | null> {
  const split = splitCommission(spec.amountMinor, spec.commissionRate);
  const usd = toUsd(spec.amountMinor, split.developerAmount, spec.fxRate);
  const { rows } = await q.query<AppTransactionRow>(
    `WITH live AS (SELECT id FROM installations WHERE id = $2 AND status = 'active' FOR SHARE)
     INSERT INTO app_transactions (id, installation_id, app_id, store_id, developer_id, amount_cents, currency, commission_rate,
       commission_cents, developer_amount_cents, fx_rate, usd_amount_cents, usd_developer_amount_cents, status,
       period_start, period_end, claimed_at, created_at, updated_at)
     SELECT $1::uuid, live.id, $3::uuid, $4::uuid, $5::uuid, $6::bigint, $7::text, $8::numeric, $9::bigint, $10::bigint, $11::numeric,
            $12::bigint, $13::bigint, 'pending', $14::timestamptz, $15::timestamptz, $16::timestamptz, $16::timestamptz, $16::timestamptz
       FROM live
     ON CONFLICT (installation_id, period_start, period_end) DO NOTHING
     RETURNING *`,
    [
      uuidv7(), spec.installationId, spec.appId, spec.storeId, spec.developerId, spec.amountMinor, spec.currency,
      decimalText(spec.commissionRate), split.commission, split.developerAmount, decimalText(spec.fxRate),
      usd.usdAmount, usd.usdDeveloperAmount, spec.periodStart, spec.periodEnd, now,
    ],
  );
  return rows[0] ?? null;
}

/** Step 3: record the provider's answer; posts the ledger entry of a paid charge. */
export async function settleCharge(deps: Deps, txn: AppTransactionRow, result: ProviderResult): Promise<AppTransactionRow | null> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    await lockDeveloper(tx, txn.developer_id, now);
    const { rows } = await tx.query<AppTransactionRow>(
      `UPDATE app_transactions SET status = $2, provider_reference = $3, failure_reason = $4, updated_at = $5
        WHERE id = $1 AND status = 'pending' RETURNING *`,
      [txn.id, result.ok ? 'paid' : 'failed', result.ok ? result.reference : null, result.ok ? null : result.reason, now],
    );
    const settled = rows[0];
    if (!settled) return null; // settled by another run already
    if (result.ok) {
      const usdCommission = settled.usd_amount_cents - settled.usd_developer_amount_cents;
      if (settled.usd_amount_cents > 0) {
        await postEntry(tx, {
          kind: 'charge',
          developerId: settled.developer_id,
          transactionId: settled.id,
          now,
          lines: [
            { account: 'platform:cash', debit: settled.usd_amount_cents },
            { account: 'platform:commission', credit: usdCommission },
            { account: 'developer:available', credit: settled.usd_developer_amount_cents },
          ],
        });
      }
      await tx.query(
        `UPDATE installations SET billing_status = 'active', updated_at = $2 WHERE id = $1 AND billing_status IN ('trialing', 'past_due')`,
        [settled.installation_id, now],
      );
    } else {
      await tx.query(`UPDATE installations SET billing_status = 'past_due', updated_at = $2 WHERE id = $1`, [settled.installation_id, now]);
    }
    return settled;
  });
}

interface Candidate {
  id: string;
  app_id: string;
  store_id: string;
  developer_id: string;
  billing_start_date: Date;
  pricing: { amount?: string; currency?: string; interval?: BillingInterval };
  commission_rate: string | null;
  /** The end of the latest paid (or pending) period of the installation; null before its first charge. */
  charged_until: Date | null;
}

/** C14.12: `pending_uninstall` becomes `uninstalled` once no paid period is running. */
async function finishPendingUninstalls(q: Queryable, now: Date, scope: Scope): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE installations i SET status = 'uninstalled', updated_at = $1
      WHERE i.status = 'pending_uninstall'
        AND ($2::uuid[] IS NULL OR i.app_id IN (SELECT id FROM apps WHERE developer_id = ANY($2::uuid[])))
        AND NOT EXISTS (SELECT 1 FROM app_transactions t WHERE t.installation_id = i.id AND t.status IN ('paid', 'pending') AND t.period_end > $1)`,
    [now, scope.developerIds ?? null],
  );
  return rowCount;
}

/**
 * The installations due a charge at $1: active, on a recurring price, past their trial, and no paid
 * or pending period covering now (e.g. a reinstall while it was still running). Callers add their
 * own conditions from $2 on.
 */
const DUE_INSTALLATIONS = `SELECT i.id, i.app_id, i.store_id, a.developer_id, i.billing_start_date, a.pricing, d.commission_rate::text AS commission_rate,
              s.email AS store_email,
              (SELECT max(t.period_end) FROM app_transactions t WHERE t.installation_id = i.id AND t.status IN ('paid', 'pending')) AS charged_until
         FROM installations i
         JOIN apps a ON a.id = i.app_id
         JOIN stores s ON s.id = i.store_id
         LEFT JOIN developer_accounts d ON d.developer_id = a.developer_id
        WHERE i.status = 'active' AND a.pricing->>'type' = 'recurring'
          AND i.billing_status IN ('trialing', 'active', 'past_due')
          AND i.billing_start_date <= $1
          AND NOT EXISTS (SELECT 1 FROM app_transactions t WHERE t.installation_id = i.id AND t.status IN ('paid', 'pending')
                            AND t.period_start <= $1 AND t.period_end > $1)`;

type DueInstallation = Candidate & { store_email: string };

/** A claimed charge, to be made through the provider once the claim is committed. */
export interface ClaimedCharge {
  txn: AppTransactionRow;
  storeEmail: string;
}

/**
 * Step 1 for one due installation, on `q` (the uninstall's transaction, or the pool): its period's
 * pending transaction, or null when there is nothing to charge (no readable price, no FX rate) or
 * the period was claimed already (one attempt per installation and period).
 */
async function claimCharge(deps: Deps, q: Queryable, c: DueInstallation, now: Date): Promise<ClaimedCharge | null> {
  let amountMinor: number | null = null;
  try {
    amountMinor = parseMoney(c.pricing.amount);
  } catch {
    amountMinor = null; // app-input.ts validates prices; an unreadable one is never charged
  }
  const currency = String(c.pricing.currency ?? 'USD').toUpperCase();
  const fxRate = fxRateFor(deps, currency);
  const period = chargePeriod(c, now);
  if (!amountMinor || amountMinor <= 0 || !period) return null;
  // C5.2 / C10.2: amounts are exact integers. A price past 2^53 - 1 minor units (app-input.ts
  // does not bound it) cannot be split exactly, and mulHalfEven refuses it with a throw that
  // used to end the whole run, so no installation after it was ever charged. Never charged.
  if (!Number.isSafeInteger(amountMinor) || (fxRate && !Number.isSafeInteger(mulHalfEven(amountMinor, fxRate)))) {
    deps.log.warn({ installationId: c.id, amount: c.pricing.amount, currency }, 'billing: price beyond exact minor units; charge skipped');
    return null;
  }
  if (!fxRate) {
    // No rate to roll the developer's share up to USD: not charged until one is configured.
    deps.log.warn({ installationId: c.id, currency }, 'billing: no SVC_FX_RATES entry for the currency; charge skipped');
    return null;
  }
  const txn = await openCharge(q, {
    installationId: c.id, appId: c.app_id, storeId: c.store_id, developerId: c.developer_id, amountMinor, currency,
    commissionRate: parseDecimal(c.commission_rate ?? deps.config.commissionRate), fxRate,
    periodStart: period.start, periodEnd: period.end,
  }, now);
  return txn ? { txn, storeEmail: c.store_email } : null;
}

/**
 * Steps 1 to 3 for every due installation (active, on a recurring price, past its trial, period
 * not yet charged), a batch at a time so that no claim waits long for its charge.
 */
async function chargeDueInstallations(deps: Deps, now: Date, scope: Scope): Promise<number> {
  let attempted = 0;
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const { rows } = await deps.db.query<DueInstallation>(
      `${DUE_INSTALLATIONS}
          AND i.id > $2 AND ($3::uuid[] IS NULL OR a.developer_id = ANY($3::uuid[]))
        ORDER BY i.id LIMIT ${BATCH}`,
      [now, after, scope.developerIds ?? null],
    );
    const claimed: ClaimedCharge[] = [];
    for (const c of rows) {
      try {
        const charge = await claimCharge(deps, deps.db, c, now);
        if (charge) claimed.push(charge);
      } catch (err) {
        // One installation's error must not leave every installation after it uncharged.
        deps.log.error({ err, installationId: c.id }, 'billing: claiming a charge failed; the others go on');
      }
    }
    for (const { txn, storeEmail } of claimed) await chargeClaimedSafely(deps, txn, storeEmail);
    attempted += claimed.length;
    if (rows.length < BATCH) break;
    after = rows[rows.length - 1].id;
  }
  return attempted;
}

/**
 * C10.1, C10.2 at uninstall, in its transaction (the installation locked, still `active`): the
 * period running now is claimed if it is due and was not charged yet. The job runs once a UTC day,
 * so an app installed after one run and removed before the next was never charged for the period
 * it was used in, and a reinstall (no second trial) made that a free app, day after day. The
 * period began while the app was active: it is charged once, as the job would have, and the
 * uninstall leaves the installation `pending_uninstall` until it ends. The caller charges the
 * claim through the provider after its commit (`chargeClaimedSafely`).
 */
export async function claimChargeAtUninstall(deps: Deps, tx: Queryable, installationId: string, now: Date): Promise<ClaimedCharge | null> {
  const { rows } = await tx.query<DueInstallation>(`${DUE_INSTALLATIONS} AND i.id = $2`, [now, installationId]);
  return rows[0] ? claimCharge(deps, tx, rows[0], now) : null;
}

/**
 * The period to charge at `now`: the one containing it, counted from the billing start date. When
 * that period would begin inside one already charged (the app moved from monthly to yearly pricing:
 * the year containing now began with a month already paid), the periods are counted from the end of
 * the charged time instead: counted from the start, the year would charge the paid month twice. In
 * steady state the two countings agree. Failed periods are not charged time (no money was taken):
 * the year may begin where a declined month began, a different period under the key of 0029.
 */
export function chargePeriod(c: Pick<Candidate, 'billing_start_date' | 'pricing' | 'charged_until'>, now: Date) {
  const interval: BillingInterval = c.pricing.interval === 'year' ? 'year' : 'month';
  const period = periodContaining(c.billing_start_date, interval, now);
  if (period && c.charged_until && period.start.getTime() < c.charged_until.getTime()) {
    return periodContaining(c.charged_until, interval, now);
  }
  return period;
}

/** Pending charges whose run died: claimed again (fresh lease) by exactly one run. */
async function reclaimStaleCharges(deps: Deps, now: Date, scope: Scope): Promise<AppTransactionRow[]> {
  return deps.db.transaction(async (tx) => {
    const { rows } = await tx.query<AppTransactionRow>(
      `UPDATE app_transactions SET claimed_at = $1, updated_at = $1
        WHERE id IN (SELECT id FROM app_transactions WHERE status = 'pending' AND claimed_at < $2
                        AND ($3::uuid[] IS NULL OR developer_id = ANY($3::uuid[]))
                      ORDER BY claimed_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
        RETURNING *`,
      [now, new Date(now.getTime() - CHARGE_LEASE_MS), scope.developerIds ?? null],
    );
    return rows;
  });
}

/** Step 2 for one claimed transaction, then step 3. A thrown provider error leaves it pending. */
export async function chargeClaimed(deps: Deps, txn: AppTransactionRow, storeEmail: string): Promise<AppTransactionRow | null> {
  let result: ProviderResult;
  try {
    result = await billingProviders(deps).payments.charge({
      idempotencyKey: txn.id,
      storeId: txn.store_id,
      storeEmail,
      amountIsoMinor: isoMinorUnits(txn.amount_cents, txn.currency),
      currency: txn.currency,
      description: `App subscription ${txn.period_start.toISOString().slice(0, 10)} to ${txn.period_end.toISOString().slice(0, 10)}`,
    });
  } catch (err) {
    deps.log.warn({ err, transactionId: txn.id }, 'billing: payment provider unavailable; the charge is retried after its lease');
    return null;
  }
  return settleCharge(deps, txn, result);
}

/** chargeClaimed whose error is logged, not thrown: the charge stays pending and is retried after its lease. */
export async function chargeClaimedSafely(deps: Deps, txn: AppTransactionRow, storeEmail: string): Promise<void> {
  try {
    await chargeClaimed(deps, txn, storeEmail);
  } catch (err) {
    deps.log.error({ err, transactionId: txn.id }, 'billing: recording a charge failed; it is retried after its lease');
  }
}

/** Limits a run to some developers' apps (tests and tooling); the job itself runs over everyone. */
export interface Scope {
  developerIds?: string[];
}

/** The job: finish ended uninstalls, charge every due installation once. `processed` = charges attempted + uninstalls finished. */
export async function runBillingCharges(deps: Deps, scope: Scope = {}): Promise<{ processed: number }> {
  const now = deps.clock.now();
  const finished = await finishPendingUninstalls(deps.db, now, scope);
  let attempted = await chargeDueInstallations(deps, now, scope);
  for (const txn of await reclaimStaleCharges(deps, now, scope)) {
    const { rows } = await deps.db.query<{ email: string }>('SELECT email FROM stores WHERE id = $1', [txn.store_id]);
    await chargeClaimedSafely(deps, txn, rows[0]?.email ?? '');
    attempted++;
  }
  return { processed: attempted + finished };
}
