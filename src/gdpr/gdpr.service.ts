// GDPR requests (app-api.md GDPR routes, C9.1, C9.2): the merchant makes a request; the apps
// actively installed on the store are notified (gdpr.dispatch.ts sends after the response) and
// acknowledge and complete it through their own routes; the request's state follows theirs.
import { Type, type Static } from 'typebox';
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import type { TokenInfo } from '../oauth/token-cache.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { isUuid, uuidv7 } from '../ids.js';
import { longerThan } from '../text.js';
import { emailKey } from '../email.js';
import { Id, StringEnum, Timestamp } from '../http/schemas.js';
import {
  ACKNOWLEDGE_DAYS, COMPLETION_DAYS, DAY_MS, REQUEST_TYPES, TOPIC_OF, appStateOf, appStatesOf, findRequest, listRequests, requestView,
  type GdprMetadata, type GdprRequestStatus, type GdprRequestType,
} from './gdpr.repo.js';
import { createGdprDeliveries, type GdprApp } from './gdpr.deliveries.js';
import { settleRequest } from './gdpr.state.js';
import { applyDeadlines } from './gdpr.deadlines.js';
import { gdprDispatcher } from './gdpr.dispatch.js';
import { deliverLater } from '../mail/mail.js';

export interface GdprRequestInput {
  customerId?: unknown;
  customerEmail?: unknown;
  customerPhone?: unknown;
  ordersRequested?: unknown;
}

/** The 201 body's `data` (C9.1): the new request, still pending. */
export const CreatedRequestSchema = Type.Object({
  requestId: Id(),
  requestType: StringEnum(REQUEST_TYPES),
  status: StringEnum(['pending'] as const),
  acknowledgeDeadline: Timestamp(),
  completionDeadline: Timestamp(),
  appsNotified: Type.Integer({ description: 'how many installed apps are notified' }),
  ordersToRedact: Type.Optional(Type.Integer({ description: 'customer redactions only: how many of the customer\'s orders are to be redacted' })),
});

export interface CreatedRequest {
  /** The 201 body's `data` (C9.1). */
  data: Static<typeof CreatedRequestSchema>;
  requestId: string;
  deliveryIds: string[];
}

function optionalText(name: string, value: unknown, max = 320): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw badRequest(`${name} must be a string`);
  const v = value.trim();
  if (longerThan(v, max)) throw badRequest(`${name} is too long`);
  return v || null;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

export interface GdprCustomer {
  id: string | null;
  email: string | null;
  phone: string | null;
}

/** The customer of a request: by id (which must be the store's), else by email when one matches. */
async function resolveCustomer(q: Queryable, storeId: string, id: string | null, email: string | null, phone: string | null): Promise<GdprCustomer> {
  if (id !== null) {
    const { rows } = isUuid(id)
      ? await q.query<{ id: string; email: string; phone: string | null }>('SELECT id, email, phone FROM customers WHERE id = $1 AND store_id = $2', [id, storeId])
      : { rows: [] };
    if (!rows[0]) throw notFound('Customer not found in this store');
    return { id: rows[0].id, email: email ?? rows[0].email, phone: phone ?? rows[0].phone };
  }
  if (email !== null) {
    const { rows } = await q.query<{ id: string; phone: string | null }>(
      'SELECT id, phone FROM customers WHERE store_id = $1 AND lower(email) = lower($2)', [storeId, emailKey(email)],
    );
    return { id: rows[0]?.id ?? null, email, phone: phone ?? rows[0]?.phone ?? null };
  }
  return { id: null, email: null, phone };
}

/**
 * app-api.md GDPR webhooks: the body of each topic exactly (C2.5: shop_domain is the slug). Also
 * the test delivery's sample (src/webhooks/samples.ts).
 */
export function gdprPayload(
  type: GdprRequestType,
  r: { storeId: string; shopDomain: string; requestId: string; customer: GdprCustomer; ordersRequested: boolean; orderIds: string[] },
) {
  const shop = { shop_id: r.storeId, shop_domain: r.shopDomain };
  if (type === 'data_request') {
    return { ...shop, customer: { id: r.customer.id, email: r.customer.email, phone: r.customer.phone }, orders_requested: r.ordersRequested, data_request: { id: r.requestId } };
  }
  if (type === 'customer_redact') return { ...shop, customer: { id: r.customer.id, email: r.customer.email }, orders_to_redact: r.orderIds };
  return shop;
}

/** The customer's orders: linked to the customer, or unlinked with the customer's email. */
async function customerOrderIds(q: Queryable, storeId: string, c: GdprCustomer): Promise<string[]> {
  if (!c.id && !c.email) return [];
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM orders WHERE store_id = $1
       AND (($2::uuid IS NOT NULL AND customer_id = $2::uuid) OR (customer_id IS NULL AND $3::text IS NOT NULL AND lower(email) = lower($3::text)))
     ORDER BY created_at, id`,
    [storeId, c.id, c.email === null ? null : emailKey(c.email)],
  );
  return rows.map((r) => r.id);
}

/** C9.1: records the request, its apps and its webhook deliveries in one transaction. */
export async function createGdprRequest(
  deps: Deps,
  storeId: string,
  type: GdprRequestType,
  input: GdprRequestInput,
  requestedBy: string | null,
): Promise<CreatedRequest> {
  const customerId = type === 'shop_redact' ? null : optionalText('customerId', input.customerId, 100);
  const customerEmail = type === 'shop_redact' ? null : optionalText('customerEmail', input.customerEmail);
  const customerPhone = type === 'data_request' ? optionalText('customerPhone', input.customerPhone, 64) : null;
  if (customerEmail !== null && !EMAIL.test(customerEmail)) throw badRequest('customerEmail must be an email address');
  if (type === 'data_request' && customerId === null && customerEmail === null && customerPhone === null) {
    throw badRequest('customerId, customerEmail or customerPhone is required');
  }
  if (type === 'customer_redact' && customerId === null && customerEmail === null) throw badRequest('customerId or customerEmail is required');
  let ordersRequested = true;
  if (type === 'data_request' && input.ordersRequested !== undefined && input.ordersRequested !== null) {
    if (typeof input.ordersRequested !== 'boolean') throw badRequest('ordersRequested must be a boolean');
    ordersRequested = input.ordersRequested;
  }

  const now = deps.clock.now();
  const requestId = uuidv7(now.getTime());
  const acknowledgeDeadline = new Date(now.getTime() + ACKNOWLEDGE_DAYS * DAY_MS);
  const completionDeadline = new Date(now.getTime() + COMPLETION_DAYS * DAY_MS);
  const topic = TOPIC_OF[type];

  return deps.db.transaction(async (tx) => {
    const { rows: stores } = await tx.query<{ slug: string }>('SELECT slug FROM stores WHERE id = $1', [storeId]);
    if (!stores[0]) throw notFound('Store not found');
    const shopDomain = stores[0].slug;
    const customer = type === 'shop_redact' ? { id: null, email: null, phone: null } : await resolveCustomer(tx, storeId, customerId, customerEmail, customerPhone);
    const orderIds = type === 'customer_redact' ? await customerOrderIds(tx, storeId, customer) : [];

    const payload = JSON.stringify(gdprPayload(type, { storeId, shopDomain, requestId, customer, ordersRequested, orderIds }));
    const metadata: GdprMetadata = type === 'data_request' ? { ordersRequested } : type === 'customer_redact' ? { ordersToRedact: orderIds.length } : {};

    const { rows: apps } = await tx.query<GdprApp & { installation_id: string }>(
      `SELECT i.id AS installation_id, a.id AS app_id, a.gdpr_urls, a.client_secret_enc
         FROM installations i JOIN apps a ON a.id = i.app_id
        WHERE i.store_id = $1 AND i.status = 'active' ORDER BY i.created_at, a.id`,
      [storeId],
    );
    await tx.query(
      `INSERT INTO gdpr_requests (id, store_id, request_type, status, customer_id, customer_email, customer_phone, metadata, order_ids,
         topic, payload, requested_by, requested_at, acknowledge_deadline, completion_deadline, updated_at)
       VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11, $12, $13, $14, $12)`,
      [requestId, storeId, type, customer.id, customer.email, customer.phone, JSON.stringify(metadata), JSON.stringify(orderIds), topic, payload,
        requestedBy, now, acknowledgeDeadline, completionDeadline],
    );
    if (apps.length) {
      await tx.query(
        `INSERT INTO gdpr_request_apps (request_id, app_id, installation_id, status, updated_at)
         SELECT $1, app_id, installation_id, 'pending', $3 FROM jsonb_to_recordset($2::jsonb) AS x(app_id uuid, installation_id uuid)`,
        [requestId, JSON.stringify(apps.map((a) => ({ app_id: a.app_id, installation_id: a.installation_id }))), now],
      );
    }
    const deliveryIds = await createGdprDeliveries(tx, deps.secrets, { requestId, storeId, shopDomain, requestType: type, topic, payload }, apps, 'initial', now);
    const data: CreatedRequest['data'] = {
      requestId,
      requestType: type,
      status: 'pending',
      acknowledgeDeadline: acknowledgeDeadline.toISOString(),
      completionDeadline: completionDeadline.toISOString(),
      appsNotified: apps.length,
    };
    if (type === 'customer_redact') data.ordersToRedact = orderIds.length;
    return { data, requestId, deliveryIds };
  });
}

/** One request of the store with every app's state; another store's -> 403 by the caller's check. */
export async function getGdprRequest(deps: Deps, requestId: string) {
  if (!isUuid(requestId)) throw notFound('GDPR request not found');
  const req = await findRequest(deps.db, requestId);
  if (!req) throw notFound('GDPR request not found');
  const apps = (await appStatesOf(deps.db, [req.id])).get(req.id) ?? [];
  return { storeId: req.store_id, view: requestView(req, apps) };
}

export async function listGdprRequests(
  deps: Deps,
  storeId: string,
  opts: { status?: GdprRequestStatus; requestType?: GdprRequestType; limit: number; offset: number },
) {
  const { rows, total } = await listRequests(deps.db, storeId, opts);
  const apps = await appStatesOf(deps.db, rows.map((r) => r.id));
  return { requests: rows.map((r) => requestView(r, apps.get(r.id) ?? [])), total };
}

/** The 409 of an app's call once the app failed the request (C9.3), however it came to fail. */
const failedByApp = (errorMessage: string | null) => conflict(`This app already failed the request: ${errorMessage ?? 'deadline missed'}`);

/**
 * C9.2: an app acknowledges or completes a request it was notified of, on the store of its token.
 * Both are accepted whatever became of the webhook's HTTP delivery (app-api.md GDPR routes), and
 * repeating one is harmless. A failed app's state is final (409). The answer shows the request
 * with the calling app's own state only: other apps' names are not another developer's business.
 *
 * The deadlines hold at the call, not from the daily job's next run on (app-api.md GDPR webhooks):
 * the job's own rule (gdpr.deadlines.ts `applyDeadlines`) is applied to the request first, under its
 * lock, so a late app is failed exactly as the job would fail it (the merchant notified, a final
 * notice for a missed acknowledgment) and answered 409. That failure is committed, not rolled back
 * with the refused call.
 */
export async function appGdprAction(
  deps: Deps,
  caller: TokenInfo,
  requestId: string,
  action: 'acknowledge' | 'complete',
  dataExportUrl: string | null = null,
) {
  if (!isUuid(requestId)) throw notFound('GDPR request not found');
  const out = await deps.db.transaction(async (tx) => {
    let req = await findRequest(tx, requestId, { storeId: caller.storeId, lock: true });
    const mine = req && (await appStateOf(tx, requestId, caller.appId));
    if (!req || !mine) throw notFound('GDPR request not found, or this app was not notified of it');
    if (mine.status === 'failed') throw failedByApp(mine.error_message);
    const now = deps.clock.now();
    const before = (await appStatesOf(tx, [requestId])).get(requestId) ?? [];
    const deadlines = await applyDeadlines(deps, tx, req, before, now, { reminders: false });
    req = deadlines.req;
    const late = before.find((a) => a.app_id === caller.appId && a.status === 'failed');
    if (late) return { deadlines, late };

    if (action === 'acknowledge' && mine.status === 'pending') {
      await tx.query(`UPDATE gdpr_request_apps SET status = 'acknowledged', acknowledged_at = $3, updated_at = $3 WHERE request_id = $1 AND app_id = $2`, [
        requestId, caller.appId, now,
      ]);
    } else if (action === 'complete') {
      await tx.query(
        `UPDATE gdpr_request_apps SET status = 'completed', acknowledged_at = coalesce(acknowledged_at, $3), completed_at = coalesce(completed_at, $3),
           data_export_url = coalesce($4, data_export_url), updated_at = $3 WHERE request_id = $1 AND app_id = $2`,
        [requestId, caller.appId, now, dataExportUrl],
      );
      if (dataExportUrl !== null) {
        await tx.query('UPDATE gdpr_requests SET data_export_url = $2, updated_at = $3 WHERE id = $1', [requestId, dataExportUrl, now]);
        req = { ...req, data_export_url: dataExportUrl };
      }
    }
    const apps = (await appStatesOf(tx, [requestId])).get(requestId) ?? [];
    req = await settleRequest(tx, req, apps, now);
    // The app's own state and its own export: another app's link to the customer's data (a signed
    // URL, often) is not another developer's business.
    const own = apps.filter((a) => a.app_id === caller.appId);
    return { deadlines, view: { ...requestView(req, own), dataExportUrl: own[0]?.data_export_url ?? null } };
  });
  // As the job does once its transaction committed: the merchant's emails, then the final notices.
  deliverLater(deps, out.deadlines.mails);
  gdprDispatcher(deps).send(requestId, out.deadlines.deliveryIds);
  if (out.late) throw failedByApp(out.late.error_message);
  return out.view;
}
