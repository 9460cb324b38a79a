// Webhook subscriptions: an app's, through the App API (C6.4), and a store's own, from the
// merchant admin (C6.5). Both check the topic, the address (C8.9) and duplicates the same way.
import { Type, type Static } from 'typebox';
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { forbidden, notFound, unprocessable } from '../http/errors.js';
import { isUuid, randomToken, uuidv7 } from '../ids.js';
import { checkTargetUrl } from '../net/address-safety.js';
import { isUniqueViolation } from '../db/errors.js';
import { hasScope, type Scope } from '../oauth/scopes.js';
import type { TokenInfo } from '../oauth/token-cache.js';
import { API_VERSION } from '../api-version.js';
import { Id, Timestamp } from '../http/schemas.js';
import type { Page } from '../http/paging.js';
import { isEventTopic, isSubscribableTopic, topicReadScopes, type Topic } from './topics.js';
import {
  DUPLICATE_STORE_WEBHOOK, DUPLICATE_SUBSCRIPTION, deleteStoreWebhookRow, deleteSubscriptionRow, insertStoreWebhook, insertSubscription,
  storeWebhooksOf, subscriptionsOfInstallation, type StoreWebhookRow, type SubscriptionRow,
} from './subscriptions.repo.js';

export const newWebhookSecret = () => randomToken('svcwh', 32);

/**
 * Most API subscriptions of one installation (C6.4) and store-level webhooks of one store (C6.5).
 * Each is one delivery per event, so their count multiplies the fan-out, as manifest webhooks'
 * does (app-input.ts MAX_MANIFEST_WEBHOOKS, the same bound): without one, an app could make every
 * order of a store thousands of deliveries, all fanned out in one transaction. Counted under an
 * advisory lock per installation or store, so concurrent creates cannot pass it together.
 */
export const MAX_SUBSCRIPTIONS_PER_INSTALLATION = 100;
export const MAX_STORE_WEBHOOKS = 100;

/** Insert under the bound: lock the owner, count its rows, insert; one transaction. */
async function insertBounded<T>(deps: Deps, lockKey: string, countSql: string, ownerId: string, max: number, refuse: () => Error, insert: (tx: Queryable) => Promise<T>): Promise<T> {
  return deps.db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey]);
    const { rows } = await tx.query<{ n: number }>(countSql, [ownerId]);
    if (rows[0].n >= max) throw refuse();
    return insert(tx);
  });
}

/**
 * The body of both creates: `{ topic, address }`, flat or wrapped as `{ webhook: { ... } }` (both
 * routes say `config.bodyKey: 'webhook'`, which unwraps it before validation). Both fields are strings,
 * but neither is typed in the schema: C6.4 answers a topic outside the subscribable list, and an
 * address that is not a URL, with a 422 in the route's error shape, and a missing or non-string
 * value is such a topic or address (a schema failure would be a 400). The creates below check them.
 */
export const SubscriptionBody = Type.Object({
  topic: Type.Optional(Type.Unknown({ description: 'a topic string, e.g. `orders/create`; missing, not a string or not subscribable -> 422' })),
  address: Type.Optional(Type.Unknown({
    description: 'an absolute https URL (http while private addresses are allowed, C8.9); missing, not a string, not such a URL or a private address -> 422',
  })),
});

/** C8.9 when an address is saved (or a test delivery asked for): 422 with the reason, else the normalised URL. */
export async function checkAddress(deps: Pick<Deps, 'config'>, address: unknown): Promise<string> {
  const check = await checkTargetUrl(address, deps.config.allowPrivateWebhooks);
  if (!check.ok) throw unprocessable(`address ${check.reason}`, { address: [check.reason] });
  return check.url.toString();
}

const duplicate = () => unprocessable('address already has a subscription to this topic', { address: ['already has a subscription to this topic'] });

/** An app's subscription (C6.4); `secret` only in the create response. */
export const SubscriptionSchema = Type.Object({
  id: Id(),
  topic: Type.String(),
  address: Type.String(),
  format: Type.Literal('json'),
  api_version: Type.String({ description: 'the API version the payloads follow, e.g. 2026-06' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  secret: Type.Optional(Type.String({ description: 'the signing secret (`svcwh_...`); in the create response only' })),
});

export function subscriptionView(row: SubscriptionRow, secret?: string): Static<typeof SubscriptionSchema> {
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

export async function createSubscription(deps: Deps, caller: TokenInfo, body: Static<typeof SubscriptionBody>) {
  if (!isSubscribableTopic(body.topic)) throw unprocessable('topic is not a subscribable topic', { topic: ['is not a subscribable topic'] });
  const topic: Topic = body.topic;
  const scopes = topicReadScopes(topic);
  if (scopes && !scopes.some((s) => hasScope(caller.scopes, s as Scope))) {
    throw forbidden(`Subscribing to ${topic} requires the ${scopes.join(' or ')} scope`);
  }
  const address = await checkAddress(deps, body.address);
  const secret = newWebhookSecret();
  const now = deps.clock.now();
  try {
    const row = await insertBounded(
      deps, `webhook-subscriptions:${caller.installationId}`, 'SELECT count(*)::int AS n FROM webhook_subscriptions WHERE installation_id = $1',
      caller.installationId, MAX_SUBSCRIPTIONS_PER_INSTALLATION,
      () => unprocessable(`at most ${MAX_SUBSCRIPTIONS_PER_INSTALLATION} subscriptions per installation`, {
        webhook: [`at most ${MAX_SUBSCRIPTIONS_PER_INSTALLATION} subscriptions per installation`],
      }),
      (tx) => insertSubscription(tx, {
        id: uuidv7(now.getTime()), installation_id: caller.installationId, app_id: caller.appId, store_id: caller.storeId, topic, address,
        secret_enc: deps.secrets.seal(secret), api_version: API_VERSION, now,
      }),
    );
    return { webhook: subscriptionView(row, secret) };
  } catch (err) {
    if (isUniqueViolation(err, DUPLICATE_SUBSCRIPTION)) throw duplicate();
    throw err;
  }
}

/** One page of the installation's subscriptions (C6.4, a bare-body list: the route writes the Link header, C5.4). */
export async function listSubscriptions(q: Queryable, caller: TokenInfo, page: Page) {
  const { rows, hasNext } = await subscriptionsOfInstallation(q, caller.installationId, page);
  return { webhooks: rows.map((r) => subscriptionView(r)), hasNext };
}

export async function deleteSubscription(q: Queryable, caller: TokenInfo, id: string) {
  const deleted = isUuid(id) && (await deleteSubscriptionRow(q, caller.installationId, id));
  if (!deleted) throw notFound('Webhook not found');
  return {};
}

// ---- store-level webhooks (C6.5) --------------------------------------------------------------

/** A store's own webhook (C6.5): camelCase, and the secret always included (C14.8). */
export const StoreWebhookSchema = Type.Object({
  id: Id(),
  topic: Type.String(),
  address: Type.String(),
  format: Type.Literal('json'),
  apiVersion: Type.String({ description: 'the API version the payloads follow, e.g. 2026-06' }),
  secret: Type.String({ description: 'the signing secret (`svcwh_...`)' }),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});

function storeWebhookView(deps: Deps, row: StoreWebhookRow): Static<typeof StoreWebhookSchema> {
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

export async function createStoreWebhook(deps: Deps, storeId: string, userId: string, body: Static<typeof SubscriptionBody>) {
  // GDPR topics are app obligations; a store's own webhooks take the event topics.
  if (!isEventTopic(body.topic)) throw unprocessable('topic is not a subscribable topic');
  const topic = body.topic;
  const address = await checkAddress(deps, body.address);
  const now = deps.clock.now();
  try {
    const row = await insertBounded(
      deps, `store-webhooks:${storeId}`, 'SELECT count(*)::int AS n FROM store_webhooks WHERE store_id = $1', storeId, MAX_STORE_WEBHOOKS,
      () => unprocessable(`at most ${MAX_STORE_WEBHOOKS} webhooks per store`),
      (tx) => insertStoreWebhook(tx, {
        id: uuidv7(now.getTime()), store_id: storeId, topic, address, secret_enc: deps.secrets.seal(newWebhookSecret()), created_by: userId, now,
      }),
    );
    return { webhook: storeWebhookView(deps, row) };
  } catch (err) {
    if (isUniqueViolation(err, DUPLICATE_STORE_WEBHOOK)) throw duplicate();
    throw err;
  }
}

export async function listStoreWebhooks(deps: Deps, storeId: string, page: { limit: number; offset: number }) {
  const { rows, total } = await storeWebhooksOf(deps.db, storeId, page);
  return { webhooks: rows.map((r) => storeWebhookView(deps, r)), total };
}

export async function deleteStoreWebhook(deps: Deps, storeId: string, id: string) {
  const deleted = isUuid(id) && (await deleteStoreWebhookRow(deps.db, storeId, id));
  if (deleted) return;
  // C7.1: another store's resource is a 403 on the merchant's routes, an unknown one a 404.
  const { rows } = isUuid(id) ? await deps.db.query('SELECT 1 FROM store_webhooks WHERE id = $1', [id]) : { rows: [] };
  if (rows.length) throw forbidden('This resource belongs to another store');
  throw notFound('Webhook not found');
}
