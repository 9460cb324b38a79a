// The double-entry ledger (C10.3), in USD cents. A developer's figures are always derived from
// postings, never kept as a mutable number. Accounts and what moves them:
//
//   charge          Dr platform:cash            Cr platform:commission + developer:available
//   payout_created  Dr developer:available      Cr developer:in_flight      (sweep)
//   payout_failed   Dr developer:in_flight      Cr developer:available      (amount returned)
//   payout_paid     Dr developer:in_flight      Cr platform:cash            (money left)
//
// so available = earned - inFlight - paidOut, which is the `balance` of app-api.md's Earnings.
// The database refuses an entry that does not balance (migration 0005).
import type { Queryable, Tx } from '../db/db.js';
import { uuidv7 } from '../ids.js';

export type Account = 'platform:cash' | 'platform:commission' | 'developer:available' | 'developer:in_flight';
export type EntryKind = 'charge' | 'payout_created' | 'payout_failed' | 'payout_paid';

export interface Line {
  account: Account;
  debit?: number;
  credit?: number;
}

export interface Entry {
  kind: EntryKind;
  developerId: string;
  transactionId?: string;
  payoutId?: string;
  lines: Line[];
  now: Date;
}

/** Writes one entry and its lines in the caller's transaction; zero lines are left out. */
export async function postEntry(tx: Tx, entry: Entry): Promise<string> {
  const lines = entry.lines.filter((l) => (l.debit ?? 0) > 0 || (l.credit ?? 0) > 0);
  const id = uuidv7();
  await tx.query(
    'INSERT INTO journal_entries (id, kind, developer_id, transaction_id, payout_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
    [id, entry.kind, entry.developerId, entry.transactionId ?? null, entry.payoutId ?? null, entry.now],
  );
  const params: unknown[] = [id];
  const values = lines.map((l) => {
    params.push(l.account, l.account.startsWith('developer:') ? entry.developerId : null, l.debit ?? 0, l.credit ?? 0);
    const n = params.length;
    return `($1, $${n - 3}, $${n - 2}::uuid, $${n - 1}::bigint, $${n}::bigint)`;
  });
  if (values.length) {
    await tx.query(`INSERT INTO journal_lines (entry_id, account, developer_id, debit_cents, credit_cents) VALUES ${values.join(', ')}`, params);
  }
  return id;
}

/**
 * A developer's figures in USD cents, from postings only. BigInt: each posting is an exact number,
 * but their sums pass 2^53 (eleven charges at the largest price), where a number drops cents.
 */
export interface DeveloperLedger {
  /** Credits to developer:available from charges: the developer's share of paid transactions. */
  earned: bigint;
  /** Debits to developer:in_flight by payout_paid entries. */
  paidOut: bigint;
  /** Credit balance of developer:in_flight: payouts pending, processing or in transit. */
  inFlight: bigint;
  /** Credit balance of developer:available: the `balance`. */
  available: bigint;
}

export async function developerLedger(q: Queryable, developerId: string): Promise<DeveloperLedger> {
  // Sums come back as numeric text (never cast to int8, which would also overflow past 2^63).
  const { rows } = await q.query<Record<keyof DeveloperLedger, string>>(
    `SELECT
       coalesce(sum(l.credit_cents) FILTER (WHERE l.account = 'developer:available' AND e.kind = 'charge'), 0)::text AS earned,
       coalesce(sum(l.debit_cents) FILTER (WHERE l.account = 'developer:in_flight' AND e.kind = 'payout_paid'), 0)::text AS "paidOut",
       coalesce(sum(l.credit_cents - l.debit_cents) FILTER (WHERE l.account = 'developer:in_flight'), 0)::text AS "inFlight",
       coalesce(sum(l.credit_cents - l.debit_cents) FILTER (WHERE l.account = 'developer:available'), 0)::text AS available
     FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
     WHERE l.developer_id = $1`,
    [developerId],
  );
  const r = rows[0];
  return { earned: BigInt(r.earned), paidOut: BigInt(r.paidOut), inFlight: BigInt(r.inFlight), available: BigInt(r.available) };
}

/**
 * Create the developer's account row if needed and lock it for the rest of the transaction. Every
 * transaction that posts to a developer's accounts or changes which transactions a payout covers
 * takes this lock first, so their reads of the ledger and of the transactions agree.
 */
export async function lockDeveloper<T = Record<string, any>>(tx: Tx, developerId: string, now: Date): Promise<T> {
  await tx.query(
    'INSERT INTO developer_accounts (developer_id, created_at, updated_at) VALUES ($1, $2, $2) ON CONFLICT (developer_id) DO NOTHING',
    [developerId, now],
  );
  const { rows } = await tx.query<T>('SELECT * FROM developer_accounts WHERE developer_id = $1 FOR UPDATE', [developerId]);
  return rows[0];
}
