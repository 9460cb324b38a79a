// The payment provider (charges merchants for app subscriptions, C10.2) and the payout provider
// (sends developers their money, C10.6), as interfaces with sandbox implementations. Both are
// called outside any database transaction (design.md) and must be idempotent per `idempotencyKey`:
// a call retried after a crash (the same transaction or payout id) must not move money twice.
import type { Deps } from '../deps.js';

export type ProviderResult = { ok: true; reference: string } | { ok: false; reason: string };

export interface ChargeRequest {
  /** The app transaction id: one charge per transaction, however often it is retried. */
  idempotencyKey: string;
  storeId: string;
  storeEmail: string;
  /**
   * In the currency's ISO 4217 minor units (yen for JPY, cents for USD, fils for KWD), as payment
   * processors take amounts; not the hundredths the platform keeps (currencies.ts isoMinorUnits).
   */
  amountIsoMinor: number;
  currency: string;
  description: string;
}

export interface PaymentProvider {
  /** Resolves with the outcome; throws only for a transient failure (the charge is retried later). */
  charge(request: ChargeRequest): Promise<ProviderResult>;
}

export type PayoutDestination =
  | { type: 'bank'; accountHolder: string; accountNumber: string; routingNumber: string }
  | { type: 'paypal'; email: string };

export interface PayoutRequest {
  /** The payout id. */
  idempotencyKey: string;
  developerId: string;
  /** In cents: payouts are in USD (C10.5), whose minor unit is the hundredth the ledger keeps. */
  amountMinor: number;
  currency: string;
  destination: PayoutDestination;
}

/**
 * What became of the payout under an idempotency key, once settled (`PayoutProvider.cancel`):
 * `cancelled`, nothing was sent and nothing will be under that key; `rejected`, a submit under it
 * was refused (nothing sent); `sent`, a submit under it was accepted and the money is on its way.
 */
export type PayoutSettlement = { state: 'cancelled' } | { state: 'rejected'; reason: string } | { state: 'sent'; reference: string };

export interface PayoutProvider {
  /** `ok` = submitted (in transit); `!ok` = irrecoverable; a throw = transient (retried later). */
  submit(request: PayoutRequest): Promise<ProviderResult>;
  /**
   * Settle the payout under `idempotencyKey` before the platform gives its amount back (C10.6,
   * C10.7): cancel it if it has not been sent, so that every later `submit` under the key answers
   * `!ok` (cancelled) and sends nothing; else say it was sent (with its reference) or rejected.
   * Idempotent per key, like `submit`. A throw = the provider cannot be reached: nothing is settled.
   * Optional: without it the platform cannot learn whether a payout whose dispatcher went silent was
   * sent, so it never fails one (the dispatcher's retries under the same key settle it instead).
   * Real payout APIs offer the pieces (cancel a payout not yet sent; look one up by the key or id it
   * was submitted under); an adapter maps them onto this. No real payout adapter exists yet.
   */
  cancel?(request: { idempotencyKey: string }): Promise<PayoutSettlement>;
}

/** The sandboxes keep their recent calls for inspection (tests), bounded for long-running processes. */
function record<T>(calls: T[], request: T): void {
  calls.push(request);
  if (calls.length > 10_000) calls.splice(0, calls.length - 10_000);
}

/**
 * Sandbox payments: every charge succeeds, except that a store whose email starts with `fail`
 * (e.g. `fail-card@example.com`) is declined, so a declined charge can be tried end to end.
 */
export class SandboxPaymentProvider implements PaymentProvider {
  readonly calls: ChargeRequest[] = [];
  private readonly outcomes = new Map<string, ProviderResult>();

  async charge(request: ChargeRequest): Promise<ProviderResult> {
    record(this.calls, request);
    const known = this.outcomes.get(request.idempotencyKey);
    if (known) return known;
    const result: ProviderResult = request.storeEmail.toLowerCase().startsWith('fail')
      ? { ok: false, reason: 'card_declined: the sandbox declines stores whose email starts with "fail"' }
      : { ok: true, reference: `sandbox_ch_${request.idempotencyKey}` };
    this.outcomes.set(request.idempotencyKey, result);
    return result;
  }
}

/**
 * Sandbox payouts (C10.6): a PayPal email starting with `fail` or the bank account number
 * `000000000` fails; anything else is submitted and gets an external reference. `cancel` settles a
 * key as a real provider does: a key never submitted is cancelled (a later submit under it is
 * refused), a submitted one answers what its submit answered. Neither awaits between reading and
 * writing a key's outcome, so a submit and a cancel of one key never interleave.
 */
export class SandboxPayoutProvider implements PayoutProvider {
  readonly calls: PayoutRequest[] = [];
  /** The keys `cancel` was asked to settle, for inspection (tests). */
  readonly cancels: string[] = [];
  private readonly outcomes = new Map<string, ProviderResult>();
  private readonly cancelled = new Set<string>();

  async submit(request: PayoutRequest): Promise<ProviderResult> {
    record(this.calls, request);
    const known = this.outcomes.get(request.idempotencyKey);
    if (known) return known;
    const d = request.destination;
    const failing = d.type === 'paypal' ? d.email.toLowerCase().startsWith('fail') : d.accountNumber === '000000000';
    const result: ProviderResult = failing
      ? { ok: false, reason: d.type === 'paypal' ? 'paypal_receiver_rejected: the sandbox rejects emails starting with "fail"' : 'bank_account_invalid: the sandbox rejects account 000000000' }
      : { ok: true, reference: `sandbox_${d.type === 'paypal' ? 'pp' : 'wire'}_${request.idempotencyKey}` };
    this.outcomes.set(request.idempotencyKey, result);
    return result;
  }

  async cancel(request: { idempotencyKey: string }): Promise<PayoutSettlement> {
    const key = request.idempotencyKey;
    record(this.cancels, key);
    const known = this.outcomes.get(key);
    if (!known) {
      this.cancelled.add(key);
      this.outcomes.set(key, { ok: false, reason: 'payout_cancelled: the payout was cancelled before it was sent' });
      return { state: 'cancelled' };
    }
    if (this.cancelled.has(key)) return { state: 'cancelled' };
    return known.ok ? { state: 'sent', reference: known.reference } : { state: 'rejected', reason: known.reason };
  }
}

export interface BillingProviders {
  payments: PaymentProvider;
  payouts: PayoutProvider;
}

/** The process-wide sandboxes (the default: no real provider is wired up yet). */
export const sandbox = { payments: new SandboxPaymentProvider(), payouts: new SandboxPayoutProvider() };

const overrides = new WeakMap<object, Partial<BillingProviders>>();

/** Replace a provider for one runtime (tests; a real provider when one is added). */
export function setBillingProviders(deps: Deps, providers: Partial<BillingProviders>): void {
  overrides.set(deps.config, { ...overrides.get(deps.config), ...providers });
}

export function billingProviders(deps: Deps): BillingProviders {
  const o = overrides.get(deps.config);
  return { payments: o?.payments ?? sandbox.payments, payouts: o?.payouts ?? sandbox.payouts };
}
