// C13: a verified Stripe event becomes at most one subscription event in the outbox, in one
// transaction with the record that it was seen (C13.3: a repeated event id emits nothing again)
// and with what we know of the subscription (nothing is emitted after subscriptions/cancelled).
// Stripe sends events out of order: one that comes before its subscription's create is held and
// emitted right after it, and an update or failed charge older than what was applied is stale.
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { emit } from '../outbox/emit.js';
import { isUuid } from '../ids.js';
import { mapStripeEvent, planFactsOf, type SubscriptionFacts, type SubscriptionTopic } from './stripe-mapping.js';

export interface StripeOutcome {
  duplicate: boolean;
  topic: string | null;
  /** Why nothing was emitted for a new event. */
  ignored?: 'unmapped' | 'no_store' | 'subscription_cancelled' | 'awaiting_create' | 'stale';
}

interface KnownSubscription {
  store_id: string;
  order_id: string | null;
  customer_email: string | null;
  invoice_number: string | null;
  trial_end: number | null;
  cancelled_at: Date | null;
  /** Stripe's `created` of the newest event applied. */
  last_event_created: number | null;
}

/** The subscription's plan as its own events last said it (stripe_subscription_plans, C14.15). */
interface KnownPlan {
  plan_name: string | null;
  billing_interval: string | null;
  billing_interval_count: number | null;
  trial_end: number | null;
}

/**
 * app-api.md Subscription payload, each fact from this event or else from earlier ones. Also the
 * test delivery's sample (src/webhooks/samples.ts).
 */
export function subscriptionPayload(f: SubscriptionFacts, storeId: string, known: KnownSubscription | undefined, plan?: KnownPlan) {
  // An invoice does not say the trial's end (f.trialEnd undefined): what the subscription's events said.
  const trialEnd = f.trialEnd === undefined ? (known?.trial_end ?? plan?.trial_end ?? null) : f.trialEnd;
  const periodEnd = f.currentPeriodEnd ?? 0;
  return {
    // app-api.md: the order the subscription was created from, stable for its life. Once known, a
    // later event's metadata (editable at Stripe) does not change it.
    orderId: known?.order_id ?? f.orderId ?? '',
    invoiceId: f.invoiceId ?? known?.invoice_number ?? '',
    storeId,
    subscriptionId: f.subscriptionId,
    customerId: f.customerId ?? '',
    customerEmail: f.customerEmail ?? known?.customer_email ?? '',
    // An invoice's status is inferred (stripe-mapping.ts): one paid for a period inside the trial
    // (a trial's first invoice) leaves the subscription trialing, not active.
    status: f.trialEnd === undefined && f.status === 'active' && trialEnd !== null && periodEnd > 0 && periodEnd <= trialEnd ? 'trialing' : f.status,
    // An invoice of Stripe API basil or later names its price by id only: the plan and interval are
    // those the subscription's events gave, the line's description the last resort (C14.15).
    planName: f.planName ?? plan?.plan_name ?? f.planDescription ?? '',
    amount: f.amount ?? 0,
    currency: f.currency ?? '',
    billingInterval: f.billingInterval ?? plan?.billing_interval ?? '',
    billingIntervalCount: f.billingIntervalCount ?? plan?.billing_interval_count ?? 1,
    currentPeriodStart: f.currentPeriodStart ?? 0,
    currentPeriodEnd: f.currentPeriodEnd ?? 0,
    trialEnd,
  };
}

async function storeExists(q: Queryable, storeId: string | null | undefined): Promise<boolean> {
  if (!storeId || !isUuid(storeId)) return false;
  return (await q.query('SELECT 1 FROM stores WHERE id = $1', [storeId])).rows.length > 0;
}

export async function handleStripeEvent(deps: Deps, event: { id: string; type: string; created?: unknown; data: { object: any } }): Promise<StripeOutcome> {
  const facts = mapStripeEvent(event);
  const created = typeof event.created === 'number' && Number.isSafeInteger(event.created) ? event.created : null;
  return deps.db.transaction(async (tx) => {
    const seen = await tx.query(
      'INSERT INTO stripe_events (id, type, subscription_id, received_at) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING',
      [event.id, event.type, facts?.subscriptionId ?? null, deps.clock.now()],
    );
    if (!seen.rowCount) return { duplicate: true, topic: null };
    await rememberPlan(tx, event, created, deps.clock.now());
    if (!facts) return { duplicate: false, topic: null, ignored: 'unmapped' };

    // Events of one subscription are handled one at a time, so a cancel cannot cross an update,
    // and an early event cannot be held while its create is releasing the held ones.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`stripe-subscription:${facts.subscriptionId}`]);
    // Read once the lock is held, so the subscription's events are dated in the order they are
    // emitted (an update that waited for its create's lock was dated before the create).
    const now = deps.clock.now();
    const known = (await tx.query<KnownSubscription>('SELECT * FROM payment_subscriptions WHERE id = $1', [facts.subscriptionId])).rows[0];
    if (known?.cancelled_at) return { duplicate: false, topic: null, ignored: 'subscription_cancelled' };
    // app-api.md Subscription lifecycle: a subscription's events begin with subscriptions/create,
    // on its first successful charge, and payment_failed is a renewal's. A failed first charge of a
    // subscription nothing was emitted for yet (Stripe retries it; its success is the create) is no
    // event. Once the subscription is known, a failed charge is one whatever its billing reason (C13.2).
    if (facts.firstCharge && !known) return { duplicate: false, topic: null, ignored: 'unmapped' };
    const storeId = facts.storeId ?? known?.store_id ?? null;
    // A store named must be ours. An early event may name none at all (an invoice of an API version
    // without `subscription_details`, a subscription whose metadata was set after the event): it is
    // held like any early event, and its create, which names the store, tells whose it is.
    if (storeId !== null && !(await storeExists(tx, storeId))) return { duplicate: false, topic: null, ignored: 'no_store' };

    // Stripe does not keep its events in order: an update, renewal, failure or cancel can come before
    // the first invoice.paid. Acknowledged (Stripe never resends what it saw acknowledged) and held,
    // it is emitted right after the create, so the subscription's events still begin with it.
    if (!known && facts.topic !== 'subscriptions/create') {
      await tx.query(
        'INSERT INTO stripe_held_events (event_id, subscription_id, event_created, facts, received_at) VALUES ($1, $2, $3, $4, $5)',
        [event.id, facts.subscriptionId, created, JSON.stringify(facts), now],
      );
      return { duplicate: false, topic: null, ignored: 'awaiting_create' };
    }
    // A create naming no store: nothing can be emitted, and what it would release stays held (purged after 30 days).
    if (storeId === null) return { duplicate: false, topic: null, ignored: 'no_store' };
    const applied = await applyEvent(tx, event.id, facts, created, storeId, known, now);
    if (!known && applied.known) await releaseHeld(tx, facts.subscriptionId, applied.known, now);
    return applied.outcome;
  });
}

/**
 * Keeps what a subscription event (customer.subscription.created included, which emits nothing)
 * says of the plan, unless a newer event said it already: the invoices' topics read it (C14.15).
 */
async function rememberPlan(tx: Queryable, event: { type: string; data: { object: any } }, created: number | null, now: Date) {
  const plan = planFactsOf(event);
  if (!plan) return;
  await tx.query(
    `INSERT INTO stripe_subscription_plans (subscription_id, plan_name, billing_interval, billing_interval_count, trial_end, event_created, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (subscription_id) DO UPDATE SET plan_name = EXCLUDED.plan_name, billing_interval = EXCLUDED.billing_interval,
       billing_interval_count = EXCLUDED.billing_interval_count, trial_end = EXCLUDED.trial_end, event_created = EXCLUDED.event_created,
       updated_at = EXCLUDED.updated_at
     WHERE stripe_subscription_plans.event_created IS NULL OR EXCLUDED.event_created IS NULL
        OR EXCLUDED.event_created >= stripe_subscription_plans.event_created`,
    [plan.subscriptionId, plan.planName, plan.billingInterval, plan.billingIntervalCount, plan.trialEnd, created, now],
  );
}

/**
 * An event older (Stripe's `created`) than the newest one applied to its subscription. An update
 * or a failed charge reports a state the apps have since been told a newer one of (a failure after
 * the charge that recovered it, a status since changed): it emits nothing. A renewal is a charge
 * that happened, and the cancel ends the subscription: both still go out. Same second: not older.
 */
function isStale(topic: SubscriptionTopic, created: number | null, known: KnownSubscription | undefined): boolean {
  if (topic !== 'subscriptions/update' && topic !== 'subscriptions/payment_failed') return false;
  const last = known?.last_event_created ?? null;
  return created !== null && last !== null && created < last;
}

/** Emits the event's topic and records what it says; an older event changes no stored fact but the cancel. */
async function applyEvent(
  tx: Queryable, eventId: string, facts: SubscriptionFacts, created: number | null, storeId: string, known: KnownSubscription | undefined, now: Date,
): Promise<{ outcome: StripeOutcome; known?: KnownSubscription }> {
  if (isStale(facts.topic, created, known)) return { outcome: { duplicate: false, topic: null, ignored: 'stale' } };
  const plan = (await tx.query<KnownPlan>('SELECT * FROM stripe_subscription_plans WHERE subscription_id = $1', [facts.subscriptionId])).rows[0];
  const payload = subscriptionPayload(facts, storeId, known, plan);
  const last = known?.last_event_created ?? null;
  const newest = !known || last === null || created === null || created >= last;
  const kept = newest
    ? { order_id: payload.orderId, customer_email: payload.customerEmail, invoice_number: payload.invoiceId, trial_end: payload.trialEnd }
    : { order_id: known!.order_id ?? '', customer_email: known!.customer_email ?? '', invoice_number: known!.invoice_number ?? '', trial_end: known!.trial_end };
  const { rows } = await tx.query<KnownSubscription>(
    `INSERT INTO payment_subscriptions (id, store_id, order_id, customer_email, invoice_number, trial_end, cancelled_at, last_event_created, updated_at)
     VALUES ($1, $2, NULLIF($3, ''), NULLIF($4, ''), NULLIF($5, ''), $6, $7, $8, $9)
     ON CONFLICT (id) DO UPDATE SET store_id = EXCLUDED.store_id, order_id = EXCLUDED.order_id, customer_email = EXCLUDED.customer_email,
       invoice_number = EXCLUDED.invoice_number, trial_end = EXCLUDED.trial_end, cancelled_at = EXCLUDED.cancelled_at,
       last_event_created = GREATEST(payment_subscriptions.last_event_created, EXCLUDED.last_event_created), updated_at = EXCLUDED.updated_at
     RETURNING *`,
    [facts.subscriptionId, newest ? storeId : known!.store_id, kept.order_id, kept.customer_email, kept.invoice_number, kept.trial_end,
      facts.topic === 'subscriptions/cancelled' ? now : null, created, now],
  );
  await emit(tx, { storeId, topic: facts.topic, payload, now });
  await tx.query('UPDATE stripe_events SET topic = $2 WHERE id = $1', [eventId, facts.topic]);
  return { outcome: { duplicate: false, topic: facts.topic }, known: rows[0] };
}

/**
 * The create has landed: the events held for the subscription go out after it in the order Stripe
 * made them (then as they arrived), each as it would have had it come in order: one made before
 * the create (before the subscription started) is older than it and emits nothing, and nothing
 * follows a held cancel.
 */
async function releaseHeld(tx: Queryable, subscriptionId: string, known: KnownSubscription, now: Date) {
  const { rows } = await tx.query<{ event_id: string; event_created: number | null; facts: SubscriptionFacts; received_at: Date }>(
    'DELETE FROM stripe_held_events WHERE subscription_id = $1 RETURNING event_id, event_created, facts, received_at',
    [subscriptionId],
  );
  const order = (r: (typeof rows)[number]) => (r.event_created ?? Number.MAX_SAFE_INTEGER);
  rows.sort((a, b) => order(a) - order(b) || new Date(a.received_at).getTime() - new Date(b.received_at).getTime() || (a.event_id < b.event_id ? -1 : 1));
  let current = known;
  for (const { event_id, event_created, facts } of rows) {
    if (current.cancelled_at) break;
    const applied = await applyEvent(tx, event_id, facts, event_created, facts.storeId ?? current.store_id, current, now);
    current = applied.known ?? current;
  }
}
