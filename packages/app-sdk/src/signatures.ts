// Signatures the platform puts on what it sends an app: webhooks and rate requests carry
// `X-SVC-Hmac-SHA256`, the base64 HMAC-SHA256 of the raw body bytes with the app's client secret
// (C8.3, C15.3). Checked over the bytes exactly as received (never a re-serialised JSON), in
// constant time, with the length compared first so a short or missing header cannot throw.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-svc-hmac-sha256';

export function signBody(body: string | Uint8Array, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

/**
 * The key every check needs. An empty one (an unset `CLIENT_SECRET` read as "") would make the
 * checks hold for anyone who signs with the empty key: a configuration error, thrown, never a pass.
 */
export function assertSecret(secret: unknown, what = 'secret'): asserts secret is string {
  if (typeof secret !== 'string' || secret === '') throw new TypeError(`${what} is missing: give the app's client secret (or the subscription's secret)`);
}

/** Whether `signature` (the header's value) is the body's signature with `secret`. */
export function verifyBodySignature(body: string | Uint8Array, signature: string | null | undefined, secret: string): boolean {
  assertSecret(secret);
  if (typeof signature !== 'string' || signature === '') return false;
  const expected = Buffer.from(signBody(body, secret));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
