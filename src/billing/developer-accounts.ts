// A developer's payout method (C10.4, C14.12) and the operator's per-developer settings: payout
// schedule, minimum payout and commission rate (C10.4 `PATCH /apps/admin/developers/{id}`).
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { badRequest, notFound } from '../http/errors.js';
import { isUuid } from '../ids.js';
import { longerThan } from '../text.js';
import { EMAIL_SHAPE, keptEmail, MAX_EMAIL_CHARS } from '../email.js';
import { formatMinor, parseMoney } from '../money.js';
import { PAYOUT_SCHEDULES, nextInstant, type PayoutSchedule } from './schedule.js';
import { decimalText, parseDecimal } from './money-math.js';
import type { PayoutDestination } from './providers.js';

export const DEFAULT_MINIMUM_PAYOUT_CENTS = 2500;

export type StoredPayoutMethod =
  | { type: 'paypal'; email: string }
  | { type: 'bank'; accountHolder: string; routingNumber: string; accountNumberEnc: string; accountLast4: string };

export interface DeveloperAccountRow {
  developer_id: string;
  payout_schedule: PayoutSchedule;
  minimum_payout_cents: number;
  commission_rate: string | null;
  payout_method: StoredPayoutMethod | null;
  payout_method_updated_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The account row, or the defaults when the developer has none yet. */
export async function developerAccount(q: Queryable, developerId: string): Promise<DeveloperAccountRow & { user_created_at: Date }> {
  const { rows } = await q.query<DeveloperAccountRow & { user_created_at: Date }>(
    `SELECT u.id AS developer_id, u.created_at AS user_created_at,
            coalesce(d.payout_schedule, 'monthly') AS payout_schedule,
            coalesce(d.minimum_payout_cents, ${DEFAULT_MINIMUM_PAYOUT_CENTS}) AS minimum_payout_cents,
            d.commission_rate::text AS commission_rate, d.payout_method, d.payout_method_updated_at,
            coalesce(d.created_at, u.created_at) AS created_at, coalesce(d.updated_at, u.created_at) AS updated_at
       FROM users u LEFT JOIN developer_accounts d ON d.developer_id = u.id
      WHERE u.id = $1`,
    [developerId],
  );
  if (!rows[0]) throw notFound('Developer not found');
  return rows[0];
}

export function payoutMethodView(method: StoredPayoutMethod | null, updatedAt: Date | null = null) {
  if (!method) return null;
  const at = updatedAt?.toISOString() ?? null;
  if (method.type === 'paypal') return { type: 'paypal' as const, email: method.email, updatedAt: at };
  return {
    type: 'bank' as const,
    accountHolder: method.accountHolder,
    accountNumber: `*****${method.accountLast4}`,
    routingNumber: method.routingNumber,
    updatedAt: at,
  };
}

/** The provider's view of a stored method (the account number decrypted). */
export function payoutDestination(deps: Deps, method: StoredPayoutMethod): PayoutDestination {
  if (method.type === 'paypal') return { type: 'paypal', email: method.email };
  return { type: 'bank', accountHolder: method.accountHolder, accountNumber: deps.secrets.open(method.accountNumberEnc), routingNumber: method.routingNumber };
}

/** Longest account holder name kept (a PayPal email: MAX_EMAIL_CHARS): the snapshot is copied onto every payout. */
export const MAX_HOLDER_LENGTH = 255;

function text(body: Record<string, unknown>, field: string, max: number, pattern?: RegExp, hint?: string): string {
  const value = body[field];
  if (typeof value !== 'string' || !value.trim()) throw badRequest(`${field} is required`);
  const trimmed = value.trim();
  // Unbounded, a method of up to the 1 MB body limit was stored, shown, and copied into every payout.
  if (longerThan(trimmed, max)) throw badRequest(`${field} is at most ${max} characters`);
  if (pattern && !pattern.test(trimmed)) throw badRequest(`${field} ${hint}`);
  return trimmed;
}

/** C10.4 `PUT /apps/developer/payout-method`. The bank account number is stored encrypted. */
export async function putPayoutMethod(deps: Deps, developerId: string, body: Record<string, unknown>) {
  let method: StoredPayoutMethod;
  if (body.type === 'paypal') {
    const email = keptEmail(text(body, 'email', MAX_EMAIL_CHARS, EMAIL_SHAPE, 'must be an email address'), (max) => badRequest(`email is at most ${max} characters`));
    method = { type: 'paypal', email };
  } else if (body.type === 'bank') {
    const accountNumber = text(body, 'accountNumber', Infinity, /^[0-9A-Za-z]{4,34}$/, 'must be 4 to 34 letters or digits');
    method = {
      type: 'bank',
      accountHolder: text(body, 'accountHolder', MAX_HOLDER_LENGTH),
      routingNumber: text(body, 'routingNumber', Infinity, /^[0-9A-Za-z]{4,15}$/, 'must be 4 to 15 letters or digits'),
      accountNumberEnc: deps.secrets.seal(accountNumber),
      accountLast4: accountNumber.slice(-4),
    };
  } else {
    throw badRequest('type must be bank or paypal');
  }
  const now = deps.clock.now();
  await deps.db.query(
    `INSERT INTO developer_accounts (developer_id, payout_method, payout_method_updated_at, created_at, updated_at)
     VALUES ($1, $2, $3, $3, $3)
     ON CONFLICT (developer_id) DO UPDATE SET payout_method = EXCLUDED.payout_method,
       payout_method_updated_at = EXCLUDED.payout_method_updated_at, updated_at = EXCLUDED.updated_at`,
    [developerId, JSON.stringify(method), now],
  );
  return { payoutMethod: payoutMethodView(method, now) };
}

export async function getPayoutMethod(deps: Deps, developerId: string) {
  const account = await developerAccount(deps.db, developerId);
  return { payoutMethod: payoutMethodView(account.payout_method, account.payout_method_updated_at) };
}

/** `nextPayoutAt` (C14.12): the next sweep instant, null without a payout method. */
export function nextPayoutAt(account: Pick<DeveloperAccountRow, 'payout_method' | 'payout_schedule'> & { user_created_at: Date }, now: Date): string | null {
  if (!account.payout_method) return null;
  return nextInstant(account.payout_schedule, account.user_created_at, now).toISOString();
}

export function developerSettingsView(account: DeveloperAccountRow & { user_created_at: Date }, now: Date) {
  return {
    developerId: account.developer_id,
    payoutSchedule: account.payout_schedule,
    minimumPayoutAmount: formatMinor(Number(account.minimum_payout_cents)),
    currency: 'USD' as const,
    commissionRate: account.commission_rate === null ? null : Number(account.commission_rate),
    payoutMethod: payoutMethodView(account.payout_method, account.payout_method_updated_at),
    nextPayoutAt: nextPayoutAt(account, now),
  };
}

/** C10.4 / C14.12: the operator sets a developer's schedule, minimum and commission rate. */
/** A developer is a user who may own apps (MERCHANT or PARTNER); anything else is 404. */
async function requireDeveloper(deps: Deps, developerId: string): Promise<void> {
  if (!isUuid(developerId)) throw notFound('Developer not found');
  const { rows } = await deps.db.query<{ role: string }>('SELECT role FROM users WHERE id = $1', [developerId]);
  if (!rows[0] || !['MERCHANT', 'PARTNER'].includes(rows[0].role)) throw notFound('Developer not found');
}

export async function patchDeveloper(deps: Deps, developerId: string, body: Record<string, unknown>) {
  await requireDeveloper(deps, developerId);

  const sets: string[] = [];
  const params: unknown[] = [];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length + 2}`);
  };
  if (body.payoutSchedule !== undefined) {
    if (!PAYOUT_SCHEDULES.includes(body.payoutSchedule as PayoutSchedule)) throw badRequest(`payoutSchedule must be one of ${PAYOUT_SCHEDULES.join(', ')}`);
    set('payout_schedule', body.payoutSchedule);
  }
  if (body.minimumPayoutAmount !== undefined) {
    let cents: number | null = null;
    const raw = body.minimumPayoutAmount;
    try {
      // C5.2: at most two decimals and exact (parseMoney refuses 25.999 and amounts past 2^53 cents).
      cents = parseMoney(raw);
    } catch {
      cents = null;
    }
    // Past 2^53 - 1 cents the amount is no longer exact (and past bigint it was a 500): refused.
    if (cents === null || cents < 0) throw badRequest('minimumPayoutAmount must be a non-negative amount such as "25.00"');
    set('minimum_payout_cents', cents);
  }
  if (body.commissionRate !== undefined) {
    if (body.commissionRate === null) set('commission_rate', null);
    else {
      const rate = body.commissionRate;
      if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0 || rate > 1) throw badRequest('commissionRate must be a number from 0 to 1, or null for the platform rate');
      set('commission_rate', decimalText(parseDecimal(rate)));
    }
  }
  if (!sets.length) throw badRequest('Nothing to change: send payoutSchedule, minimumPayoutAmount or commissionRate');
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await tx.query('INSERT INTO developer_accounts (developer_id, created_at, updated_at) VALUES ($1, $2, $2) ON CONFLICT (developer_id) DO NOTHING', [developerId, now]);
    await tx.query(`UPDATE developer_accounts SET ${sets.join(', ')}, updated_at = $2 WHERE developer_id = $1`, [developerId, now, ...params]);
  });
  return { developer: developerSettingsView(await developerAccount(deps.db, developerId), now) };
}

export async function getDeveloper(deps: Deps, developerId: string) {
  await requireDeveloper(deps, developerId);
  return { developer: developerSettingsView(await developerAccount(deps.db, developerId), deps.clock.now()) };
}
