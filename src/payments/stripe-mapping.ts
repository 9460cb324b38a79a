// C13.2 and C14.15: which Stripe event becomes which subscription topic, and the facts of app-api.md's
// subscription payload that the event carries. Stripe has moved fields between API versions (the
// invoice's subscription under `parent.subscription_details`, periods onto subscription items), so
// each fact is looked for where either generation puts it.
import { INT4_MAX } from '../db/sql.js';

export type SubscriptionTopic =
  | 'subscriptions/create' | 'subscriptions/renew' | 'subscriptions/update' | 'subscriptions/payment_failed' | 'subscriptions/cancelled';

/** What one event says; absent facts are filled from what earlier events said (payment_subscriptions). */
export interface SubscriptionFacts {
  topic: SubscriptionTopic;
  subscriptionId: string;
  storeId: string | null;
  orderId: string | null;
  invoiceId: string | null;
  customerId: string | null;
  customerEmail: string | null;
  status: string;
  planName: string | null;
  /**
   * An invoice line's description: the plan's name when neither the line (Stripe API basil and
   * later names its price by id only) nor the subscription's own events said it (C14.15).
   */
  planDescription?: string | null;
  amount: number | null;
  currency: string | null;
  billingInterval: string | null;
  billingIntervalCount: number | null;
  currentPeriodStart: number | null;
  currentPeriodEnd: number | null;
  trialEnd: number | null | undefined;
  /**
   * A failed charge of the subscription's first invoice (`billing_reason` `subscription_create`):
   * no event while the subscription has not started (stripe.service.ts).
   */
  firstCharge?: boolean;
}

type Obj = Record<string, any>;

// Stripe's zero-decimal currencies: their amounts are already in major units.
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);

// Stripe's three-decimal currencies: amounts are in thousandths (5.124 KWD is 5124), so dividing
// by 100 made the payload's amount ten times too large (C14.15: minor units to major units).
const THREE_DECIMAL = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);

export function toMajorUnits(minor: number, currency: string): number {
  const code = currency.toLowerCase();
  if (ZERO_DECIMAL.has(code)) return minor;
  return Math.round(minor) / (THREE_DECIMAL.has(code) ? 1000 : 100);
}

const idOf = (v: unknown): string | null => (typeof v === 'string' ? v : v && typeof v === 'object' && typeof (v as Obj).id === 'string' ? (v as Obj).id : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/**
 * Stripe's numbers are whole: amounts in minor units, Unix seconds, counts. A value that is not a
 * safe integer is unknown (null), as a missing one: a signed event with `trial_end: 1.5` or `1e20`
 * reached a bigint column and failed the event with a 500, which Stripe retries for days.
 */
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) ? v : null);
/** A billing interval count or a quantity: a whole number from 1 that an integer column holds. */
const count = (v: unknown): number | null => {
  const n = int(v);
  return n !== null && n >= 1 && n <= INT4_MAX ? n : null;
};

function planNameOf(price: Obj | undefined, fallback?: unknown): string | null {
  return str(price?.nickname) ?? str(price?.product?.name) ?? str(fallback);
}

function fromInvoice(topic: SubscriptionTopic, invoice: Obj, paid: boolean): SubscriptionFacts | null {
  const details = invoice.parent?.subscription_details ?? invoice.subscription_details;
  const subscriptionId = idOf(invoice.subscription) ?? idOf(details?.subscription);
  if (!subscriptionId) return null;
  const metadata: Obj = details?.metadata ?? invoice.subscription?.metadata ?? {};
  const line: Obj | undefined = invoice.lines?.data?.[0];
  const price: Obj | undefined = typeof line?.price === 'object' && line.price ? line.price : line?.plan ?? undefined;
  const currency = str(invoice.currency)?.toLowerCase() ?? null;
  const minor = int(paid ? invoice.amount_paid : invoice.amount_due);
  return {
    topic,
    subscriptionId,
    storeId: str(metadata.storeId),
    orderId: str(metadata.orderId),
    invoiceId: str(invoice.number),
    customerId: idOf(invoice.customer),
    customerEmail: str(invoice.customer_email) ?? str(invoice.customer?.email),
    // The invoice does not carry the subscription's status; these are the states Stripe moves it to.
    status: paid ? 'active' : 'past_due',
    planName: planNameOf(price),
    planDescription: str(line?.description),
    amount: minor !== null && currency ? toMajorUnits(minor, currency) : null,
    currency,
    billingInterval: str(price?.recurring?.interval ?? price?.interval),
    billingIntervalCount: count(price?.recurring?.interval_count ?? price?.interval_count),
    currentPeriodStart: int(line?.period?.start) ?? int(invoice.period_start),
    currentPeriodEnd: int(line?.period?.end) ?? int(invoice.period_end),
    trialEnd: undefined,
  };
}

function fromSubscription(topic: SubscriptionTopic, sub: Obj): SubscriptionFacts | null {
  const subscriptionId = idOf(sub);
  if (!subscriptionId) return null;
  const metadata: Obj = sub.metadata ?? {};
  const item: Obj | undefined = sub.items?.data?.[0];
  const price: Obj | undefined = item?.price ?? item?.plan ?? sub.plan ?? undefined;
  const currency = str(price?.currency ?? sub.currency)?.toLowerCase() ?? null;
  const unit = int(price?.unit_amount ?? price?.amount);
  const quantity = count(item?.quantity ?? sub.quantity) ?? 1;
  const total = unit !== null && Number.isSafeInteger(unit * quantity) ? unit * quantity : null;
  const latestInvoice = sub.latest_invoice;
  return {
    topic,
    subscriptionId,
    storeId: str(metadata.storeId),
    orderId: str(metadata.orderId),
    invoiceId: latestInvoice && typeof latestInvoice === 'object' ? str(latestInvoice.number) : null,
    customerId: idOf(sub.customer),
    customerEmail: str(sub.customer?.email),
    status: str(sub.status) ?? (topic === 'subscriptions/cancelled' ? 'canceled' : 'active'),
    planName: planNameOf(price),
    amount: total !== null && currency ? toMajorUnits(total, currency) : null,
    currency,
    billingInterval: str(price?.recurring?.interval ?? price?.interval),
    billingIntervalCount: count(price?.recurring?.interval_count ?? price?.interval_count),
    currentPeriodStart: int(sub.current_period_start) ?? int(item?.current_period_start),
    currentPeriodEnd: int(sub.current_period_end) ?? int(item?.current_period_end),
    trialEnd: sub.trial_end === null ? null : int(sub.trial_end) ?? undefined,
  };
}

/** An item's plan as a comparable key: its price (or legacy plan) and its quantity. */
function planKey(items: unknown): string | null {
  const data = (items as Obj | undefined)?.data;
  if (!Array.isArray(data)) return null;
  return JSON.stringify(data.map((i: Obj) => [idOf(i?.price) ?? idOf(i?.plan), i?.quantity ?? null]));
}

/**
 * app-api.md's Events table: `subscriptions/update` is a change of plan, quantity or status (trial
 * to active is trialing -> active). Stripe also sends `customer.subscription.updated` for what is no
 * such change, above all at every renewal (the period rolls over and `latest_invoice` changes: the
 * renewal's event is `subscriptions/renew`), and for metadata or payment-method edits. Stripe names
 * what changed in `previous_attributes` (for `items`, the whole previous list); without it, the
 * event is taken as a change.
 */
function isSpecifiedChange(sub: Obj, previous: unknown): boolean {
  if (!previous || typeof previous !== 'object') return true;
  const before = previous as Obj;
  if ('status' in before || 'quantity' in before || 'plan' in before) return true;
  if (!('items' in before)) return false;
  const was = planKey(before.items);
  return was === null || was !== planKey(sub.items);
}

/** What a subscription object says of its plan (C14.15), kept for the invoices that cannot say it. */
export interface PlanFacts {
  subscriptionId: string;
  planName: string | null;
  billingInterval: string | null;
  billingIntervalCount: number | null;
  /** Unix seconds; null without a trial (or when the event does not say). */
  trialEnd: number | null;
}

/**
 * The plan of a `customer.subscription.*` event (created included, which maps to no topic): its
 * items carry the price in full, where an invoice of Stripe API 2025-03-31.basil and later names
 * it by id only; also its trial's end, which no invoice carries. Null for other events.
 */
export function planFactsOf(event: { type: string; data: { object: Obj } }): PlanFacts | null {
  if (typeof event.type !== 'string' || !event.type.startsWith('customer.subscription.')) return null;
  const facts = fromSubscription('subscriptions/update', event.data?.object ?? {});
  if (!facts) return null;
  const { subscriptionId, planName, billingInterval, billingIntervalCount, trialEnd } = facts;
  return { subscriptionId, planName, billingInterval, billingIntervalCount, trialEnd: trialEnd ?? null };
}

/** The topic and facts of a Stripe event, or null for events that map to no topic (acknowledged, ignored). */
export function mapStripeEvent(event: { type: string; data: { object: Obj; previous_attributes?: unknown } }): SubscriptionFacts | null {
  const object = event.data?.object ?? {};
  switch (event.type) {
    case 'invoice.paid':
      if (object.billing_reason === 'subscription_create') return fromInvoice('subscriptions/create', object, true);
      if (object.billing_reason === 'subscription_cycle') return fromInvoice('subscriptions/renew', object, true);
      return null;
    case 'invoice.payment_failed': {
      const facts = fromInvoice('subscriptions/payment_failed', object, false);
      return facts && { ...facts, firstCharge: object.billing_reason === 'subscription_create' };
    }
    case 'customer.subscription.updated':
      if (!isSpecifiedChange(object, event.data?.previous_attributes)) return null;
      return fromSubscription('subscriptions/update', object);
    case 'customer.subscription.deleted':
      return fromSubscription('subscriptions/cancelled', object);
    default:
      return null;
  }
}
