// Payout settlement (C10.6, C10.7, app-api.md "Payout status"): everything that happens to a payout
// after the sweep (payouts.ts) created it `pending`. The dispatcher moves it pending -> processing
// (claimed and committed) -> provider call outside any transaction -> in_transit or failed; the
// operator marks it paid or failed. Every move is a conditional UPDATE on the expected status, so no
// payout moves twice. A processing payout's amount goes back to the balance only once the payout
// provider has settled its idempotency key (cancelled, or rejected): a dispatcher may have sent it
// and died.
// Apart from the sweep because this is where money can leave twice: the dispatcher and the
// operator's fail share the provider settlement and the fail-with-refund (settleAtProvider,
// failPayoutWith) and must be read together, while the sweep only turns the ledger into payouts.
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { conflict, notFound, unavailable } from '../http/errors.js';
import { isUuid } from '../ids.js';
import { lockDeveloper, postEntry } from '../ledger/ledger.js';
import { billingProviders, type PayoutDestination, type PayoutSettlement, type ProviderResult } from '../billing/providers.js';
import { payoutDestination } from '../billing/developer-accounts.js';
import {
  lockPayout, markFailed, markInTransit, markPaid, markProcessing, payoutById, pickClaimable, recordMove, replaceFailureReason, type PayoutRow,
} from './payouts.repo.js';

/** A processing payout whose dispatcher has not reported back for this long is dispatched again. */
export const DISPATCH_LEASE_MS = 15 * 60 * 1000;
const BATCH = 20;

/**
 * Claim up to `limit` payouts: pending ones, and processing ones whose dispatcher went silent past
 * the lease. Row locks with SKIP LOCKED, committed at once: two dispatchers never claim one payout.
 */
export async function claimPayouts(deps: Deps, limit = BATCH, onlyDevelopers?: string[]): Promise<PayoutRow[]> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const picked = await pickClaimable(tx, new Date(now.getTime() - DISPATCH_LEASE_MS), limit, onlyDevelopers ?? null);
    if (!picked.length) return [];
    const rows = await markProcessing(tx, picked.map((p) => p.id), now);
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
    if (!(await markInTransit(tx, payout.id, payout.attempts, result.reference, now))) return 'lost' as const;
    await recordMove(tx, payout.id, 'processing', 'in_transit', now);
    return 'in_transit' as const;
  });
}

/** One claimed payout through the provider, and its answer recorded. */
async function dispatchOne(deps: Deps, payout: PayoutRow): Promise<'in_transit' | 'failed' | 'lost' | 'retry'> {
  let destination: PayoutDestination;
  try {
    destination = payoutDestination(deps, payout.payout_method);
  } catch (err) {
    // The method's snapshot cannot be read (e.g. sealed with a key the service no longer has). This
    // claim cannot call the provider: the payout fails and its amount returns to the balance, to be
    // paid by a later sweep with the developer's method as it is then (C10.6), unless an earlier
    // claim had sent it (failUnsendable asks the provider first).
    deps.log.error({ err, payoutId: payout.id }, 'payouts: payout method unreadable; the payout fails');
    return failUnsendable(deps, payout, 'payout_method_unreadable: the payout method could not be read; set it again');
  }
  let result: ProviderResult;
  try {
    result = await billingProviders(deps).payouts.submit({
      idempotencyKey: payout.id,
      developerId: payout.developer_id,
      amountMinor: payout.amount_cents,
      currency: payout.currency,
      destination,
    });
  } catch (err) {
    // Transient: the payout stays processing and is dispatched again after the lease.
    deps.log.warn({ err, payoutId: payout.id }, 'payouts: provider unavailable; retried after the lease');
    return 'retry';
  }
  const outcome = await recordDispatch(deps, payout, result);
  if (outcome === 'lost' && result.ok && !(await recordedAsSent(deps, payout.id, result.reference))) {
    // The provider took the payout but this claim no longer owns it (its lease passed and the
    // payout moved on). Money may have left twice: an operator must look (reference below).
    deps.log.error({ payoutId: payout.id, reference: result.reference }, 'payouts: the provider accepted a payout this dispatcher no longer owned');
  }
  return outcome;
}

/**
 * A claimed payout this dispatcher cannot send (its method unreadable) fails, its amount back to the
 * balance (C10.6). The first claim never called the provider, so that is exact. A later claim's
 * predecessor may have sent it and died before recording in_transit: the provider settles the key
 * first (settleAtProvider), and a payout it sent is recorded in_transit, not paid a second time.
 */
async function failUnsendable(deps: Deps, payout: PayoutRow, reason: string): Promise<'in_transit' | 'failed' | 'lost' | 'retry'> {
  if (payout.attempts <= 1) return recordDispatch(deps, payout, { ok: false, reason });
  const settled = await settleAtProvider(deps, payout.id);
  if (settled.state === 'sent') return recordDispatch(deps, payout, { ok: true, reference: settled.reference });
  if (settled.state === 'cancelled' || settled.state === 'rejected') return recordDispatch(deps, payout, { ok: false, reason });
  // Unsettled: it stays processing and is tried again after the lease.
  deps.log.error({ err: settled.state === 'unreachable' ? settled.error : undefined, payoutId: payout.id, settlement: settled.state },
    'payouts: an unsendable payout an earlier claim may have sent cannot be settled with the provider; retried after the lease');
  return 'retry';
}

/** Whether the payout is recorded as sent under this provider reference (by whichever claim or settlement). */
async function recordedAsSent(deps: Deps, payoutId: string, reference: string): Promise<boolean> {
  const current = await findPayout(deps.db, payoutId);
  return !!current && (current.status === 'in_transit' || current.status === 'paid') && current.external_reference === reference;
}

/** The dispatcher (C10.6): every claimable payout through the payout provider. */
export async function dispatchPayouts(deps: Deps, options: { developerIds?: string[] } = {}): Promise<{ dispatched: number; failed: number }> {
  let dispatched = 0;
  let failed = 0;
  for (;;) {
    const claimed = await claimPayouts(deps, BATCH, options.developerIds);
    if (!claimed.length) break;
    for (const payout of claimed) {
      // One payout's error never stops the run: the payouts claimed after it (and every later
      // batch) would otherwise wait, claimed, for a lease to pass, and the job would end in a throw.
      try {
        const outcome = await dispatchOne(deps, payout);
        if (outcome === 'in_transit') dispatched++;
        if (outcome === 'failed') failed++;
      } catch (err) {
        deps.log.error({ err, payoutId: payout.id }, 'payouts: recording a dispatch failed; the payout is retried after its lease');
      }
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
    const failed = await markFailed(tx, payoutId, reason, now);
    await postEntry(tx, {
      kind: 'payout_failed', developerId, payoutId, now,
      lines: [{ account: 'developer:in_flight', debit: payout.amount_cents }, { account: 'developer:available', credit: payout.amount_cents }],
    });
    await recordMove(tx, payoutId, payout.status, 'failed', now, reason);
    return failed;
  });
}

/**
 * The one read of a payout by id, for every caller here and in payouts.views.ts: ids reach it from
 * request paths, and a value that is not a UUID names no payout (on PostgreSQL, comparing it with
 * the uuid column would be an error, not an empty result).
 */
export async function findPayout(q: Queryable, payoutId: string): Promise<PayoutRow | null> {
  if (!isUuid(payoutId)) return null;
  return payoutById(q, payoutId);
}

/**
 * Whether a dispatcher may be calling the provider for this payout right now: it is processing and
 * its claim's lease has not passed. Its answer is not known yet, and it may well be "sent".
 */
export function beingDispatched(p: Pick<PayoutRow, 'status' | 'claimed_at'>, now: Date): boolean {
  return p.status === 'processing' && p.claimed_at !== null && p.claimed_at.getTime() > now.getTime() - DISPATCH_LEASE_MS;
}

/**
 * Whether a processing payout's dispatcher went silent: its claim's lease has passed (or it has no
 * claim). The provider may have sent it before the dispatcher died; only the provider can say.
 */
function silentlyProcessing(p: Pick<PayoutRow, 'status' | 'claimed_at'>, now: Date): boolean {
  return p.status === 'processing' && !beingDispatched(p, now);
}

/** What the payout provider settled for a payout's key, or why nothing was settled. */
type Settlement = PayoutSettlement | { state: 'unreachable'; error: unknown } | { state: 'unsupported' };

/**
 * Ask the payout provider to settle the payout's idempotency key (PayoutProvider.cancel): cancelled
 * or rejected, nothing was or will be sent under it, and the amount may go back to the balance;
 * sent, the money is on its way. Called outside any transaction, like every provider call.
 */
async function settleAtProvider(deps: Deps, payoutId: string): Promise<Settlement> {
  const provider = billingProviders(deps).payouts;
  if (!provider.cancel) return { state: 'unsupported' };
  try {
    return await provider.cancel({ idempotencyKey: payoutId });
  } catch (error) {
    return { state: 'unreachable', error };
  }
}

/**
 * The provider reports a silent dispatcher's payout as sent: record processing -> in_transit with
 * its reference, whichever claim is current (the key is one payout, however many claims called).
 * A dispatcher that records it first wins; either way the row that results is returned.
 */
async function recordSentAtSettlement(deps: Deps, payoutId: string, reference: string): Promise<PayoutRow | null> {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const current = await lockPayout(tx, payoutId);
    if (current?.status !== 'processing') return;
    await markInTransit(tx, payoutId, current.attempts, reference, now);
    await recordMove(tx, payoutId, 'processing', 'in_transit', now, 'the payout provider reported it sent when an operator failed it');
  });
  return findPayout(deps.db, payoutId);
}

/**
 * The operator fails a processing payout whose dispatcher went silent. The amount goes back to the
 * balance (and the next sweep pays those transactions again) only once the provider has settled
 * the payout's key as cancelled or rejected: a dispatcher whose provider call succeeded and that
 * died before recording in_transit left it processing, and failing it then paid the money twice.
 * Sent: it becomes in_transit and the fail is a 409 saying so (the operator decided on a payout
 * they took as unsent; from in_transit a fail means "the money came back", which is theirs to say
 * in a second request). Unreachable: 503, nothing changed. A provider that cannot settle: 409.
 */
async function failSilentDispatch(deps: Deps, payout: PayoutRow, reason: string): Promise<PayoutRow> {
  const settled = await settleAtProvider(deps, payout.id);
  if (settled.state === 'unsupported') {
    throw conflict('Payout is processing and its dispatcher went silent; the payout provider cannot confirm whether it was sent, so it is not failed (the dispatcher retries it under the same key and records what the provider answers)');
  }
  if (settled.state === 'unreachable') {
    deps.log.warn({ err: settled.error, payoutId: payout.id }, 'payouts: the provider could not settle a payout an operator is failing');
    throw unavailable('The payout provider could not be reached to settle whether this payout was sent; nothing changed; try again');
  }
  if (settled.state === 'sent') {
    const current = await recordSentAtSettlement(deps, payout.id, settled.reference);
    throw conflict(`The payout provider has sent this payout (reference ${settled.reference}); it is ${current?.status ?? 'gone'} now. Fail it from in_transit only if the money comes back`);
  }
  // Cancelled or rejected: nothing left, or will leave, under the payout's key, so a dispatcher that
  // claimed it meanwhile cannot send it; its claim does not hold the fail back.
  const failed = await failPayoutWith(deps, payout.developer_id, payout.id, reason, (p) => p.status === 'processing');
  if (failed) return failed;
  const current = await findPayout(deps.db, payout.id);
  // A dispatcher came in between: its send under the key just settled was refused, and it recorded
  // the failure (the amount back, once) before this could. The operator's fail holds; a cancellation
  // made by this very request is the operator's doing, so the reason shown is theirs.
  if (current?.status === 'failed') {
    return settled.state === 'cancelled' ? (await replaceFailureReason(deps.db, payout.id, reason, deps.clock.now())) ?? current : current;
  }
  throw conflict(`Payout is ${current?.status ?? 'gone'}; only pending, processing or in_transit payouts can fail`);
}

/**
 * C10.7 operator fail: from pending, processing or in_transit; else 409. Also 409 while a
 * dispatcher holds a live claim on a processing payout: failing it then returned the amount to the
 * balance while the provider might be sending it, and the next sweep paid the same transactions
 * again. Once the dispatcher reports (in_transit: the operator may fail it from there) the fail is
 * accepted; once its lease passes, only after the provider settled the key (failSilentDispatch).
 * A pending payout was never claimed, so never sent: its fail and a dispatcher's claim both lock
 * its row, and whichever comes second finds it moved (a claimed one is being dispatched: 409).
 */
export async function failPayout(deps: Deps, payoutId: string, reason: string, expectedStatus?: FailableStatus): Promise<PayoutRow> {
  const payout = await findPayout(deps.db, payoutId);
  if (!payout) throw notFound('Payout not found');
  const expects = (p: PayoutRow) => !expectedStatus || p.status === expectedStatus;
  if (silentlyProcessing(payout, deps.clock.now()) && expects(payout)) return failSilentDispatch(deps, payout, reason);
  let refused: PayoutRow | null = null;
  const failed = await failPayoutWith(deps, payout.developer_id, payoutId, reason, (p) => {
    // Never a processing payout here: one being dispatched is refused, a silent one is settled first.
    const ok = (p.status === 'pending' || p.status === 'in_transit') && expects(p);
    if (!ok) refused = p;
    return ok;
  });
  if (!failed) {
    const current: PayoutRow | null = refused ?? (await findPayout(deps.db, payoutId));
    // Failing returns the amount to the balance, which for an in_transit payout means "the money
    // came back": a fail the operator decided on a pending one must not be read that way once a
    // dispatcher has sent it meanwhile (the next sweep would pay the same transactions again).
    if (current && !expects(current)) {
      throw conflict(`Payout is ${current.status}, not ${expectedStatus} as expected; look at it again before failing it`);
    }
    if (current && beingDispatched(current, deps.clock.now())) {
      const until = new Date(current.claimed_at!.getTime() + DISPATCH_LEASE_MS).toISOString();
      throw conflict(`Payout is being sent to the payout provider; fail it once it is in_transit, or after ${until} if the dispatcher does not report`);
    }
    // Its dispatcher's lease passed between the read above and the lock: settle it as a silent one.
    if (current && silentlyProcessing(current, deps.clock.now())) return failSilentDispatch(deps, current, reason);
    throw conflict(`Payout is ${current?.status ?? 'gone'}; only pending, processing or in_transit payouts can fail`);
  }
  return failed;
}

/** The statuses an operator may fail a payout from (C10.7). */
export const FAILABLE_STATUSES = ['pending', 'processing', 'in_transit'] as const;
export type FailableStatus = (typeof FAILABLE_STATUSES)[number];

/** C10.7 mark-paid: in_transit -> paid with paidAt; any other state -> 409. */
export async function markPayoutPaid(deps: Deps, payoutId: string): Promise<PayoutRow> {
  const payout = await findPayout(deps.db, payoutId);
  if (!payout) throw notFound('Payout not found');
  const now = deps.clock.now();
  const paid = await deps.db.transaction(async (tx) => {
    await lockDeveloper(tx, payout.developer_id, now);
    const current = await lockPayout(tx, payoutId);
    if (!current || current.status !== 'in_transit') return { refused: current?.status ?? 'missing' };
    const row = await markPaid(tx, payoutId, now);
    await postEntry(tx, {
      kind: 'payout_paid', developerId: payout.developer_id, payoutId, now,
      lines: [{ account: 'developer:in_flight', debit: current.amount_cents }, { account: 'platform:cash', credit: current.amount_cents }],
    });
    await recordMove(tx, payoutId, 'in_transit', 'paid', now);
    return { row };
  });
  if ('refused' in paid) throw conflict(`Payout is ${paid.refused}; only an in_transit payout can be marked paid`);
  return paid.row;
}
