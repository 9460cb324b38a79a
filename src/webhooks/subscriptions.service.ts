// Webhook subscriptions: an app's, through the App API (C6.4), and a store's own, from the
// merchant admin (C6.5). Both check the topic, the address (C8.9) and duplicates the same way.
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { forbidden, notFound, unprocessable } from '../http/errors.js';
import { isUuid, randomToken, uuidv7 } from '../ids.js';
import { checkTargetUrl } from '../net/address-safety.js';
import { isUniqueViolation } from '../db/errors.js';
import { hasScope, type Scope } from '../oauth/scopes.js';
import type { TokenInfo } from '../oauth/token-cache.js';
import { API_VERSION } from '../api/app-api.js';
import { isEventTopic, isSubscribableTopic, topicReadScopes, type Topic } from './topics.js';

export const newWebhookSecret = () => randomToken('svcwh', 32);

interface SubscriptionRow {
  id: string;
  topic: string;
  address: string;
  secret_enc: string;
  api_version: string;
  created_at: Date;
  updated_at: Date;
}

/** `{ webhook: { topic, address } }` or a flat `{ topic, address }` (C6.4). */
function readInput(body: unknown): { topic: unknown; address: unknown } {
  const b = (body ?? {}) as Record<string, any>;
  const inner = b.webhook && typeof b.webhook === 'object' ? b.webhook : b;
  return { topic: inner.topic, address: inner.address };
}

async function checkAddress(deps: Deps, address: unknown): Promise<string> {
  const check = await checkTargetUrl(address, deps.config.allowPrivateWebhooks);
  if (!check.ok) throw unprocessable(`address ${check.reason}`, { address: [check.reason] });
  return check.url.toString();
}

const duplicate = () => unprocessable('address already has a subscription to this topic', { address: ['already has a subscription to this topic'] });

export function subscriptionView(row: SubscriptionRow, secret?: string) {
  return {
    id: row.id,
    topic: row.topic,
    address: row.address,
    format: 'json' as const,
    api_version: row.api_version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(secret === undefined ? {} : { secret }),
  };
}

export async function createSubscription(deps: Deps, caller: TokenInfo, body: unknown) {
  const input = readInput(body);
  if (!isSubscribableTopic(input.topic)) throw unprocessable('topic is not a subscribable topic', { topic: ['is not a subscribable topic'] });
  const topic: Topic = input.topic;
  const scopes = topicReadScopes(topic);
  if (scopes && !scopes.some((s) => hasScope(caller.scopes, s as Scope))) {
    throw forbidden(`Subscribing to ${topic} requires the ${scopes.join(' or ')} scope`);
  }
  const address = await checkAddress(deps, input.address);
  const secret = newWebhookSecret();
  const now = deps.clock.now();
  try {
    const { rows } = await deps.db.query<SubscriptionRow>(
      `INSERT INTO webhook_subscriptions (id, installation_id, app_id, store_id, topic, address, secret_enc, api_version, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING *`,
      [uuidv7(now.getTime()), caller.installationId, caller.appId, caller.storeId, topic, address, deps.secrets.seal(secret), API_VERSION, now],
    );
    return { webhook: subscriptionView(rows[0], secret) };
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate();
    throw err;
  }
}

export async function listSubscriptions(q: Queryable, caller: TokenInfo) {
  const { rows } = await q.query<SubscriptionRow>(
    'SELECT * FROM webhook_subscriptions WHERE installation_id = $1 ORDER BY created_at DESC, id DESC',
    [caller.installationId],
  );
  return { webhooks: rows.map((r) => subscriptionView(r)) };
}

export async function deleteSubscription(q: Queryable, caller: TokenInfo, id: string) {
  const { rowCount } = isUuid(id)
    ? await q.query('DELETE FROM webhook_subscriptions WHERE id = $1 AND installation_id = $2', [id, caller.installationId])
    : { rowCount: 0 };
  if (!rowCount) throw notFound('Webhook not found');
  return {};
}

// ---- store-level webhooks (C6.5) --------------------------------------------------------------

interface StoreWebhookRow extends SubscriptionRow {
  store_id: string;
}

function storeWebhookView(deps: Deps, row: StoreWebhookRow) {
  return {
    id: row.id,
    topic: row.topic,
    address: row.address,
    format: 'json' as const,
    apiVersion: API_VERSION,
    secret: deps.secrets.open(row.secret_enc),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function createStoreWebhook(deps: Deps, storeId: string, userId: string, body: unknown) {
  const input = readInput(body);
  // GDPR topics are app obligations; a store's own webhooks take the event topics.
  if (!isEventTopic(input.topic)) throw unprocessable('topic is not a subscribable topic');
  const address = await checkAddress(deps, input.address);
  const now = deps.clock.now();
  try {
    const { rows } = await deps.db.query<StoreWebhookRow>(
      `INSERT INTO store_webhooks (id, store_id, topic, address, secret_enc, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING *`,
      [uuidv7(now.getTime()), storeId, input.topic, address, deps.secrets.seal(newWebhookSecret()), userId, now],
    );
    return { webhook: storeWebhookView(deps, rows[0]) };
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate();
    throw err;
  }
}

export async function listStoreWebhooks(deps: Deps, storeId: string, page: { limit: number; offset: number }) {
  const [rows, total] = await Promise.all([
    deps.db.query<StoreWebhookRow>('SELECT * FROM store_webhooks WHERE store_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3', [
      storeId, page.limit, page.offset,
    ]),
    deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM store_webhooks WHERE store_id = $1', [storeId]),
  ]);
  return { webhooks: rows.rows.map((r) => storeWebhookView(deps, r)), total: total.rows[0].n };
}

export async function deleteStoreWebhook(deps: Deps, storeId: string, id: string) {
  const { rowCount } = isUuid(id)
    ? await deps.db.query('DELETE FROM store_webhooks WHERE id = $1 AND store_id = $2', [id, storeId])
    : { rowCount: 0 };
  if (!rowCount) throw notFound('Webhook not found');
}
