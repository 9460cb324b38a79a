// The delivery queue's SQL: create (inside the caller's transaction), claim with a lease, record an
// attempt while still holding the lease, release. Each claim and record is one statement, so each
// is its own short transaction; nothing here is ever held open across network I/O.
//
// Reusable by other areas (GDPR), inside the transaction of the change that needs the webhooks:
//
//   const created = await createDeliveries(tx, [{
//     source: 'gdpr', appId, storeId, topic: 'customers/redact', address: app.gdpr_urls.customerRedact,
//     body: { shop_id: storeId, ... },            // an object (serialised once) or the exact JSON text
//     secret: clientSecret,                        // plain: the body is signed now, the secret not stored
//                                                  // (sources keyed by the app's client secret are signed
//                                                  // again at each attempt with the key of then: APP_KEYED_SOURCES)
//     extraHeaders: { 'X-SVC-Gdpr-Request-Id': requestId },
//     maxAttempts: 1,                              // app-api.md Retries 5: GDPR webhooks are not retried
//   }], deps.clock.now());
//
// and after the commit, to attempt them at once rather than wait for a worker's wake-up:
//   await deps.webhooks.sendNow(created.map((d) => d.deliveryId));
import { createHash, randomUUID } from 'node:crypto';
import { asyncCommit, type Db, type Queryable } from '../db/db.js';
import { uuidv7 } from '../ids.js';
import { DEFAULT_MAX_ATTEMPTS, type DeliveryStatus } from './retry-policy.js';

// The signing is its own module (signature.ts) so the shipping rate requests' thread loads it alone.
import { SIGNATURE_HEADER, signBody, signedHeaders } from './signature.js';

export { SIGNATURE_HEADER, signBody, signedHeaders };
import { appTargetTakesTopic } from './topics.js';

// The queue's own writes (claims, releases, attempt records) commit asynchronously (src/db/db.ts
// `asyncCommit`): a database crash may forget the last fraction of a second of them, which only
// means those claims lapse and those attempts are made again (at least once).

/** NOTIFY channel: deliveries were created or made due now (redeliver). */
export const DELIVERY_CHANNEL = 'svc_webhook_deliveries';

export type DeliverySource = 'subscription' | 'manifest' | 'gdpr' | 'store' | 'test';

/**
 * The sources signed with the app's client secret (app-api.md Signature: manifest and GDPR webhooks,
 * C9.4 also at an API subscription; and test deliveries, issue 14). That secret can be rotated, and
 * the old one stops working at once (C3.2, C8.7), so an attempt of these is signed when it is made,
 * with the secret the app holds then: a retry or redelivery after a rotation signed at creation would
 * carry the retired key and be refused (401) by the app. Subscriptions and store webhooks keep the
 * `svcwh_` secret made with them, which is never changed: their signature made at creation holds.
 */
export const APP_KEYED_SOURCES = ['manifest', 'gdpr', 'test'] as const satisfies readonly DeliverySource[];
const APP_KEYED_SQL = APP_KEYED_SOURCES.map((s) => `'${s}'`).join(', ');

export interface NewDelivery {
  source: DeliverySource;
  appId: string | null;
  /** Null only for a test delivery (source `test`, which names its sample shop in `shopDomain`). */
  storeId: string | null;
  topic: string;
  address: string;
  body: string | object;
  /**
   * The plain signing secret. Null only for an app-keyed source (APP_KEYED_SOURCES) whose client
   * secret could not be opened at fan-out: such a delivery is signed at each attempt anyway, so it
   * is created unsigned and its attempts say why they are not sent until the secret opens.
   */
  secret: string | null;
  /** X-SVC-Shop-Domain; the store's slug is looked up when not given. */
  shopDomain?: string;
  extraHeaders?: Record<string, string>;
  maxAttempts?: number;
  eventId?: string | null;
  subscriptionId?: string | null;
  storeWebhookId?: string | null;
}

export interface CreatedDelivery {
  deliveryId: string;
  webhookId: string;
}

/**
 * The per-host fairness key (host:port). Capped: it is a key column of the queue's due index, whose
 * rows may not exceed 2704 bytes, and a target saved before addresses were bounded (C8.9,
 * src/net/address-safety.ts) must not make the whole fan-out batch fail (C8.2). No real host is
 * longer (DNS: 253), so the cap never merges two real hosts.
 */
const MAX_TARGET_HOST_KEY = 300;

export function targetHost(address: string): string {
  let host: string;
  try {
    host = new URL(address).host;
  } catch {
    host = address;
  }
  // By code points: an unparsable address is any text, and half a surrogate pair is no text (jsonb refuses it).
  return host.length > MAX_TARGET_HOST_KEY ? Array.from(host).slice(0, MAX_TARGET_HOST_KEY).join('') : host;
}

/**
 * The X-SVC-Webhook-Id of a delivery (C8.2: the receivers' idempotency key). A fan-out's delivery
 * takes one derived from its event and target, so the same event to the same target always has
 * the same id: the fan-out commits asynchronously on PostgreSQL (fanout.ts), and a database crash
 * right after it may forget it once its deliveries have already gone out; the fan-out done again
 * then sends the event under the ids the receivers saw, and they drop the repeat (at least once,
 * app-api.md). Others (GDPR, test deliveries) are made once, committed before they are sent: random.
 * A name-based UUID (version 8, RFC 9562): the first 16 bytes of a SHA-256, version and variant set.
 */
export function webhookIdOf(s: Pick<NewDelivery, 'eventId' | 'source' | 'subscriptionId' | 'storeWebhookId' | 'appId' | 'address'>): string {
  if (!s.eventId) return randomUUID();
  // The target: a subscription or store webhook by its id; a manifest webhook by its app and address
  // (an app's manifest names a topic and address once, and the event has one topic).
  const target = s.subscriptionId ?? s.storeWebhookId ?? `${s.appId ?? ''} ${s.address}`;
  const b = createHash('sha256').update(`svc-webhook-id\n${s.eventId}\n${s.source}\n${target}`, 'utf8').digest().subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x80;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export async function createDeliveries(tx: Queryable, specs: NewDelivery[], now: Date): Promise<CreatedDelivery[]> {
  if (!specs.length) return [];
  const missing = [...new Set(specs.filter((s) => s.shopDomain === undefined && s.storeId !== null).map((s) => s.storeId!))];
  const slugs = new Map<string, string>();
  if (missing.length) {
    const { rows } = await tx.query<{ id: string; slug: string }>('SELECT id, slug FROM stores WHERE id = ANY($1::uuid[])', [missing]);
    for (const r of rows) slugs.set(r.id, r.slug);
  }
  // Each distinct body travels once, however many deliveries carry it: the deliveries of one event
  // share its body string (fanout.ts), and a copy per delivery in the statement's JSON made a large
  // event with many targets a parameter of hundreds of MB (past jsonb's 256 MB, or V8's longest string).
  const bodies: string[] = [];
  const bodyIndex = new Map<string, number>();
  const rows = specs.map((s) => {
    const body = typeof s.body === 'string' ? s.body : JSON.stringify(s.body);
    let bodyIx = bodyIndex.get(body);
    if (bodyIx === undefined) {
      bodyIx = bodies.push(body) - 1;
      bodyIndex.set(body, bodyIx);
    }
    const webhookId = webhookIdOf(s);
    const headers: Record<string, string> = {
      ...signedHeaders(s.secret ?? '', body, s.topic, s.shopDomain ?? (s.storeId === null ? undefined : slugs.get(s.storeId)) ?? ''),
      'X-SVC-Webhook-Id': webhookId,
      ...s.extraHeaders,
    };
    if (s.secret === null) {
      if (!(APP_KEYED_SOURCES as readonly string[]).includes(s.source)) throw new Error(`a ${s.source} delivery needs its signing secret`);
      delete headers[SIGNATURE_HEADER];
    }
    return {
      id: uuidv7(now.getTime()), webhook_id: webhookId, source: s.source, event_id: s.eventId ?? null, app_id: s.appId,
      store_id: s.storeId, subscription_id: s.subscriptionId ?? null, store_webhook_id: s.storeWebhookId ?? null,
      topic: s.topic, address: s.address, target_host: targetHost(s.address), request_headers: headers, body_ix: bodyIx,
      max_attempts: s.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    };
  });
  await tx.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, source, event_id, app_id, store_id, subscription_id, store_webhook_id, topic,
       address, target_host, request_headers, request_body, status, attempt_count, max_attempts, next_attempt_at, created_at, updated_at)
     SELECT x.id, x.webhook_id, x.source, x.event_id, x.app_id, x.store_id, x.subscription_id, x.store_webhook_id, x.topic,
       x.address, x.target_host, x.request_headers, b.body, 'pending', 0, x.max_attempts, $2::timestamptz, $2::timestamptz, $2::timestamptz
     FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, webhook_id uuid, source text, event_id uuid, app_id uuid, store_id uuid,
       subscription_id uuid, store_webhook_id uuid, topic text, address text, target_host text, request_headers jsonb,
       body_ix integer, max_attempts integer)
     JOIN jsonb_array_elements_text($3::jsonb) WITH ORDINALITY AS b(body, n) ON b.n = x.body_ix + 1
     ON CONFLICT (webhook_id) DO NOTHING`,
    [JSON.stringify(rows), now, JSON.stringify(bodies)],
    { name: 'webhook_create_deliveries' },
  );
  // Delivered on commit: wakes the workers (a poll covers a missed wake-up).
  await tx.query('SELECT pg_notify($1, $2)', [DELIVERY_CHANNEL, '']);
  return rows.map((r) => ({ deliveryId: r.id, webhookId: r.webhook_id }));
}

export interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  source: DeliverySource;
  topic: string;
  address: string;
  target_host: string;
  request_headers: Record<string, string>;
  /** Never null for an open delivery (only finished ones are pruned); checked all the same. */
  request_body: string | null;
  attempt_count: number;
  max_attempts: number;
  lease_token: string;
  /** Why the target this delivery was made for no longer takes it (TARGET_GONE_SQL); null while it does. */
  target_gone: TargetGone | null;
  /** The scopes the installation holds now (sources `subscription` and `manifest`, else null). */
  installation_scopes: string[] | null;
  /** The app's client secret as it is now, sealed (APP_KEYED_SOURCES; null for the other sources). */
  app_secret_enc: string | null;
}

/**
 * The signature this attempt carries: for an app-keyed source, the body signed now with the app's
 * current client secret (`open` unseals it; the same bytes as ever, only the key may have changed);
 * otherwise the one stored at creation.
 */
export function signatureNow(row: Pick<ClaimedDelivery, 'request_headers' | 'app_secret_enc'>, body: string, open: (sealed: string) => string): string {
  if (row.app_secret_enc === null) return row.request_headers[SIGNATURE_HEADER];
  return signBody(open(row.app_secret_enc), body);
}

/**
 * A delivery goes to a target that must still be there when it is sent, not only when it was made
 * (C8.2: enabled API subscriptions and manifest webhooks of active installations, store webhooks):
 * a retry 15 minutes later, or a redelivery, must not reach an app the merchant has uninstalled, an
 * address the app unsubscribed or took out of its manifest (C3.2: the manifest is the app's list of
 * targets, as its subscriptions are), or a store webhook the merchant deleted; nor an app whose
 * installation no longer holds the topic's read scope (`scope_withdrawn`: the merchant authorised it
 * again with fewer scopes, C4.1; API subscriptions and manifest webhooks alike, topics.ts
 * `appTargetTakesTopic`). GDPR webhooks are owed to the app whatever its installation (C9), and a
 * test delivery has no target: never stopped.
 */
export type TargetGone = 'subscription_deleted' | 'webhook_deleted' | 'app_uninstalled' | 'scope_withdrawn' | 'manifest_webhook_removed';

const TARGET_GONE_SQL = `CASE
    WHEN d.source = 'subscription' AND NOT EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = d.subscription_id AND s.enabled)
      THEN 'subscription_deleted'
    WHEN d.source = 'store' AND NOT EXISTS (SELECT 1 FROM store_webhooks sw WHERE sw.id = d.store_webhook_id)
      THEN 'webhook_deleted'
    WHEN d.source IN ('subscription', 'manifest')
         AND NOT EXISTS (SELECT 1 FROM installations i WHERE i.app_id = d.app_id AND i.store_id = d.store_id AND i.status = 'active')
      THEN 'app_uninstalled'
    WHEN d.source = 'manifest' AND NOT EXISTS (
           SELECT 1 FROM apps a CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(a.extensions->'webhooks') = 'array'
                                                                              THEN a.extensions->'webhooks' ELSE '[]'::jsonb END) w
            WHERE a.id = d.app_id AND w->>'topic' = d.topic AND w->>'uri' = d.address)
      THEN 'manifest_webhook_removed'
  END`;

/** Why this claimed delivery must not be sent (its target is gone, or no longer takes its topic); null to send it. */
export function targetGone(row: Pick<ClaimedDelivery, 'target_gone' | 'installation_scopes' | 'topic' | 'source'>): TargetGone | null {
  if (row.target_gone) return row.target_gone;
  // The rule of fan-out (topics.ts appTargetTakesTopic): an app's target, API subscription or manifest
  // webhook, delivers only while its topic's read scope is held (shipping apps: orders/create).
  if (!appTargetTakesTopic(row.source, row.installation_scopes, row.topic)) return 'scope_withdrawn';
  return null;
}

export interface ClaimOptions {
  /** Service-clock time: deliveries due at or before it. */
  now: Date;
  limit: number;
  leaseSeconds: number;
  /** Slots this worker has per target host; hosts not listed have `perHost`. */
  hostFree: Map<string, number>;
  perHost: number;
  /** Only these deliveries (sendNow). */
  ids?: string[];
}

/**
 * Claim due deliveries. Candidates are picked without locks: hosts this worker has no slot for are
 * skipped in the scan itself (so a slow host's backlog at the head of the queue never hides other
 * hosts' deliveries), and a window function takes no more per host than its free slots. Then they
 * are locked with SKIP LOCKED; locking re-checks the row, so a row another worker has just leased is
 * passed over. The lease runs on the database's clock. Each claimed row brings what its attempt
 * needs as it is now: its target's state, the installation's scopes and, for app-keyed sources, the
 * app's sealed client secret (read now, C8.7: one primary-key lookup per claimed row, in RETURNING).
 */
export async function claimDeliveries(db: Db, o: ClaimOptions): Promise<ClaimedDelivery[]> {
  // Lists travel as JSON text: one form both drivers' named statements take (PGlite's are EXECUTEd
  // with literals, which cannot spell an array).
  const due = `status IN ('pending', 'retrying') AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until < now())
    AND ($6::jsonb IS NULL OR id IN (SELECT jsonb_array_elements_text($6::jsonb)::uuid))`;
  const full = [...o.hostFree].filter(([, free]) => free <= 0).map(([host]) => host);
  const partial = Object.fromEntries([...o.hostFree].filter(([, free]) => free > 0 && free < o.perHost));
  const { rows } = await db.query<ClaimedDelivery>(
    `WITH candidates AS (
       SELECT id FROM (
         SELECT d.id, coalesce(($8::jsonb ->> d.target_host)::int, $5::int) AS slots,
                row_number() OVER (PARTITION BY d.target_host ORDER BY d.next_attempt_at, d.id) AS rn
         FROM (SELECT id, target_host, next_attempt_at FROM webhook_deliveries
               WHERE ${due} AND NOT (target_host = ANY (ARRAY(SELECT jsonb_array_elements_text($7::jsonb))))
               ORDER BY next_attempt_at LIMIT $2::int * 4 + 64) d
       ) ranked WHERE rn <= slots
     ), locked AS (
       SELECT id FROM webhook_deliveries
       WHERE id IN (SELECT id FROM candidates) AND ${due}
       ORDER BY next_attempt_at LIMIT $2::int
       FOR UPDATE SKIP LOCKED
     )
     UPDATE webhook_deliveries d SET lease_until = now() + make_interval(secs => $3::float8), lease_token = $4::uuid
     FROM locked WHERE d.id = locked.id AND ${asyncCommit(db)}
     RETURNING d.id, d.webhook_id, d.source, d.topic, d.address, d.target_host, d.request_headers, d.request_body, d.attempt_count,
       d.max_attempts, d.lease_token, ${TARGET_GONE_SQL} AS target_gone,
       CASE WHEN d.source IN ('subscription', 'manifest')
            THEN (SELECT i.scopes FROM installations i WHERE i.app_id = d.app_id AND i.store_id = d.store_id) END AS installation_scopes,
       CASE WHEN d.source IN (${APP_KEYED_SQL})
            THEN (SELECT a.client_secret_enc FROM apps a WHERE a.id = d.app_id) END AS app_secret_enc`,
    [o.now, o.limit, o.leaseSeconds, randomUUID(), o.perHost, o.ids ? JSON.stringify(o.ids) : null, JSON.stringify(full), JSON.stringify(partial)],
    { name: 'webhook_claim' },
  );
  return rows;
}

/** Give claimed rows back untouched (this worker has no slot for them after all). */
export async function releaseDeliveries(db: Db, rows: Pick<ClaimedDelivery, 'id' | 'lease_token'>[]): Promise<void> {
  if (!rows.length) return;
  await db.query(
    `UPDATE webhook_deliveries SET lease_until = NULL, lease_token = NULL
     WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid) AND lease_token = $2::uuid AND ${asyncCommit(db)}`,
    [JSON.stringify(rows.map((r) => r.id)), rows[0].lease_token],
    { name: 'webhook_release' },
  );
}

export interface AttemptRecord {
  id: string;
  token: string;
  attempt: number;
  status: DeliveryStatus;
  next_attempt_at: Date | null;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  started_at: Date;
  duration_ms: number;
  updated_at: Date;
  /**
   * The signature this attempt sent when it differs from the stored one (an app-keyed delivery whose
   * client secret was rotated since): stored in its place, so the log shows what was sent. Null (the
   * usual case) leaves the stored headers as they are.
   */
  signature: string | null;
}

/**
 * Record attempts and next states in one statement, each only where the lease is still held: a
 * worker whose lease expired (and whose row another worker took over) records nothing. Each attempt
 * carries its delivery's app (migration 0019), read from the row updated here, never from the caller.
 * An attempt that re-signed its delivery (AttemptRecord `signature`) leaves that signature in the
 * stored headers. Returns the ids recorded.
 */
export async function recordAttempts(db: Db, records: AttemptRecord[]): Promise<string[]> {
  if (!records.length) return [];
  const { rows } = await db.query<{ delivery_id: string }>(
    `WITH x AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, token uuid, attempt integer, status text,
         next_attempt_at timestamptz, response_status integer, response_body text, error text, started_at timestamptz,
         duration_ms integer, updated_at timestamptz, signature text)
     ), updated AS (
       UPDATE webhook_deliveries d SET status = x.status, attempt_count = x.attempt, next_attempt_at = x.next_attempt_at,
         lease_until = NULL, lease_token = NULL, response_status = x.response_status, response_body = x.response_body,
         last_error = x.error, updated_at = x.updated_at,
         request_headers = CASE WHEN x.signature IS NULL THEN d.request_headers
                                ELSE jsonb_set(d.request_headers, '{${SIGNATURE_HEADER}}', to_jsonb(x.signature)) END
       FROM x WHERE d.id = x.id AND d.lease_token = x.token AND ${asyncCommit(db)}
       RETURNING d.id, d.app_id
     )
     INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, response_status, error, app_id)
     SELECT x.id, x.attempt, x.started_at, x.duration_ms, x.response_status, x.error, updated.app_id FROM x JOIN updated ON updated.id = x.id
     ON CONFLICT DO NOTHING
     RETURNING delivery_id`,
    [JSON.stringify(records)],
    { name: 'webhook_record' },
  );
  return rows.map((r) => r.delivery_id);
}

/**
 * The embedded database belongs to one process (src/db/open.ts), so when it starts every lease
 * left behind is a dead process's: return those rows at once instead of waiting for them to expire.
 */
export async function releaseAllLeases(q: Queryable): Promise<number> {
  const { rowCount } = await q.query('UPDATE webhook_deliveries SET lease_until = NULL, lease_token = NULL WHERE lease_until IS NOT NULL');
  return rowCount;
}
