// How the platform signs what it sends to apps (app-api.md Delivery headers and Signature):
// webhooks, and the shipping rate requests of C15.3. A module of its own, with nothing but
// node:crypto, so the shipping rate requests' thread (src/checkout/rate-requests.worker.ts) loads
// only this.
import { createHmac } from 'node:crypto';
import { API_VERSION } from '../api-version.js';

/** The stored signature header of a delivery (made at creation, or by the last attempt that re-signed it). */
export const SIGNATURE_HEADER = 'X-SVC-Hmac-SHA256';

/** app-api.md Signature: base64 HMAC-SHA256 over the exact bytes sent. */
export function signBody(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body, 'utf8').digest('base64');
}

/**
 * The headers every signed request of the platform carries (app-api.md Delivery headers and
 * Signature): webhooks, and the shipping rate requests of C15.3 (topic `shipping/rates`).
 */
export function signedHeaders(secret: string, body: string, topic: string, shopDomain: string): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    [SIGNATURE_HEADER]: signBody(secret, body),
    'X-SVC-Topic': topic,
    'X-SVC-Shop-Domain': shopDomain,
    'X-SVC-Api-Version': API_VERSION,
  };
}
