// Receiving what the platform sends (C8.3 webhooks, C15.3 rate requests), framework-neutral: give
// the raw body and the headers (a Web `Headers`, or Node's `IncomingMessage.headers`), get either
// the verified, parsed message or the reason it was refused.
import { assertSecret, SIGNATURE_HEADER, verifyBodySignature } from './signatures.js';

export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

/**
 * One header's value, the name in any case (HTTP field names are case-insensitive: a saved request,
 * or a serverless event, keeps the sender's `X-SVC-Hmac-SHA256`). A header sent more than once
 * (an array, as `req.headersDistinct` or a multi-value event gives it, or two keys differing in
 * case) is its values joined with ", ", as Node and fetch join a repeated field: a repeated
 * signature is then never a valid one, whichever copy comes first.
 */
export function headerValue(headers: HeaderBag, name: string): string | null {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    if (Array.isArray(value)) values.push(...value);
    else values.push(value);
  }
  return values.length === 0 ? null : values.join(', ');
}
const header = headerValue;

export interface VerifiedMessage<T = unknown> {
  ok: true;
  /** `X-SVC-Topic`: e.g. `orders/create`, `customers/redact`, `shipping/rates`. */
  topic: string;
  /**
   * The store's slug (C2.5). For the GDPR topics it is the signed body's `shop_domain` (a different
   * `X-SVC-Shop-Domain` is refused, and so is a body whose `shop_domain` is null: the header is
   * never taken for them); for every other topic it is `X-SVC-Shop-Domain`, which no signature
   * covers (app-api.md Signature: the HMAC is over the body only).
   */
  shop: string;
  /** `X-SVC-Api-Version`. */
  apiVersion: string | null;
  payload: T;
}

export type Refusal = {
  ok: false;
  reason: 'missing signature' | 'bad signature' | 'not JSON' | 'shop mismatch' | 'request id mismatch' | 'topic mismatch' | 'no signed shop';
};

/** The GDPR topics (C9): their bodies name the store, signed, and a data request its id. */
export const GDPR_TOPICS = ['customers/data_request', 'customers/redact', 'shop/redact'] as const;
type GdprTopicName = (typeof GDPR_TOPICS)[number];

/** Whether a topic is one of the three GDPR topics. */
export function isGdprTopic(topic: string): topic is GdprTopicName {
  return (GDPR_TOPICS as readonly string[]).includes(topic);
}

// The GDPR bodies' shapes (app-api.md GDPR webhooks table), checked because the topic is an unsigned
// header: a genuine customers/redact, or any body the platform signed for the app (a rate request,
// an orders/create), replayed with `X-SVC-Topic: shop/redact` verified, and an app erased the whole
// store. Each topic's top-level keys are exactly its own, so no signed body passes as another GDPR
// topic (only GDPR bodies carry `shop_id`; the three differ in `customer`, `orders_to_redact`,
// `orders_requested` and `data_request`).
type Check = (value: unknown) => boolean;
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isString: Check = (value) => typeof value === 'string';
const isStringOrNull: Check = (value) => value === null || typeof value === 'string';
const isBoolean: Check = (value) => typeof value === 'boolean';
const isStringArray: Check = (value) => Array.isArray(value) && value.every(isString);
/** An object with at least these keys, each passing its check (nested objects may grow: only the top level tells topics apart). */
const objectWith = (fields: Record<string, Check>): Check => (value) =>
  isRecord(value) && Object.entries(fields).every(([key, check]) => Object.hasOwn(value, key) && check(value[key]));

const GDPR_BODIES: Record<GdprTopicName, Record<string, Check>> = {
  'customers/data_request': {
    shop_id: isString, shop_domain: isStringOrNull,
    customer: objectWith({ id: isStringOrNull, email: isStringOrNull, phone: isStringOrNull }),
    orders_requested: isBoolean,
    data_request: objectWith({ id: isString }),
  },
  'customers/redact': {
    shop_id: isString, shop_domain: isStringOrNull,
    customer: objectWith({ id: isStringOrNull, email: isStringOrNull }),
    orders_to_redact: isStringArray,
  },
  'shop/redact': { shop_id: isString, shop_domain: isStringOrNull },
};

/** Whether a body is the one app-api.md gives for this GDPR topic: its keys exactly, each of its type. */
function isGdprBodyOf(topic: GdprTopicName, payload: unknown): boolean {
  const fields = GDPR_BODIES[topic];
  if (!isRecord(payload)) return false;
  const keys = Object.keys(payload);
  return keys.length === Object.keys(fields).length && keys.every((key) => Object.hasOwn(fields, key) && fields[key](payload[key]));
}

/**
 * A GDPR delivery's store, from its signed body. The headers are not signed: a genuine
 * `shop/redact` or `customers/redact` of one store, replayed with another store's
 * `X-SVC-Shop-Domain`, verified, and the app erased that other store's data. So the body's
 * `shop_domain` (the slug the header carries, C2.5) must equal the header and is the shop given,
 * and a data request's `data_request.id` must equal `X-SVC-Gdpr-Request-Id` (the request the app
 * then completes). A body whose `shop_domain` is null (app-api.md allows it) names no store the
 * app can trust: refused, never the header's store.
 */
function gdprShop(payload: { shop_domain: string | null }, headers: HeaderBag, headerShop: string | null): { ok: true; shop: string } | Refusal {
  const signedShop = payload.shop_domain;
  if (signedShop === null) return { ok: false, reason: 'no signed shop' };
  if (headerShop !== null && signedShop !== headerShop) return { ok: false, reason: 'shop mismatch' };
  const signedId = signedRequestId(payload);
  const headerId = header(headers, 'x-svc-gdpr-request-id');
  if (signedId !== null && headerId !== null && signedId !== headerId) return { ok: false, reason: 'request id mismatch' };
  return { ok: true, shop: signedShop };
}

/** A data request's `data_request.id`, when its (signed) body carries one. */
export function signedRequestId(payload: unknown): string | null {
  const id = (payload as { data_request?: { id?: unknown } | null } | null)?.data_request?.id;
  return typeof id === 'string' ? id : null;
}

/**
 * Verifies a webhook or rate request with the app's client secret and parses its JSON body. A GDPR
 * topic is taken only with that topic's own body (`topic mismatch` otherwise) and the store its
 * body names (`no signed shop`, `shop mismatch`, `request id mismatch`).
 */
export function verifyMessage<T = unknown>(input: { rawBody: string | Uint8Array; headers: HeaderBag; secret: string }): VerifiedMessage<T> | Refusal {
  assertSecret(input.secret);
  const signature = header(input.headers, SIGNATURE_HEADER);
  if (!signature) return { ok: false, reason: 'missing signature' };
  if (!verifyBodySignature(input.rawBody, signature, input.secret)) return { ok: false, reason: 'bad signature' };
  let payload: T;
  try {
    payload = JSON.parse(typeof input.rawBody === 'string' ? input.rawBody : Buffer.from(input.rawBody).toString('utf8')) as T;
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const topic = header(input.headers, 'x-svc-topic') ?? '';
  let shop = header(input.headers, 'x-svc-shop-domain');
  if (isGdprTopic(topic)) {
    if (!isGdprBodyOf(topic, payload)) return { ok: false, reason: 'topic mismatch' };
    const signed = gdprShop(payload as { shop_domain: string | null }, input.headers, shop);
    if (!signed.ok) return signed;
    shop = signed.shop;
  }
  return { ok: true, topic, shop: shop ?? '', apiVersion: header(input.headers, 'x-svc-api-version'), payload };
}
