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

/** Why `verifyRateRequest` refused: `verifyMessage`'s reasons, or a signed delivery of another topic. */
export type RateRequestRefusal = Refusal | { ok: false; reason: 'not a rate request'; topic: string };

/**
 * Verifies and parses a rate request: signed, and of topic `shipping/rates`. Another signed delivery
 * (an `orders/create` sent to the same address) is refused (400), not typed as a rate request.
 */
export function verifyRateRequest(input: { rawBody: string | Uint8Array; headers: Parameters<typeof verifyMessage>[0]['headers']; secret: string }): VerifiedMessage<RateRequest> | RateRequestRefusal {
  const verdict = verifyMessage<RateRequest>(input);
  if (verdict.ok && verdict.topic !== 'shipping/rates') return { ok: false, reason: 'not a rate request', topic: verdict.topic };
  return verdict;
}

/** The JSON body of the answer (C15.3: `{ rates: [...] }`). */
export function rateReply(rates: readonly RateOffer[]): string {
  return JSON.stringify({ rates });
}

/**
 * Decimals of the currency's minor unit as the platform reads `total_price` and `price` (C15.3):
 * ISO 4217's (the platform's src/currencies.ts, kept equal by test/app-sdk-receiving.test.ts), 2
 * for every code not listed here. Not `Intl`'s: CLDR gives 0 where ISO gives 2 or 3 (HUF, IDR, COP,
 * PKR, IQD, ...), and a price in those units is read as a hundredth of what was meant.
 */
const MINOR_DIGITS: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

/** Decimals of the currency's minor unit: 2 for USD, 0 for JPY, 3 for BHD (ISO 4217, as the platform reads it). */
export function currencyDigits(currency: string): number {
  return MINOR_DIGITS[currency.trim().toUpperCase()] ?? 2;
}

/** An amount in the currency's major units (`6.4`) as the whole minor units a rate's `total_price` is (640 USD, 6 JPY, 6400 BHD), rounded half up. */
export function toMinorUnits(amount: number, currency: string): number {
  // toPrecision first: 1.005 * 100 is 100.49999999999999 in binary floating point.
  return Math.round(Number((amount * 10 ** currencyDigits(currency)).toPrecision(15)));
}

/** Minor units (a rate request's item `price`) in the currency's major units: 1999 USD is 19.99. */
export function fromMinorUnits(minor: number, currency: string): number {
  return minor / 10 ** currencyDigits(currency);
}
