// A shipping app's answer to a rate request (C15.3), read defensively: the app is a stranger on the
// network. A body that is not JSON, or whose `rates` is not an array, is malformed (no rates from
// that app); within it, each rate that is not well formed is dropped on its own, and the first
// MAX_RATES_PER_APP of those kept are used.
import { fromCurrencyMinor } from './currency-minor.js';
import { isStorableText, storableText } from '../functions/runtime/storable-text.js';
import { cutTo, longerThan } from '../text.js';

export const MAX_RATES_PER_APP = 20;
/** Longest service name or code kept; a longer one makes the rate malformed. */
export const MAX_SERVICE_NAME_CHARS = 255;
const MAX_NAME = MAX_SERVICE_NAME_CHARS;
/** Longest description kept; a longer one is cut (it is only shown to the buyer). */
const MAX_DESCRIPTION = 1000;
/** Longest delivery date string kept; a longer one (or another type) becomes null. */
const MAX_DATE = 64;

/** One rate of an app's reply as validated: app-neutral (the handle is added when it is offered). */
export interface AppRate {
  service_name: string;
  service_code: string;
  /** In hundredths, the service's minor units. */
  price_minor: number;
  description: string | null;
  min_delivery_date: string | null;
  max_delivery_date: string | null;
}

/** A name or code the checkout can show and store (storable-text.ts): an app's reply is never trusted to be. */
const isText = (v: unknown, max: number): v is string => typeof v === 'string' && v.trim() !== '' && !longerThan(v, max) && isStorableText(v);

/** `total_price`: a whole number from 0, as a JSON integer or an integer string; else null. */
function wholeMinor(v: unknown): bigint | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : null;
  if (typeof v === 'string' && /^\d{1,30}$/.test(v)) return BigInt(v);
  return null;
}

function readRate(raw: unknown, currency: string): AppRate | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  if (!isText(r.service_name, MAX_NAME) || !isText(r.service_code, MAX_NAME)) return null;
  if (typeof r.currency !== 'string' || r.currency.trim().toUpperCase() !== currency) return null;
  const minor = wholeMinor(r.total_price);
  const price = minor === null ? null : fromCurrencyMinor(minor, currency);
  if (price === null) return null;
  const date = (v: unknown) => (typeof v === 'string' && !longerThan(v, MAX_DATE) && isStorableText(v) ? v : null);
  return {
    service_name: r.service_name,
    service_code: r.service_code,
    price_minor: price,
    // Cut to its characters (code points, never half a pair); what is unstorable becomes U+FFFD.
    description: typeof r.description === 'string' ? storableText(cutTo(r.description, MAX_DESCRIPTION)) : null,
    min_delivery_date: date(r.min_delivery_date),
    max_delivery_date: date(r.max_delivery_date),
  };
}

/**
 * The well-formed rates in `currency` (upper case), the first MAX_RATES_PER_APP of them; a second
 * rate with a service code already taken is dropped (the buyer chooses by handle, which the code
 * makes). Null when the body itself is malformed.
 */
export function parseRateReply(body: string, currency: string): AppRate[] | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  const rates = (parsed as { rates?: unknown } | null)?.rates;
  if (typeof parsed !== 'object' || !Array.isArray(rates)) return null;
  const out: AppRate[] = [];
  const codes = new Set<string>();
  for (const raw of rates) {
    const rate = readRate(raw, currency);
    if (!rate || codes.has(rate.service_code)) continue;
    codes.add(rate.service_code);
    out.push(rate);
    if (out.length === MAX_RATES_PER_APP) break;
  }
  return out;
}
