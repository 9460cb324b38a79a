// C13: a verified Stripe event becomes at most one subscription event in the outbox, in one
// transaction with the record that it was seen (C13.3: a repeated event id emits nothing again)
// and with what we know of the subscription (nothing is emitted after subscriptions/cancelled).
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { emit } from '../outbox/emit.js';
import { isUuid } from '../ids.js';
import { mapStripeEvent, type SubscriptionFacts } from './stripe-mapping.js';

export interface StripeOutcome {
  duplicate: boolean;
  topic: string | null;
  /** Why nothing was emitted for a new event. */
  ignored?: 'unmapped' | 'no_store' | 'subscription_cancelled';
}

interface KnownSubscription {
  store_id: string;
  order_id: string | null;
  customer_email: string | null;
  invoice_number: string | null;
  trial_end: number | null;
  cancelled_at: Date | null;
}

/**
 * app-api.md Subscription payload, each fact from this event or else from earlier ones. Also the
 * test delivery's sample (src/webhooks/samples.ts).
 */
export function subscriptionPayload(f: SubscriptionFacts, storeId: string, known: KnownSubscription | undefined) {
  return {
    orderId: f.orderId ?? known?.order_id ?? '',
    invoiceId: f.invoiceId ?? known?.invoice_number ?? '',
    storeId,
    subscriptionId: f.subscriptionId,
    customerId: f.customerId ?? '',
    customerEmail: f.customerEmail ?? known?.customer_email ?? '',
    status: f.status,
    planName: f.planName ?? '',
    amount: f.amount ?? 0,
    currency: f.currency ?? '',
    billingInterval: f.billingInterval ?? '',
    billingIntervalCount: f.billingIntervalCount ?? 1,
    currentPeriodStart: f.currentPeriodStart ?? 0,
    currentPeriodEnd: f.currentPeriodEnd ?? 0,
    trialEnd: f.trialEnd === undefined ? known?.trial_end ?? null : f.trialEnd,
  };
}

async function storeExists(q: Queryable, storeId: string | null | undefined): Promise<boolean> {
  if (!storeId || !isUuid(storeId)) return false;
  return (await q.query('SELECT 1 FROM stores WHERE id = $1', [storeId])).rows.length > 0;
}

export async function handleStripeEvent(deps: Deps, event: { id: string; type: string; data: { object: any } }): Promise<StripeOutcome> {
  const facts = mapStripeEvent(event);
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const seen = await tx.query(
      'INSERT INTO stripe_events (id, type, subscription_id, received_at) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING',
      [event.id, event.type, facts?.subscriptionId ?? null, now],
    );
    if (!seen.rowCount) return { duplicate: true, topic: null };
    if (!facts) return { duplicate: false, topic: null, ignored: 'unmapped' };

    // Events of one subscription are handled one at a time, so a cancel cannot cross an update.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`stripe-subscription:${facts.subscriptionId}`]);
    const known = (await tx.query<KnownSubscription>('SELECT * FROM payment_subscriptions WHERE id = $1', [facts.subscriptionId])).rows[0];
    if (known?.cancelled_at) return { duplicate: false, topic: null, ignored: 'subscription_cancelled' };
    // app-api.md Subscription lifecycle: a subscription's events begin with subscriptions/create,
    // on its first successful charge, and payment_failed is a renewal's. A failed first charge of a
    // subscription nothing was emitted for yet (Stripe retries it; its success is the create) is no
    // event. Once the subscription is known, a failed charge is one whatever its billing reason (C13.2).
    if (facts.firstCharge && !known) return { duplicate: false, topic: null, ignored: 'unmapped' };
    const storeId = facts.storeId ?? known?.store_id;
    if (!(await storeExists(tx, storeId))) return { duplicate: false, topic: null, ignored: 'no_store' };

    const payload = subscriptionPayload(facts, storeId!, known);
    await tx.query(
      `INSERT INTO payment_subscriptions (id, store_id, order_id, customer_email, invoice_number, trial_end, cancelled_at, updated_at)
       VALUES ($1, $2, NULLIF($3, ''), NULLIF($4, ''), NULLIF($5, ''), $6, $7, $8)
       ON CONFLICT (id) DO UPDATE SET store_id = EXCLUDED.store_id, order_id = EXCLUDED.order_id, customer_email = EXCLUDED.customer_email,
         invoice_number = EXCLUDED.invoice_number, trial_end = EXCLUDED.trial_end, cancelled_at = EXCLUDED.cancelled_at, updated_at = EXCLUDED.updated_at`,
      [facts.subscriptionId, storeId, payload.orderId, payload.customerEmail, payload.invoiceId, payload.trialEnd,
        facts.topic === 'subscriptions/cancelled' ? now : null, now],
    );
    await emit(tx, { storeId: storeId!, topic: facts.topic, payload, now });
    await tx.query('UPDATE stripe_events SET topic = $2 WHERE id = $1', [event.id, facts.topic]);
    return { duplicate: false, topic: facts.topic };
  });
}
