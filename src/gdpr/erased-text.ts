// The erasure of a redacted customer (C9) in the text that functions and shipping apps wrote onto a
// checkout: what its cart functions last gave (`function_results`, C11.4) and the rate the buyer
// chose (a delivery function may have renamed it, a shipping app titled it). A function may echo the
// buyer's name, street or email into a validation message or a payment method's title; those words
// become ERASED. Only the free text changes: handles, line ids, targets, codes and amounts are the
// checkout's working parts (its totals and its GET are computed from them) and are never touched.
// Pure: no database.
import { STORE_PAYMENT_METHODS } from '../checkout/payment-methods.js';

/** What an erased value is replaced with. */
export const ERASED = '[redacted]';

const WORD_CHAR = /[\p{L}\p{M}\p{N}_]/u;
const DIGIT = /\p{N}/u;
const WORD = String.raw`[\p{L}\p{M}\p{N}_]`;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether a value is worth looking for. A single character, or a number of one or two digits (an
 * address2 "4", a flat "12"), identifies no one without the rest of the address, and would match
 * the counts and prices that messages also hold ("Buy 4", "4.99"): such values are not searched.
 * Anything with a letter from two characters on (a surname "Li"), anything else from three.
 */
function searchable(value: string): boolean {
  const length = [...value].length;
  return length >= (/\p{L}/u.test(value) ? 2 : 3);
}

/**
 * One expression finding every `values` (trimmed, any case) as a whole token: not inside a longer
 * word or number. At an edge that is a letter or digit the neighbour must not be one; at an edge
 * that is a digit, a decimal point or comma followed by a digit is part of the number too, so a zip
 * "123" never matches in "123.45" and "4.99" stays whole. An email is matched anywhere. Longer
 * values first, so "1 Main Street" goes as one. Null when nothing is searchable.
 */
export function erasedValuesPattern(values: Iterable<string | null | undefined>): RegExp | null {
  const kept = [...new Set([...values].map((v) => (typeof v === 'string' ? v.trim() : '')).filter((v) => v && searchable(v)))];
  if (!kept.length) return null;
  kept.sort((a, b) => b.length - a.length);
  return new RegExp(kept.map(tokenPattern).join('|'), 'giu');
}

function tokenPattern(value: string): string {
  // An email is distinctive as it is, and was matched anywhere before (a "to_" or "x." in front of
  // it must not keep it): no edges asked for.
  if (value.includes('@')) return escape(value);
  const chars = [...value];
  const first = chars[0];
  const last = chars[chars.length - 1];
  let before = '';
  let after = '';
  if (WORD_CHAR.test(first)) before = `(?<!${WORD})` + (DIGIT.test(first) ? String.raw`(?<!\p{N}[.,])` : '');
  if (WORD_CHAR.test(last)) after = `(?!${WORD})` + (DIGIT.test(last) ? String.raw`(?![.,]\p{N})` : '');
  return `${before}${escape(value)}${after}`;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** A string with `pattern` replaced by ERASED; any other value as it is. */
const erase = (v: unknown, pattern: RegExp) => (typeof v === 'string' ? v.replace(pattern, ERASED) : v);

const STORE_TITLES = new Map(STORE_PAYMENT_METHODS.map((m) => [m.handle, m.title]));

/**
 * `function_results` (type FunctionResults, src/checkout/checkout-functions.ts) with `pattern`
 * replaced in the text the functions wrote, and nothing else:
 * - `paymentMethods[].title`, unless it is still the store's own title for its handle (the
 *   functions only rename; `handle` is a code);
 * - `validationErrors[].message` (`target` is `cart` or a line id);
 * - `discountOutputs[].operations[].{orderDiscountAdd,productDiscountAdd}.message`, and the
 *   `lineIds` that name none of the checkout's lines (`lineIdsOfCheckout`): any text the function
 *   wrote, which C11.3 ignores; those naming a line are codes, and `value` is the amount.
 * Anything else in the stored value (an older shape) is kept as it is.
 */
export function scrubFunctionResultsText(results: unknown, pattern: RegExp, lineIdsOfCheckout: ReadonlySet<string>): unknown {
  if (!isObject(results)) return results;
  const text = (v: unknown) => erase(v, pattern);
  const out: Record<string, unknown> = { ...results };
  if (Array.isArray(results.paymentMethods)) {
    out.paymentMethods = results.paymentMethods.map((m) =>
      isObject(m) && STORE_TITLES.get(String(m.handle)) !== m.title ? { ...m, title: text(m.title) } : m);
  }
  if (Array.isArray(results.validationErrors)) {
    out.validationErrors = results.validationErrors.map((e) => (isObject(e) ? { ...e, message: text(e.message) } : e));
  }
  if (Array.isArray(results.discountOutputs)) {
    const discount = (spec: unknown) => {
      if (!isObject(spec)) return spec;
      const next: Record<string, unknown> = { ...spec, message: text(spec.message) };
      if (Array.isArray(spec.lineIds)) next.lineIds = spec.lineIds.map((id) => (typeof id === 'string' && lineIdsOfCheckout.has(id) ? id : text(id)));
      return next;
    };
    out.discountOutputs = results.discountOutputs.map((o) => {
      if (!isObject(o) || !Array.isArray(o.operations)) return o;
      return {
        ...o,
        operations: o.operations.map((op) => (isObject(op)
          ? Object.fromEntries(Object.entries(op).map(([kind, spec]) => [kind, kind === 'orderDiscountAdd' || kind === 'productDiscountAdd' ? discount(spec) : spec]))
          : op)),
      };
    });
  }
  return out;
}

/**
 * The chosen rate (`shipping_rate`, ShippingRate in src/checkout/rate.ts) with `pattern` replaced
 * in its `title` and `description`; `handle`, `code`, `source`, `price` and the dates stay, so
 * completion still finds it among the offered rates at its price.
 */
export function scrubShippingRate(rate: unknown, pattern: RegExp): unknown {
  if (!isObject(rate)) return rate;
  const text = (v: unknown) => erase(v, pattern);
  return { ...rate, title: text(rate.title), ...('description' in rate ? { description: text(rate.description) } : {}) };
}

/** The address keys an erasure keeps: the region that tax and sales-by-region accounting need. */
export const REGION_KEYS = ['province', 'province_code', 'country', 'country_code'] as const;

/** Every value of an address that its erasure empties (every string but the region's). */
export function personalAddressValues(address: unknown): string[] {
  if (!isObject(address)) return [];
  return Object.entries(address)
    .filter(([k, v]) => !(REGION_KEYS as readonly string[]).includes(k) && typeof v === 'string')
    .map(([, v]) => v as string);
}

/**
 * An order's copies of what the checkout's functions and shipping apps wrote (C11.3, C15.1
 * completion): the shipping line's `title` (the chosen rate's, as a delivery function renamed it or
 * a shipping app titled it) and each automatic discount's `title` (the discount function's message),
 * with `pattern` replaced. Codes, values and amounts stay, so the order's figures do not move.
 * Only the keys whose text changed are returned, for the UPDATE to set.
 */
export function scrubOrderText(
  order: { shipping_line: unknown; automatic_discounts: unknown },
  pattern: RegExp | null,
): { shipping_line?: unknown; automatic_discounts?: unknown } {
  const out: { shipping_line?: unknown; automatic_discounts?: unknown } = {};
  if (!pattern) return out;
  const text = (v: unknown) => erase(v, pattern);
  if (isObject(order.shipping_line)) {
    const line = { ...order.shipping_line, title: text(order.shipping_line.title) };
    if (line.title !== order.shipping_line.title) out.shipping_line = line;
  }
  if (Array.isArray(order.automatic_discounts)) {
    const discounts = order.automatic_discounts.map((d) => (isObject(d) ? { ...d, title: text(d.title) } : d));
    if (JSON.stringify(discounts) !== JSON.stringify(order.automatic_discounts)) out.automatic_discounts = discounts;
  }
  return out;
}
