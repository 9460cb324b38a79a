// A shipping app's answer to a rate request (C15.3), read defensively: the app is a stranger on the
// network. A body that is not JSON, or whose `rates` is not an array, is malformed (no rates from
// that app); within it, each rate that is not well formed is dropped on its own, and the first
// MAX_RATES_PER_APP of those kept are used. One reader says both what a checkout keeps and, for the
// developer's rate test (rate-test.ts), why each thing it drops is dropped.
import { isoCurrency } from '../currencies.js';
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

/**
 * Why a name or code is not one the checkout can show and store (storable-text.ts), or null when it
 * is: an app's reply is never trusted to be. Null is the common case and costs no string.
 */
function textFault(v: unknown, field: string, max: number): string | null {
  if (typeof v === 'string' && v.trim() !== '' && !longerThan(v, max) && isStorableText(v)) return null;
  if (v === undefined || v === null) return `.${field} is missing`;
  if (typeof v !== 'string') return `.${field} must be a string, not ${kindOf(v)}`;
  if (v.trim() === '') return `.${field} is blank`;
  if (longerThan(v, max)) return `.${field} is longer than ${max} characters`;
  return `.${field} holds a NUL or a lone surrogate, which the checkout cannot store`;
}

/** A JSON value's kind as a reason names it. */
const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

/** An app's value quoted in a reason: JSON, and cut, as a reply may hold anything. */
const quoted = (v: unknown): string => {
  const json = JSON.stringify(v) ?? String(v);
  return json.length > 40 ? `${json.slice(0, 40)}...` : json;
};

/** `total_price`: a whole number from 0, as a JSON integer or an integer string; else null. */
function wholeMinor(v: unknown): bigint | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : null;
  if (typeof v === 'string' && /^\d{1,30}$/.test(v)) return BigInt(v);
  return null;
}

/**
 * One rate read as the checkout reads it: the rate, or why it is dropped, as the tail of a reason
 * that `rates[i]` begins (`.total_price must be ...`, `: currency "EUR" is not ...`). The reason is
 * only made for a rate that is dropped, so a well-formed reply costs what it did before reasons.
 */
function readRate(raw: unknown, currency: string): AppRate | string {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return ` must be an object, not ${kindOf(raw)}`;
  const r = raw as Record<string, unknown>;
  const textWrong = textFault(r.service_name, 'service_name', MAX_NAME) ?? textFault(r.service_code, 'service_code', MAX_NAME);
  if (textWrong !== null) return textWrong;
  if (typeof r.currency !== 'string') return r.currency === undefined ? '.currency is missing' : `.currency must be a string, not ${kindOf(r.currency)}`;
  if (isoCurrency(r.currency) !== currency) return `: currency ${quoted(r.currency)} is not the checkout's ${currency}`;
  const minor = wholeMinor(r.total_price);
  if (minor === null) return '.total_price must be a whole number of minor units, as an integer or a string of digits';
  const price = fromCurrencyMinor(minor, currency);
  if (price === null) return `.total_price ${minor} is not an amount a checkout in ${currency} can hold (finer than two decimals, or too large)`;
  const date = (v: unknown) => (typeof v === 'string' && !longerThan(v, MAX_DATE) && isStorableText(v) ? v : null);
  return {
    service_name: r.service_name as string,
    service_code: r.service_code as string,
    price_minor: price,
    // Cut to its characters (code points, never half a pair); what is unstorable becomes U+FFFD.
    description: typeof r.description === 'string' ? storableText(cutTo(r.description, MAX_DESCRIPTION)) : null,
    min_delivery_date: date(r.min_delivery_date),
    max_delivery_date: date(r.max_delivery_date),
  };
}

/** Hears of each rate a reply held that the checkout does not offer: its index, and why (`rates[1]: ...`). */
export type OnRateDropped = (index: number, reason: string) => void;

/**
 * The checkout's one reader of a reply: the well-formed rates in `currency` (upper case), the first
 * MAX_RATES_PER_APP of them; a second rate with a service code already taken is dropped (the buyer
 * chooses by handle, which the code makes). When the body itself is malformed, why (a string).
 * `onDrop`, when given, hears of every rate dropped, those past the first MAX_RATES_PER_APP too;
 * without it (a checkout's quote) nothing past them is read.
 */
export function readRateReply(body: string, currency: string, onDrop?: OnRateDropped): AppRate[] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    return `the reply is not JSON (${(err as Error).message})`;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return `the reply must be a JSON object with a "rates" array, not ${kindOf(parsed)}`;
  const rates = (parsed as { rates?: unknown }).rates;
  if (!Array.isArray(rates)) return rates === undefined ? 'the reply has no "rates" array' : `the reply's "rates" must be an array, not ${kindOf(rates)}`;
  const out: AppRate[] = [];
  /** The index of the rate that holds each service code. */
  const codes = new Map<string, number>();
  let i = 0;
  for (; i < rates.length && out.length < MAX_RATES_PER_APP; i++) {
    const rate = readRate(rates[i], currency);
    if (typeof rate === 'string') {
      onDrop?.(i, `rates[${i}]${rate}`);
      continue;
    }
    const holder = codes.get(rate.service_code);
    if (holder !== undefined) {
      onDrop?.(i, `rates[${i}]: service_code ${quoted(rate.service_code)} is already rates[${holder}]'s`);
      continue;
    }
    codes.set(rate.service_code, i);
    out.push(rate);
  }
  if (onDrop) for (; i < rates.length; i++) onDrop(i, `rates[${i}]: only the first ${MAX_RATES_PER_APP} well-formed rates are kept`);
  return out;
}

/** The rates a checkout keeps of a reply (`readRateReply`); null when the body is malformed. */
export function parseRateReply(body: string, currency: string): AppRate[] | null {
  const read = readRateReply(body, currency);
  return typeof read === 'string' ? null : read;
}
