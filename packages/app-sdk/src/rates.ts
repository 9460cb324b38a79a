// Live shipping rates (C15.3): the request a shipping app receives, and its answer.
import { verifyMessage, type Refusal, type VerifiedMessage } from './webhooks.js';

export interface RateAddress {
  country: string | null;
  province: string | null;
  city: string | null;
  zip: string | null;
  address1: string | null;
  address2: string | null;
  name?: string | null;
  company?: string | null;
  phone: string | null;
}

export interface RateItem {
  name: string;
  sku: string | null;
  quantity: number;
  /** Per unit. */
  grams: number;
  /** Per unit, an integer in minor units. */
  price: number;
  requires_shipping: boolean;
  product_id: number;
  variant_id: number | null;
}

export interface RateRequest {
  rate: { origin: RateAddress; destination: RateAddress; items: RateItem[]; currency: string; locale: string };
}

export interface RateOffer {
  service_name: string;
  service_code: string;
  /** In the request's currency, an integer in minor units. */
  total_price: number | string;
  currency: string;
  description?: string;
  min_delivery_date?: string;
  max_delivery_date?: string;
}

/** Verifies and parses a rate request (topic `shipping/rates`). */
export function verifyRateRequest(input: { rawBody: string | Uint8Array; headers: Parameters<typeof verifyMessage>[0]['headers']; secret: string }): VerifiedMessage<RateRequest> | Refusal {
  return verifyMessage<RateRequest>(input);
}

/** The JSON body of the answer (C15.3: `{ rates: [...] }`). */
export function rateReply(rates: readonly RateOffer[]): string {
  return JSON.stringify({ rates });
}
