// Fan-out (C8.2): outbox events become one delivery per target, in one transaction per batch, so an
// event is either fully fanned out (and marked) or not at all. Events are claimed with SKIP LOCKED:
// several workers fan out different events side by side, never the same one twice.
import type { Queryable } from '../db/db.js';
import type { SecretBox } from '../crypto.js';
import type { Db } from '../db/db.js';
import { createDeliveries, type DeliverySource, type NewDelivery } from './deliveries.repo.js';
import { scopesAllowTopic } from './topics.js';

export const FANOUT_BATCH = 200;

export interface Target {
  source: DeliverySource;
  /** Subscription or store-webhook id; null for manifest webhooks. */
  target_id: string | null;
  app_id: string | null;
  store_id: string;
  topic: string;
  address: string;
  /** Sealed signing secret: the subscription's, the app's client secret (read now, C8.7), or the store webhook's. */
  secret_enc: string;
  /** The scopes the installation holds now (API subscriptions only; null for the other sources). */
  scopes: string[] | null;
}

/**
 * Every target of the given stores and topics: enabled API subscriptions and manifest webhooks of
 * active installations, and store-level webhooks. Exported for the GDPR workflow, whose topics go to
 * matching subscriptions as well as the app's gdprUrls.
 */
export async function findTargets(q: Queryable, storeIds: string[], topics: string[]): Promise<Target[]> {
  // Lists travel as JSON text: one form both drivers' named statements take.
  const { rows } = await q.query<Target>(
    `WITH stores AS (SELECT jsonb_array_elements_text($1::jsonb)::uuid AS id),
          topics AS (SELECT jsonb_array_elements_text($2::jsonb) AS topic)
     SELECT 'subscription' AS source, s.id AS target_id, s.app_id, s.store_id, s.topic, s.address, s.secret_enc, i.scopes
       FROM webhook_subscriptions s JOIN installations i ON i.id = s.installation_id AND i.status = 'active'
      WHERE s.enabled AND s.store_id IN (SELECT id FROM stores) AND s.topic IN (SELECT topic FROM topics)
     UNION ALL
     SELECT 'manifest', NULL, a.id, i.store_id, w->>'topic', w->>'uri', a.client_secret_enc, NULL::jsonb
       FROM installations i JOIN apps a ON a.id = i.app_id
       CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(a.extensions->'webhooks') = 'array'
                                                    THEN a.extensions->'webhooks' ELSE '[]'::jsonb END) w
      WHERE i.status = 'active' AND i.store_id IN (SELECT id FROM stores) AND w->>'topic' IN (SELECT topic FROM topics)
     UNION ALL
     SELECT 'store', sw.id, NULL, sw.store_id, sw.topic, sw.address, sw.secret_enc, NULL::jsonb
       FROM store_webhooks sw
      WHERE sw.store_id IN (SELECT id FROM stores) AND sw.topic IN (SELECT topic FROM topics)`,
    [JSON.stringify(storeIds), JSON.stringify(topics)],
    { name: 'webhook_targets' },
  );
  return rows;
}

/**
 * C6.4, C4.6: an API subscription needs the topic's read scope, and keeps needing it. A merchant who
 * re-authorises the app with fewer scopes (C4.1) withdraws that data: the subscription is kept but
 * receives nothing until the scope is granted again (as a subscription of an uninstalled app). Only
 * event topics are fanned out here; the GDPR workflow, which is owed to every app, has its own path.
 */
function holdsReadScope(t: Target, topic: string): boolean {
  return t.source !== 'subscription' || !t.scopes || scopesAllowTopic(t.scopes, topic);
}

interface EventRow {
  id: string;
  store_id: string;
  topic: string;
  payload: unknown;
}

/** Fan out one batch of outbox events; returns how many events were taken. */
export async function fanOutBatch(db: Db, secrets: SecretBox, now: () => Date, limit = FANOUT_BATCH): Promise<{ events: number; deliveries: number }> {
  // asyncCommit: a fan-out forgotten in a database crash takes its deliveries with it and is simply
  // done again (as the queue's own writes, src/db/db.ts asyncCommit). planOnce: PostgreSQL planned
  // the targets' query afresh on every pass (its lists are JSON parameters), which cost more than
  // running it (0.7 ms a pass, a pass per order under load).
  return db.transaction(async (tx) => {
    const { rows: events } = await tx.query<EventRow>(
      `SELECT id, store_id, topic, payload FROM events WHERE fanned_out_at IS NULL
       ORDER BY created_at LIMIT $1::int FOR UPDATE SKIP LOCKED`,
      [limit],
      { name: 'webhook_fanout_events' },
    );
    if (!events.length) return { events: 0, deliveries: 0 };
    const targets = await findTargets(tx, [...new Set(events.map((e) => e.store_id))], [...new Set(events.map((e) => e.topic))]);
    const byStoreTopic = new Map<string, Target[]>();
    for (const t of targets) {
      const key = `${t.store_id} ${t.topic}`;
      byStoreTopic.set(key, [...(byStoreTopic.get(key) ?? []), t]);
    }
    const specs: NewDelivery[] = [];
    for (const e of events) {
      const matching = byStoreTopic.get(`${e.store_id} ${e.topic}`);
      if (!matching) continue;
      // The body bytes are fixed here, once per event, and shared by its deliveries (C8.2).
      const body = JSON.stringify(e.payload);
      for (const t of matching) {
        if (!holdsReadScope(t, e.topic)) continue;
        specs.push({
          source: t.source, appId: t.app_id, storeId: e.store_id, topic: e.topic, address: t.address, body,
          secret: secrets.open(t.secret_enc), eventId: e.id,
          subscriptionId: t.source === 'subscription' ? t.target_id : null,
          storeWebhookId: t.source === 'store' ? t.target_id : null,
        });
      }
    }
    const at = now();
    await createDeliveries(tx, specs, at);
    await tx.query('UPDATE events SET fanned_out_at = $2 WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid)', [
      JSON.stringify(events.map((e) => e.id)), at,
    ], { name: 'webhook_fanout_done' });
    return { events: events.length, deliveries: specs.length };
  }, { planOnce: true, asyncCommit: true });
}
