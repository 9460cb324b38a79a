// Fan-out (C8.2): outbox events become one delivery per target, in one transaction per batch, so an
// event is either fully fanned out (and marked) or not at all. Events are claimed with SKIP LOCKED:
// several workers fan out different events side by side, never the same one twice.
import type { Queryable } from '../db/db.js';
import type { SecretBox } from '../crypto.js';
import type { Db } from '../db/db.js';
import { APP_KEYED_SOURCES, createDeliveries, type DeliverySource, type NewDelivery } from './deliveries.repo.js';
import { appTargetTakesTopic } from './topics.js';

export const FANOUT_BATCH = 200;
/**
 * Body bytes one batch fans out at most (payload size times deliveries, summed; C8.2). 200 events
 * of an order or product body near the 1 MiB request limit, with a few targets each, made one
 * batch and one transaction of hundreds of MB. A batch within this holds a few times it in the
 * process at most (payloads, their bodies, the statement's JSON).
 */
export const FANOUT_BUDGET_BYTES = 16 * 1024 * 1024;
/**
 * The claim brings the payloads along while all its payloads come to at most this share of the
 * budget (one round trip, the usual case); a larger claim brings sizes only, and the payloads of
 * the batch kept are read in a second statement, so a pass never reads more than this share in
 * payloads it does not send (many targets an event make the cut shorter than the claim).
 */
const EAGER_SHARE = 8;

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
  /** The scopes the installation holds now (API subscriptions and manifest webhooks; null for store webhooks). */
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
     SELECT 'manifest', NULL, a.id, i.store_id, w->>'topic', w->>'uri', a.client_secret_enc, i.scopes
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
 * C6.4, C4.6, app-api.md Scopes and Rules 2: an app's target, API subscription or manifest webhook,
 * needs the topic's read scope, and keeps needing it (`appTargetTakesTopic`, which also lets
 * `orders/create` reach shipping apps). A merchant who re-authorises the app with fewer scopes (C4.1)
 * withdraws that data: the target is kept but receives nothing until the scope is granted again (as
 * one of an uninstalled app). Only event topics are fanned out here; the GDPR workflow, which is owed
 * to every app, has its own path (findTargets without this filter).
 */
function holdsReadScope(t: Target, topic: string): boolean {
  return appTargetTakesTopic(t.source, t.scopes, topic);
}

interface EventRow {
  id: string;
  store_id: string;
  topic: string;
  /** The payload's size (its jsonb, detoasted): what its body costs, per delivery. */
  bytes: number;
  /** Loaded with the claim only while the batch is small (EAGER_SHARE); else read once the cut is known. */
  loaded: boolean;
  payload: unknown;
}

export interface FanOutOptions {
  /** Events claimed at most. */
  limit?: number;
  /** Body bytes a batch fans out at most: each event's payload size times its deliveries, summed. */
  budgetBytes?: number;
  /** Told of each target whose sealed secret could not be opened (see `openSecretOf`); logged by the worker. */
  onUnreadableSecret?: (target: Pick<Target, 'source' | 'target_id' | 'app_id' | 'store_id' | 'topic'>, err: unknown) => void;
}

/**
 * A target's signing secret, opened. One that cannot be opened (a row sealed under another
 * SVC_SECRET, restored from elsewhere) must not throw: the whole batch would roll back, the same
 * oldest events would be claimed again on every pass, and no store's webhooks would go out. An
 * app-keyed target (APP_KEYED_SOURCES: its deliveries are signed at each attempt) gets its delivery
 * unsigned (null), whose attempts then say `signing_key_unreadable` in its log until the app's secret
 * opens (a rotation mends it); a target with its own secret is skipped. Either way it is reported.
 */
function openSecretOf(secrets: SecretBox, t: Target, options: FanOutOptions): { secret: string | null } | null {
  try {
    return { secret: secrets.open(t.secret_enc) };
  } catch (err) {
    options.onUnreadableSecret?.({ source: t.source, target_id: t.target_id, app_id: t.app_id, store_id: t.store_id, topic: t.topic }, err);
    return (APP_KEYED_SOURCES as readonly string[]).includes(t.source) ? { secret: null } : null;
  }
}

export interface FanOutResult {
  /** Events fanned out (and marked). */
  events: number;
  deliveries: number;
  /** The batch's weight: payload bytes times deliveries, summed (at most the budget, unless one event alone is over it). */
  bytes: number;
  /** Events may be left: the claim was full, or the budget cut it. */
  more: boolean;
}

/**
 * Fan out one batch of outbox events, oldest first, bounded by count (`limit`) and by bytes
 * (`budgetBytes`, C8.2). Events are claimed with their sizes; the batch is the longest prefix whose
 * payload bytes times deliveries fit the budget, always at least one event, so an event over the
 * budget still goes out, alone. The rest of the claim is left untouched (its locks end with the
 * transaction) for the next pass: `more` tells the caller to loop.
 */
export async function fanOutBatch(db: Db, secrets: SecretBox, now: () => Date, options: FanOutOptions = {}): Promise<FanOutResult> {
  const limit = options.limit ?? FANOUT_BATCH;
  const budget = options.budgetBytes ?? FANOUT_BUDGET_BYTES;
  // asyncCommit: a fan-out forgotten in a database crash takes its deliveries with it and is simply
  // done again (as the queue's own writes, src/db/db.ts asyncCommit). planOnce: PostgreSQL planned
  // the targets' query afresh on every pass (its lists are JSON parameters), which cost more than
  // running it (0.7 ms a pass, a pass per order under load).
  return db.transaction(async (tx) => {
    // Sizes come with the claim, and so do the payloads while the whole claim is small (the usual
    // case: one round trip, as before). The size is the detoasted jsonb's (`#> '{}'` returns the
    // document itself): it costs a decompression, where `octet_length(payload::text)` also printed
    // every document (measured: 2.5 against 10 µs an event of 3 KB). It is within a small factor
    // of the JSON text (escaped characters are longer in text), which is all a budget needs.
    const { rows: events } = await tx.query<EventRow>(
      `WITH claimed AS (
         SELECT id, store_id, topic, created_at, payload FROM events WHERE fanned_out_at IS NULL
         ORDER BY created_at LIMIT $1::int FOR UPDATE SKIP LOCKED
       ), sized AS (
         SELECT *, coalesce(pg_column_size(payload #> '{}'), pg_column_size(payload)) AS bytes FROM claimed
       ), ranked AS (
         SELECT *, sum(bytes) OVER () <= $2::float8 AS loaded FROM sized
       )
       SELECT id, store_id, topic, bytes::float8 AS bytes, loaded, CASE WHEN loaded THEN payload END AS payload
       FROM ranked ORDER BY created_at, id`,
      [limit, budget / EAGER_SHARE],
      { name: 'webhook_fanout_claim' },
    );
    if (!events.length) return { events: 0, deliveries: 0, bytes: 0, more: false };
    const targets = await findTargets(tx, [...new Set(events.map((e) => e.store_id))], [...new Set(events.map((e) => e.topic))]);
    const byStoreTopic = new Map<string, Target[]>();
    for (const t of targets) {
      const key = `${t.store_id} ${t.topic}`;
      byStoreTopic.set(key, [...(byStoreTopic.get(key) ?? []), t]);
    }
    // The cut: the longest prefix within the budget, at least one event. An event without targets
    // weighs nothing (it is only marked, its payload never read).
    const batch: { e: EventRow; targets: Target[] }[] = [];
    let spent = 0;
    for (const e of events) {
      const matching = (byStoreTopic.get(`${e.store_id} ${e.topic}`) ?? []).filter((t) => holdsReadScope(t, e.topic));
      const weight = e.bytes * matching.length;
      if (batch.length && spent + weight > budget) break;
      spent += weight;
      batch.push({ e, targets: matching });
    }
    const unread = batch.filter((b) => b.targets.length && !b.e.loaded).map((b) => b.e);
    if (unread.length) {
      const { rows } = await tx.query<{ id: string; payload: unknown }>(
        'SELECT id, payload FROM events WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid)',
        [JSON.stringify(unread.map((e) => e.id))],
        { name: 'webhook_fanout_payloads' },
      );
      const payloads = new Map(rows.map((r) => [r.id, r.payload]));
      for (const e of unread) e.payload = payloads.get(e.id);
    }
    const specs: NewDelivery[] = [];
    for (const { e, targets: matching } of batch) {
      if (!matching.length) continue;
      // The body bytes are fixed here, once per event, and shared by its deliveries (C8.2): one
      // string, which createDeliveries sends once whatever the number of targets.
      const body = JSON.stringify(e.payload);
      for (const t of matching) {
        const opened = openSecretOf(secrets, t, options);
        if (!opened) continue;
        specs.push({
          source: t.source, appId: t.app_id, storeId: e.store_id, topic: e.topic, address: t.address, body,
          secret: opened.secret, eventId: e.id,
          subscriptionId: t.source === 'subscription' ? t.target_id : null,
          storeWebhookId: t.source === 'store' ? t.target_id : null,
        });
      }
    }
    const at = now();
    await createDeliveries(tx, specs, at);
    await tx.query('UPDATE events SET fanned_out_at = $2 WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid)', [
      JSON.stringify(batch.map((b) => b.e.id)), at,
    ], { name: 'webhook_fanout_done' });
    return { events: batch.length, deliveries: specs.length, bytes: spent, more: events.length === limit || batch.length < events.length };
  }, { planOnce: true, asyncCommit: true });
}

/** Fan out batches until none is left (or `stopped` says so): the worker's loop, and C12.2's. */
export async function fanOutPending(db: Db, secrets: SecretBox, now: () => Date, options: FanOutOptions = {}, stopped: () => boolean = () => false): Promise<void> {
  while (!stopped()) {
    const { more } = await fanOutBatch(db, secrets, now, options);
    if (!more) return;
  }
}
