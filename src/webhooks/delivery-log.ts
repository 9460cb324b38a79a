// The developer's delivery log (C8.5) and stats (C8.6): an app's deliveries (API subscriptions,
// manifest webhooks, GDPR webhooks and the developer's own test deliveries) with request and
// response bodies and attempt history.
import { Type, type Static } from 'typebox';
import type { Queryable } from '../db/db.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { isUuid } from '../ids.js';
import { Id, nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { DELIVERY_CHANNEL, type DeliverySource } from './deliveries.repo.js';

export const DELIVERY_STATUSES = ['pending', 'retrying', 'success', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
const DELIVERY_SOURCES = ['subscription', 'manifest', 'gdpr', 'store', 'test'] as const satisfies readonly DeliverySource[];

interface DeliveryRow {
  id: string;
  webhook_id: string;
  source: DeliverySource;
  topic: string;
  store_id: string | null;
  address: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  lease_until: Date | null;
  request_headers: Record<string, string>;
  request_body: string | null;
  response_status: number | null;
  response_body: string | null;
  created_at: Date;
  updated_at: Date;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: Date;
  duration_ms: number;
  response_status: number | null;
  error: string | null;
}

/** One delivery of the log (C8.5) with its attempt history, oldest attempt first. */
export const DeliverySchema = Type.Object({
  deliveryId: Id(),
  webhookId: Id('X-SVC-Webhook-Id: the same on every attempt and redelivery (C14.10)'),
  source: StringEnum(DELIVERY_SOURCES, {
    description: 'an API subscription, the app manifest, a GDPR request, a store webhook, or a test delivery the developer asked for (POST .../webhooks/test)',
  }),
  topic: Type.String(),
  storeId: nullable(Id('the store the delivery is about; null for a test delivery, which concerns no store')),
  address: Type.String(),
  status: StringEnum(DELIVERY_STATUSES),
  attemptCount: Type.Integer(),
  nextAttemptAt: nullable(Timestamp('when the next attempt is due; null once the delivery has finished')),
  requestHeaders: Type.Record(Type.String(), Type.String(), { description: 'the headers sent, X-SVC-Delivery-Attempt of the latest attempt' }),
  requestBody: nullable(Type.String({ description: 'the exact bytes sent; null once pruned (retention)' })),
  responseStatus: nullable(Type.Integer()),
  responseBody: nullable(Type.String()),
  attempts: Type.Array(Type.Object({
    attempt: Type.Integer(),
    startedAt: Timestamp(),
    durationMs: Type.Integer(),
    responseStatus: nullable(Type.Integer()),
    error: nullable(Type.String()),
  })),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});

/** Delivery counts by status (C8.6). */
export const DeliveryStatsSchema = Type.Object({
  total: Type.Integer(),
  success: Type.Integer(),
  failed: Type.Integer(),
  pending: Type.Integer(),
  retrying: Type.Integer(),
});

function deliveryView(row: DeliveryRow, attempts: AttemptRow[]): Static<typeof DeliverySchema> {
  const open = row.status === 'pending' || row.status === 'retrying';
  return {
    deliveryId: row.id,
    webhookId: row.webhook_id,
    source: row.source,
    topic: row.topic,
    storeId: row.store_id,
    address: row.address,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: open && row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
    // The headers of the latest attempt. Its number is added here; its signature is the stored one,
    // which an attempt re-signed with a rotated client secret replaced (engine.ts `send`, C8.7). Before
    // the first attempt: the headers made at creation.
    requestHeaders: row.attempt_count > 0 ? { ...row.request_headers, 'X-SVC-Delivery-Attempt': String(row.attempt_count) } : row.request_headers,
    requestBody: row.request_body,
    responseStatus: row.response_status,
    responseBody: row.response_body,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: a.started_at.toISOString(),
      durationMs: a.duration_ms,
      responseStatus: a.response_status,
      error: a.error,
    })),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

async function withAttempts(q: Queryable, rows: DeliveryRow[]) {
  if (!rows.length) return [];
  const { rows: attempts } = await q.query<AttemptRow>(
    'SELECT * FROM webhook_attempts WHERE delivery_id = ANY($1::uuid[]) ORDER BY delivery_id, attempt',
    [rows.map((r) => r.id)],
  );
  const by = new Map<string, AttemptRow[]>();
  for (const a of attempts) by.set(a.delivery_id, [...(by.get(a.delivery_id) ?? []), a]);
  return rows.map((r) => deliveryView(r, by.get(r.id) ?? []));
}

export async function listDeliveries(q: Queryable, appId: string, filters: { status?: string; topic?: string }, page: { limit: number; offset: number }) {
  if (filters.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(filters.status)) {
    throw badRequest(`status must be one of ${DELIVERY_STATUSES.join(', ')}`);
  }
  const where = 'app_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR topic = $3)';
  const params = [appId, filters.status ?? null, filters.topic ?? null];
  const [rows, total] = await Promise.all([
    // The page's ids first, from the index alone, then its rows: a deep page skips index entries,
    // not whole rows with their bodies (issue 15: 10,000 deliveries, any page under 50 ms).
    q.query<DeliveryRow>(
      `SELECT * FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5)
       ORDER BY created_at DESC, id DESC`,
      [...params, page.limit, page.offset],
    ),
    q.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE ${where}`, params),
  ]);
  return { deliveries: await withAttempts(q, rows.rows), total: total.rows[0].n };
}

async function findDelivery(q: Queryable, appId: string, deliveryId: string): Promise<DeliveryRow> {
  const row = isUuid(deliveryId)
    ? (await q.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1 AND app_id = $2', [deliveryId, appId])).rows[0]
    : undefined;
  if (!row) throw notFound('Delivery not found');
  return row;
}

export async function getDelivery(q: Queryable, appId: string, deliveryId: string) {
  const [delivery] = await withAttempts(q, [await findDelivery(q, appId, deliveryId)]);
  return { delivery };
}

/**
 * C8.5 redeliver, C14.10: the same delivery (same webhook id) is due now, its attempt number
 * continuing the count. A finished delivery gets exactly one more attempt (no automatic retries
 * after it); an open one has its next attempt brought forward.
 */
export async function redeliver(q: Queryable, appId: string, deliveryId: string, now: Date) {
  const current = await findDelivery(q, appId, deliveryId);
  if (current.request_body === null) throw conflict('The request body of this delivery has been pruned (retention); it cannot be sent again');
  const { rows } = await q.query<DeliveryRow>(
    `UPDATE webhook_deliveries SET
       max_attempts = CASE WHEN status IN ('success', 'failed') THEN attempt_count + 1 ELSE max_attempts END,
       status = CASE WHEN status IN ('success', 'failed') THEN 'retrying' ELSE status END,
       next_attempt_at = $3, updated_at = $3
     WHERE id = $1 AND app_id = $2 AND (lease_until IS NULL OR lease_until < now())
     RETURNING *`,
    [deliveryId, appId, now],
  );
  if (!rows.length) throw conflict('An attempt of this delivery is in progress; try again when it has finished');
  await q.query('SELECT pg_notify($1, $2)', [DELIVERY_CHANNEL, '']);
  const [delivery] = await withAttempts(q, rows);
  return { delivery };
}

export async function deliveryStats(q: Queryable, appId: string): Promise<Static<typeof DeliveryStatsSchema>> {
  const { rows } = await q.query<{ status: DeliveryStatus; n: number }>(
    'SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE app_id = $1 GROUP BY status',
    [appId],
  );
  const stats = { total: 0, success: 0, failed: 0, pending: 0, retrying: 0 };
  for (const r of rows) {
    stats[r.status] = r.n;
    stats.total += r.n;
  }
  return stats;
}

/**
 * The dashboard's stats panel (issue 15): counts by status of the deliveries created since `since`,
 * the failure rate of the finished ones, and the 90th percentile of the response time of the app's
 * attempts started since `since` (the attempt's start, not its delivery's creation: a redelivery
 * today of an older delivery counts). The p90 reads the app's own attempts through their index
 * (migration 0019), never other apps' attempts.
 */
export async function deliveryWindowStats(q: Queryable, appId: string, since: Date) {
  const [counts, p90] = await Promise.all([
    q.query<{ status: DeliveryStatus; n: number }>(
      'SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE app_id = $1 AND created_at >= $2 GROUP BY status',
      [appId, since],
    ),
    q.query<{ p90: number | null }>(
      `SELECT percentile_cont(0.9) WITHIN GROUP (ORDER BY duration_ms)::float8 AS p90
         FROM webhook_attempts WHERE app_id = $1 AND started_at >= $2`,
      [appId, since],
    ),
  ]);
  const stats = { total: 0, success: 0, failed: 0, pending: 0, retrying: 0 };
  for (const r of counts.rows) {
    stats[r.status] = r.n;
    stats.total += r.n;
  }
  const finished = stats.success + stats.failed;
  const value = p90.rows[0]?.p90;
  return { ...stats, failureRate: finished ? stats.failed / finished : null, p90Ms: value === null || value === undefined ? null : Math.round(Number(value)) };
}
