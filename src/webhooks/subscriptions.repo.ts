// Webhook subscriptions' SQL: an app's (webhook_subscriptions, per installation) and a store's own
// (store_webhooks). Secrets are stored sealed (deps.secrets); the callers seal and open them.
import type { Queryable } from '../db/db.js';
import { insertRow } from '../db/sql.js';

export interface SubscriptionRow {
  id: string;
  topic: string;
  address: string;
  secret_enc: string;
  api_version: string;
  created_at: Date;
  updated_at: Date;
}

export interface StoreWebhookRow extends SubscriptionRow {
  store_id: string;
}

/** The unique constraints a duplicate subscription (same topic and address) runs into. */
export const DUPLICATE_SUBSCRIPTION = 'webhook_subscriptions_installation_id_topic_address_key';
export const DUPLICATE_STORE_WEBHOOK = 'store_webhooks_store_id_topic_address_key';

export async function insertSubscription(
  q: Queryable,
  row: { id: string; installation_id: string; app_id: string; store_id: string; topic: string; address: string; secret_enc: string; api_version: string; now: Date },
): Promise<SubscriptionRow> {
  const { now, ...rest } = row;
  const { rows } = await insertRow<SubscriptionRow>(q, 'webhook_subscriptions', { ...rest, created_at: now, updated_at: now }, { returning: '*' });
  return rows[0];
}

/**
 * One page of the installation's subscriptions, newest first (id breaks ties: a total order, so
 * pages neither repeat nor skip a row), and whether more follow: one row past the page is read.
 */
export async function subscriptionsOfInstallation(
  q: Queryable, installationId: string, page: { limit: number; offset: number },
): Promise<{ rows: SubscriptionRow[]; hasNext: boolean }> {
  const { rows } = await q.query<SubscriptionRow>(
    'SELECT * FROM webhook_subscriptions WHERE installation_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3',
    [installationId, page.limit + 1, page.offset],
  );
  return { rows: rows.slice(0, page.limit), hasNext: rows.length > page.limit };
}

/** Whether the installation had that subscription (it is gone either way). */
export async function deleteSubscriptionRow(q: Queryable, installationId: string, id: string): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM webhook_subscriptions WHERE id = $1 AND installation_id = $2', [id, installationId]);
  return rowCount > 0;
}

export async function insertStoreWebhook(
  q: Queryable,
  row: { id: string; store_id: string; topic: string; address: string; secret_enc: string; created_by: string; now: Date },
): Promise<StoreWebhookRow> {
  const { now, ...rest } = row;
  const { rows } = await insertRow<StoreWebhookRow>(q, 'store_webhooks', { ...rest, created_at: now, updated_at: now }, { returning: '*' });
  return rows[0];
}

/** The store's own webhooks, newest first, and how many there are. */
export async function storeWebhooksOf(q: Queryable, storeId: string, page: { limit: number; offset: number }) {
  const [rows, total] = await Promise.all([
    q.query<StoreWebhookRow>('SELECT * FROM store_webhooks WHERE store_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3', [storeId, page.limit, page.offset]),
    q.query<{ n: number }>('SELECT count(*)::int AS n FROM store_webhooks WHERE store_id = $1', [storeId]),
  ]);
  return { rows: rows.rows, total: total.rows[0].n };
}

export async function deleteStoreWebhookRow(q: Queryable, storeId: string, id: string): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM store_webhooks WHERE id = $1 AND store_id = $2', [id, storeId]);
  return rowCount > 0;
}
