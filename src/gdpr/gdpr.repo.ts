// The GDPR workflow's SQL and its views (app-api.md "GDPR request"). A request row, one row per app
// notified, and the link from the request to the webhook deliveries it caused.
import { Type, type Static } from 'typebox';
import type { Queryable } from '../db/db.js';
import { Id, nullable, StringEnum, Timestamp } from '../http/schemas.js';
import type { GdprTopic } from '../webhooks/topics.js';

export const REQUEST_TYPES = ['data_request', 'customer_redact', 'shop_redact'] as const;
export const REQUEST_STATUSES = ['pending', 'dispatched', 'acknowledged', 'completed', 'failed'] as const;
export type GdprRequestType = (typeof REQUEST_TYPES)[number];
export type GdprRequestStatus = (typeof REQUEST_STATUSES)[number];
export const APP_ACK_STATUSES = ['pending', 'acknowledged', 'completed', 'failed'] as const;
export type AppAckStatus = (typeof APP_ACK_STATUSES)[number];
export type DeliveryKind = 'initial' | 'final_notice' | 'reminder';

export const TOPIC_OF: Record<GdprRequestType, GdprTopic> = {
  data_request: 'customers/data_request',
  customer_redact: 'customers/redact',
  shop_redact: 'shop/redact',
};

/** The key of the app's `gdprUrls` that receives each kind of request. */
export const GDPR_URL_KEY: Record<GdprRequestType, 'customerDataRequest' | 'customerRedact' | 'shopRedact'> = {
  data_request: 'customerDataRequest',
  customer_redact: 'customerRedact',
  shop_redact: 'shopRedact',
};

export const DAY_MS = 86_400_000;
/** app-api.md Limits: acknowledge within 30 days, complete within 90. */
export const ACKNOWLEDGE_DAYS = 30;
export const COMPLETION_DAYS = 90;
/** app-api.md GDPR request status: reminders while the completion deadline is within 7 days. */
export const REMINDER_DAYS = 7;

export interface RequestRow {
  id: string;
  store_id: string;
  request_type: GdprRequestType;
  status: GdprRequestStatus;
  customer_id: string | null;
  customer_email: string | null;
  customer_phone: string | null;
  metadata: GdprMetadata;
  order_ids: string[];
  topic: GdprTopic;
  payload: string;
  data_export_url: string | null;
  requested_at: Date;
  acknowledge_deadline: Date;
  completion_deadline: Date;
  dispatched_at: Date | null;
  completed_at: Date | null;
  failed_at: Date | null;
  redacted_at: Date | null;
  updated_at: Date;
}

export interface AppStateRow {
  request_id: string;
  app_id: string;
  app_name: string;
  installation_id: string;
  status: AppAckStatus;
  acknowledged_at: Date | null;
  completed_at: Date | null;
  failed_at: Date | null;
  error_message: string | null;
  data_export_url: string | null;
  final_notice_at: Date | null;
  last_reminder_day: string | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** What a request records beyond its customer: by type, `{ ordersRequested }`, `{ ordersToRedact }` or `{}`. */
export const GdprMetadataSchema = Type.Object({
  ordersRequested: Type.Optional(Type.Boolean({ description: 'data requests: whether the customer\'s orders were requested' })),
  ordersToRedact: Type.Optional(Type.Integer({ description: 'customer redactions: how many orders are to be redacted' })),
});
export type GdprMetadata = Static<typeof GdprMetadataSchema>;

/** One notified app's state on a request. */
export const AppAckSchema = Type.Object({
  appId: Id(),
  appName: Type.String(),
  status: StringEnum(APP_ACK_STATUSES),
  acknowledgedAt: nullable(Timestamp()),
  completedAt: nullable(Timestamp()),
  errorMessage: nullable(Type.String({ description: 'why the app failed the request (a missed deadline)' })),
  dataExportUrl: nullable(Type.String({ description: 'where this app put its export of a data request (its completion), if it gave one' })),
});

export function appAckView(a: AppStateRow): Static<typeof AppAckSchema> {
  return {
    appId: a.app_id,
    appName: a.app_name,
    status: a.status,
    acknowledgedAt: iso(a.acknowledged_at),
    completedAt: iso(a.completed_at),
    errorMessage: a.error_message,
    dataExportUrl: a.data_export_url,
  };
}

/** The GDPR request resource of app-api.md. */
export const GdprRequestSchema = Type.Object({
  requestId: Id(),
  requestType: StringEnum(REQUEST_TYPES),
  status: StringEnum(REQUEST_STATUSES),
  customerId: nullable(Type.String()),
  customerEmail: nullable(Type.String()),
  requestedAt: Timestamp(),
  acknowledgeDeadline: Timestamp(),
  completionDeadline: Timestamp(),
  completedAt: nullable(Timestamp()),
  appAcknowledgments: Type.Array(AppAckSchema, { description: 'the notified apps, in installation order (for an app\'s own call, its own state only)' }),
  dataExportUrl: nullable(Type.String({ description: "for a data request, where an app put the export: for the merchant the latest an app gave (each app's own is in `appAcknowledgments`); for an app, its own only" })),
  metadata: GdprMetadataSchema,
});
export type GdprRequestView = Static<typeof GdprRequestSchema>;

/** The GDPR request resource of app-api.md, with the per-app state of the apps given. */
export function requestView(r: RequestRow, apps: AppStateRow[]): GdprRequestView {
  return {
    requestId: r.id,
    requestType: r.request_type,
    status: r.status,
    customerId: r.customer_id,
    customerEmail: r.customer_email,
    requestedAt: r.requested_at.toISOString(),
    acknowledgeDeadline: r.acknowledge_deadline.toISOString(),
    completionDeadline: r.completion_deadline.toISOString(),
    completedAt: iso(r.completed_at),
    appAcknowledgments: apps.map(appAckView),
    dataExportUrl: r.data_export_url,
    metadata: r.metadata,
  };
}

const APP_STATE_SELECT = `SELECT ra.*, a.name AS app_name FROM gdpr_request_apps ra JOIN apps a ON a.id = ra.app_id`;

export async function findRequest(q: Queryable, id: string, opts: { storeId?: string; lock?: boolean } = {}): Promise<RequestRow | null> {
  const { rows } = await q.query<RequestRow>(
    `SELECT * FROM gdpr_requests WHERE id = $1 AND ($2::uuid IS NULL OR store_id = $2::uuid)${opts.lock ? ' FOR UPDATE' : ''}`,
    [id, opts.storeId ?? null],
  );
  return rows[0] ?? null;
}

/** Per-app states of the requests, in the order the apps were installed. */
export async function appStatesOf(q: Queryable, requestIds: string[]): Promise<Map<string, AppStateRow[]>> {
  const out = new Map<string, AppStateRow[]>();
  if (!requestIds.length) return out;
  const { rows } = await q.query<AppStateRow>(
    `${APP_STATE_SELECT} JOIN installations i ON i.id = ra.installation_id
      WHERE ra.request_id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid)
      ORDER BY i.created_at, ra.app_id`,
    [JSON.stringify(requestIds)],
  );
  for (const r of rows) out.set(r.request_id, [...(out.get(r.request_id) ?? []), r]);
  return out;
}

export async function appStateOf(q: Queryable, requestId: string, appId: string): Promise<AppStateRow | null> {
  const { rows } = await q.query<AppStateRow>(`${APP_STATE_SELECT} WHERE ra.request_id = $1 AND ra.app_id = $2`, [requestId, appId]);
  return rows[0] ?? null;
}

export async function listRequests(
  q: Queryable,
  storeId: string,
  opts: { status?: GdprRequestStatus; requestType?: GdprRequestType; limit: number; offset: number },
): Promise<{ rows: RequestRow[]; total: number }> {
  const where = `store_id = $1 AND ($2::text IS NULL OR status = $2::text) AND ($3::text IS NULL OR request_type = $3::text)`;
  const params = [storeId, opts.status ?? null, opts.requestType ?? null];
  const [page, count] = await Promise.all([
    q.query<RequestRow>(`SELECT * FROM gdpr_requests WHERE ${where} ORDER BY requested_at DESC, id DESC LIMIT $4 OFFSET $5`, [
      ...params, opts.limit, opts.offset,
    ]),
    q.query<{ n: number }>(`SELECT count(*)::int AS n FROM gdpr_requests WHERE ${where}`, params),
  ]);
  return { rows: page.rows, total: count.rows[0].n };
}

export async function linkDeliveries(
  q: Queryable,
  links: { deliveryId: string; requestId: string; appId: string; kind: DeliveryKind }[],
  now: Date,
): Promise<void> {
  if (!links.length) return;
  await q.query(
    `INSERT INTO gdpr_request_deliveries (delivery_id, request_id, app_id, kind, created_at)
     SELECT delivery_id, request_id, app_id, kind, $2 FROM jsonb_to_recordset($1::jsonb)
       AS x(delivery_id uuid, request_id uuid, app_id uuid, kind text)`,
    [JSON.stringify(links.map((l) => ({ delivery_id: l.deliveryId, request_id: l.requestId, app_id: l.appId, kind: l.kind }))), now],
  );
}
