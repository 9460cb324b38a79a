// The bodies the documents give (app-api.md Events, C8.8, C9.1, C15.3), typed by topic, and
// `parseWebhook`: a verified message whose `topic` narrows its `payload`:
//
//   const msg = parseWebhook({ rawBody, headers, secret });
//   if (msg.ok && msg.topic === 'orders/create') msg.payload.shipping_lines[0]?.source;
//
// The `orders/create` body is the App API order (generated from docs/openapi.json) cut to
// app-api.md's field list, so it follows the order schema. Other topics (orders/updated, products/*,
// ...) carry the REST resource (C8.8) but their bodies are not pinned by the documents: they parse
// with `payload: unknown`. A topic outside the platform's fixed list is refused.
import type { paths } from './generated/openapi.js';
import type { RateRequest } from './rates.js';
import { GDPR_TOPICS, headerValue, isGdprTopic, signedRequestId, verifyMessage, type HeaderBag, type Refusal, type VerifiedMessage } from './webhooks.js';

/** The App API order (`GET /api/v1/orders/{id}.json`). */
export type RestOrder = paths['/api/v1/orders/{id}.json']['get']['responses'][200]['content']['application/json']['order'];

/** `orders/create`: exactly app-api.md's field list (C8.8). */
export type OrderCreatePayload = Pick<
  RestOrder,
  | 'id' | 'name' | 'order_number' | 'email' | 'phone' | 'financial_status' | 'fulfillment_status' | 'currency'
  | 'total_price' | 'subtotal_price' | 'shipping_price' | 'created_at' | 'shipping_lines'
> & {
  customer: Pick<NonNullable<RestOrder['customer']>, 'id' | 'first_name' | 'last_name' | 'email'> | null;
  shipping_address: Pick<NonNullable<RestOrder['shipping_address']>, 'address1' | 'address2' | 'city' | 'province' | 'country' | 'zip' | 'phone'> | null;
  line_items: Array<Pick<RestOrder['line_items'][number], 'id' | 'product_id' | 'variant_id' | 'title' | 'quantity' | 'price' | 'sku'>>;
};

export const SUBSCRIPTION_TOPICS = [
  'subscriptions/create', 'subscriptions/renew', 'subscriptions/update', 'subscriptions/payment_failed', 'subscriptions/cancelled',
] as const;
export type SubscriptionTopic = (typeof SUBSCRIPTION_TOPICS)[number];

/** The five subscription topics (app-api.md Subscription payload; C13). */
export interface SubscriptionPayload {
  orderId: string;
  invoiceId: string;
  storeId: string;
  subscriptionId: string;
  customerId: string;
  customerEmail: string;
  status: string;
  planName: string;
  amount: number;
  /** Lowercase code. */
  currency: string;
  billingInterval: string;
  billingIntervalCount: number;
  /** Unix seconds. */
  currentPeriodStart: number;
  currentPeriodEnd: number;
  trialEnd: number | null;
}

export { GDPR_TOPICS };
export type GdprTopic = (typeof GDPR_TOPICS)[number];

interface ShopFields {
  /** The store's id (UUID). */
  shop_id: string;
  /** The store's slug (C2.5). */
  shop_domain: string | null;
}

/** `customers/data_request`; `data_request.id` is the request id to acknowledge and complete. */
export interface CustomersDataRequestPayload extends ShopFields {
  customer: { id: string | null; email: string | null; phone: string | null };
  orders_requested: boolean;
  data_request: { id: string };
}

/** `customers/redact`: the request id is in the `X-SVC-Gdpr-Request-Id` header (`gdprRequestId`). */
export interface CustomersRedactPayload extends ShopFields {
  customer: { id: string | null; email: string | null };
  /** Order ids whose personal data goes as well. */
  orders_to_redact: string[];
}

/** `shop/redact`: delete everything about the store (within 90 days). */
export type ShopRedactPayload = ShopFields;

/** Topic -> payload, for the topics whose bodies the documents give. */
export interface TopicPayloads {
  'orders/create': OrderCreatePayload;
  'subscriptions/create': SubscriptionPayload;
  'subscriptions/renew': SubscriptionPayload;
  'subscriptions/update': SubscriptionPayload;
  'subscriptions/payment_failed': SubscriptionPayload;
  'subscriptions/cancelled': SubscriptionPayload;
  'customers/data_request': CustomersDataRequestPayload;
  'customers/redact': CustomersRedactPayload;
  'shop/redact': ShopRedactPayload;
  /** A live-rate request (C15.3). */
  'shipping/rates': RateRequest;
}
export type KnownTopic = keyof TopicPayloads;

export interface DeliveryFields {
  /** `X-SVC-Webhook-Id`: the same on every attempt of one delivery; the idempotency key. */
  webhookId: string | null;
  /** `X-SVC-Delivery-Attempt`: 1 for the first try. */
  attempt: number | null;
  /**
   * The request to acknowledge and complete, on GDPR deliveries: a data request's signed
   * `data_request.id`, else `X-SVC-Gdpr-Request-Id` (a header that differs from the signed id is
   * refused). The redact bodies carry no id: theirs is the unsigned header's. Null on every other
   * topic, whatever headers it came with.
   */
  gdprRequestId: string | null;
}

/** The platform's other topics (app-api.md Events, a fixed list): their bodies are not pinned by the documents. */
export const OTHER_TOPICS = [
  'orders/updated', 'orders/paid', 'orders/cancelled', 'orders/fulfilled', 'orders/delete', 'refunds/create',
  'products/create', 'products/update', 'products/delete', 'customers/create', 'customers/update', 'customers/delete',
  'inventory_levels/update', 'fulfillments/create', 'fulfillments/update',
] as const;
export type OtherTopic = (typeof OTHER_TOPICS)[number];

type Known = { [T in KnownTopic]: Omit<VerifiedMessage<TopicPayloads[T]>, 'topic'> & DeliveryFields & { topic: T } }[KnownTopic];
type Other = Omit<VerifiedMessage<unknown>, 'topic'> & DeliveryFields & { topic: OtherTopic };

/** A verified message, its payload typed by `topic` (`unknown` for the topics whose bodies the documents leave open). */
export type WebhookMessage = Known | Other;

/** Why `parseWebhook` refused: `verifyMessage`'s reasons, or a topic outside the platform's list. */
export type WebhookRefusal = Refusal | { ok: false; reason: 'unknown topic'; topic: string };

const ALL_TOPICS = new Set<string>([
  'orders/create', ...SUBSCRIPTION_TOPICS, ...GDPR_TOPICS, 'shipping/rates', ...OTHER_TOPICS,
]);

const header = headerValue;

/**
 * Verifies a webhook or rate request (`X-SVC-Hmac-SHA256` over the raw bytes, C8.3) and parses it
 * into a topic-discriminated message. The payload is the sender's JSON as it is: its type says what
 * the platform sends, it is not re-validated here, save the GDPR bodies, which `verifyMessage`
 * checks against their topic (the topic header is not signed; `topic mismatch`).
 */
export function parseWebhook(input: { rawBody: string | Uint8Array; headers: HeaderBag; secret: string }): WebhookMessage | WebhookRefusal {
  const verdict = verifyMessage(input);
  if (!verdict.ok) return verdict;
  if (!ALL_TOPICS.has(verdict.topic)) return { ok: false, reason: 'unknown topic', topic: verdict.topic };
  const attempt = header(input.headers, 'x-svc-delivery-attempt');
  return {
    ...verdict,
    webhookId: header(input.headers, 'x-svc-webhook-id'),
    attempt: attempt !== null && /^\d+$/.test(attempt) ? Number(attempt) : null,
    gdprRequestId: gdprRequestIdOf(verdict.topic, verdict.payload, input.headers),
  } as WebhookMessage;
}

/**
 * The GDPR request a delivery is about: only on the GDPR topics (null on any other, whatever
 * `X-SVC-Gdpr-Request-Id` says: an app that acts on a message with a request id would otherwise
 * acknowledge and complete a GDPR request on the strength of an orders/create or a rate request).
 */
function gdprRequestIdOf(topic: string, payload: unknown, headers: HeaderBag): string | null {
  if (!isGdprTopic(topic)) return null;
  return (topic === 'customers/data_request' ? signedRequestId(payload) : null) ?? header(headers, 'x-svc-gdpr-request-id');
}

/** Narrows a message to one topic (handy where a `switch` is too much). */
export function isTopic<T extends WebhookMessage['topic']>(message: WebhookMessage, topic: T): message is Extract<WebhookMessage, { topic: T }> {
  return message.topic === topic;
}
