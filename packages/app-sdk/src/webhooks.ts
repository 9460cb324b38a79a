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
  /** `X-SVC-Shop-Domain`: the store's slug. */
  shop: string;
  /** `X-SVC-Api-Version`. */
  apiVersion: string | null;
  payload: T;
}

export type Refusal = { ok: false; reason: 'missing signature' | 'bad signature' | 'not JSON' };

/** Verifies a webhook or rate request with the app's client secret and parses its JSON body. */
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
  return {
    ok: true,
    topic: header(input.headers, 'x-svc-topic') ?? '',
    shop: header(input.headers, 'x-svc-shop-domain') ?? '',
    apiVersion: header(input.headers, 'x-svc-api-version'),
    payload,
  };
}
