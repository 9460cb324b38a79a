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
 * Whether an installation holding `scopes` may receive `topic` through an API subscription (C6.4,
 * C4.6): the one rule of fan-out and of the check made again before each attempt.
 */
export function scopesAllowTopic(scopes: readonly string[], topic: string): boolean {
  const needed = isSubscribableTopic(topic) ? topicReadScopes(topic) : null;
  return !needed || needed.some((s) => scopes.includes(s));
}

export const isEventTopic = (t: unknown): t is EventTopic => typeof t === 'string' && (EVENT_TOPICS as readonly string[]).includes(t);
