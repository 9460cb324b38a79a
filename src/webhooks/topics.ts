import type { DeliverySource } from './deliveries.repo.js';

// app-api.md Events: the fixed list of subscribable topics, plus the mandatory GDPR topics (C6.4).
export const EVENT_TOPICS = [
  'orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled', 'orders/fulfilled', 'orders/delete',
  'refunds/create',
  'products/create', 'products/update', 'products/delete',
  'customers/create', 'customers/update', 'customers/delete',
  'inventory_levels/update',
  'fulfillments/create', 'fulfillments/update',
  'subscriptions/create', 'subscriptions/renew', 'subscriptions/update', 'subscriptions/payment_failed', 'subscriptions/cancelled',
] as const;
export const GDPR_TOPICS = ['customers/data_request', 'customers/redact', 'shop/redact'] as const;
export type EventTopic = (typeof EVENT_TOPICS)[number];
export type GdprTopic = (typeof GDPR_TOPICS)[number];
export type Topic = EventTopic | GdprTopic;

/** Every topic the platform delivers (test deliveries take any of them, issue 14). */
export const TOPICS: readonly Topic[] = [...EVENT_TOPICS, ...GDPR_TOPICS];

const ALL = new Set<string>(TOPICS);
export const isSubscribableTopic = (t: unknown): t is Topic => typeof t === 'string' && ALL.has(t);

/**
 * The read scope an installation needs to subscribe to a topic (C6.4, C14.10); null for none.
 * Products and inventory levels accept either of two scopes, so the answer is a list: any one will do.
 */
export function topicReadScopes(topic: Topic): string[] | null {
  if (topic === 'shop/redact') return null;
  const group = topic.slice(0, topic.indexOf('/'));
  // C6.4: read_products or read_inventory opens the product and inventory-level topics alike.
  if (group === 'products' || group === 'inventory_levels') return ['read_products', 'read_inventory'];
  if (group === 'customers') return ['read_customers'];
  // orders, refunds, fulfillments and subscriptions
  return ['read_orders'];
}

/**
 * Whether `scopes` hold `topic`'s read scope (C6.4, C4.6): the subscription endpoint's 403, and the
 * heart of `appTargetTakesTopic`, the rule of fan-out and of the check made again before each attempt.
 */
export function scopesAllowTopic(scopes: readonly string[], topic: string): boolean {
  const needed = isSubscribableTopic(topic) ? topicReadScopes(topic) : null;
  return !needed || needed.some((s) => scopes.includes(s));
}

/**
 * The one rule of what an app may receive, at fan-out (fanout.ts) and again before every attempt
 * (deliveries.repo.ts `targetGone`, as 'scope_withdrawn'): a delivery to an app's target, an API
 * subscription or a manifest webhook (`extensions.webhooks`) alike, needs the installation to hold
 * the topic's read scope now (`scopes`: the installation's scopes as they are at that moment).
 *
 * - app-api.md Scopes: `read_customers` covers customers, `read_orders` orders, and so on; the
 *   manifest is no way around that table.
 * - app-api.md Rules 2: a token lacking the scope an endpoint requires yields 403; a webhook carries
 *   the same data, so it is owed only to the same scopes.
 * - C6.4: an API subscription is refused (403) when the installation lacks the topic's read scope.
 * - C8.2 lists "each manifest webhook" of an app actively installed on the store as a target; read
 *   with the Scopes table, that is each one whose topic the granted scopes open (docs/decisions.md).
 * - The one exception, app-api.md `orders/create`: "Every installed shipping app receives every
 *   `orders/create`; an app acts only when `source` equals its own handle." A shipping app is one
 *   installed with `write_shipping` (C15.3), so `orders/create` goes to its subscription or manifest
 *   targets without `read_orders`; no other topic does.
 *
 * Other sources are not an app's data access: store-level webhooks are the merchant's own, GDPR
 * webhooks are owed to every app (C9), and a test delivery carries a sample. They always pass.
 * No scopes known for an app's target (no installation row) means nothing is delivered.
 */
export function appTargetTakesTopic(source: DeliverySource, scopes: readonly string[] | null, topic: string): boolean {
  if (source !== 'subscription' && source !== 'manifest') return true;
  if (!Array.isArray(scopes)) return false;
  if (scopesAllowTopic(scopes, topic)) return true;
  return topic === 'orders/create' && scopes.includes('write_shipping');
}

export const isEventTopic = (t: unknown): t is EventTopic => typeof t === 'string' && (EVENT_TOPICS as readonly string[]).includes(t);
